"""Memory files: the person's own AGENTS.md / CLAUDE.md and the workspace's are read into every
session, and `/memory` lists them (to open in an editor) with the session note among them."""

from __future__ import annotations

import json

from agent_cli.core.events import CommandResult

from .helpers import make_session, run


def _user_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path / "xdg" / "agent", tmp_path / "claude"


async def test_the_persons_and_the_workspaces_memory_reach_the_first_request(
    workspace, tmp_path, monkeypatch
):
    agent_dir, claude_dir = _user_dirs(tmp_path, monkeypatch)
    claude_dir.mkdir(parents=True)
    (claude_dir / "CLAUDE.md").write_text("Always answer in British English.\n")
    (workspace / "AGENTS.md").write_text("Run the tests with `make test`.\n")
    session = make_session(workspace, [{"text": "ok"}])
    await run(session, "hi")
    sent = json.dumps(session.provider.requests[0].to_api())
    assert "Always answer in British English." in sent and "Run the tests with `make test`." in sent
    assert sent.index("British English") < sent.index("make test")  # yours first, the workspace's after
    assert not (agent_dir / "AGENTS.md").exists()  # reading creates nothing


async def test_memory_lists_the_files_to_edit_and_the_note(workspace, tmp_path, monkeypatch):
    agent_dir, _ = _user_dirs(tmp_path, monkeypatch)
    (workspace / "CLAUDE.md").write_text("# project\n")
    session = make_session(workspace, [])
    [result] = [e for e in await run(session, "/memory") if isinstance(e, CommandResult)]
    files = result.data["memory_files"]
    assert [(f["path"], f["exists"]) for f in files] == [
        (str(agent_dir / "AGENTS.md"), False),  # none of yours yet: the one saving would create
        (str(workspace / "CLAUDE.md"), True),
    ]
    assert "No session-memory note yet" in result.data["note"]
    assert "this workspace" in result.text and "yours, every workspace" in result.text
