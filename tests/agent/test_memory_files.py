"""Memory files: the person's own AGENTS.md / CLAUDE.md and the workspace's are read into every
session, and `/memory` lists them (to open in an editor) with the session note among them."""

from __future__ import annotations

import json

from agent_cli.core.events import CommandResult
from agent_cli.settings.memory_files import memory_files, read_user_context

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


def test_user_context_reads_agents_and_claude_md_capped(tmp_path):
    assert read_user_context(tmp_path) == ""
    (tmp_path / "AGENTS.md").write_text("Use pytest.\n")
    (tmp_path / "CLAUDE.md").write_text("line\n" * 10_000)
    text = read_user_context(tmp_path)
    assert text.startswith("# AGENTS.md\nUse pytest.")
    assert "# CLAUDE.md\nline" in text
    assert len(text) < 21_000
    assert "more chars of CLAUDE.md not shown" in text


def test_a_workspace_memory_file_linked_outside_is_not_read(tmp_path):
    """A cloned repository's AGENTS.md -> ~/.ssh/id_rsa (or CLAUDE.md -> /proc/self/environ, the agent's
    key) would put the file in the first request without the question a read outside asks."""
    workspace, outside = tmp_path / "repo", tmp_path / "home"
    workspace.mkdir()
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE-KEY-1234\n")
    (workspace / "AGENTS.md").symlink_to(outside / "id_rsa")
    (workspace / "CLAUDE.md").symlink_to("/proc/self/environ")
    text = read_user_context(workspace)
    assert "PRIVATE-KEY" not in text and "PATH=" not in text
    assert text.count("(not read: a link to a file outside the workspace)") == 2
    (workspace / "AGENTS.md").unlink()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Use pytest.\n")
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")  # a link inside the workspace is its own file
    assert read_user_context(workspace).startswith("# AGENTS.md\nUse pytest.")
    mine = outside / "AGENTS.md"  # the person's own file is theirs wherever it lives
    mine.write_text("Answer in French.\n")
    assert "Answer in French." in read_user_context(workspace, [mine])


# -- what is read: Claude Code's other project files, the folders above, imports -------------------


def _files(root, files: dict[str, str]):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_claude_code_s_other_project_files_are_read_and_listed(workspace):
    _files(
        workspace, {".claude/CLAUDE.md": "DOT-CLAUDE\n", "CLAUDE.local.md": "LOCAL\n", "CLAUDE.md": "ROOT\n"}
    )
    text = read_user_context(workspace)
    assert text == "# CLAUDE.md\nROOT\n\n# .claude/CLAUDE.md\nDOT-CLAUDE\n\n# CLAUDE.local.md\nLOCAL"
    listed = [f.label for f in memory_files(workspace, {"HOME": "/nowhere"}) if f.scope == "workspace"]
    assert listed == [
        "CLAUDE.md (this workspace)",
        ".claude/CLAUDE.md (this workspace)",
        "CLAUDE.local.md (this workspace)",
    ]


def test_run_from_a_subfolder_the_repository_s_memory_is_read_root_first(workspace, tmp_path):
    """The workspace is the folder agent runs in: from `repo/sub/deeper` the root's CLAUDE.md (and
    the one of each folder between) still applies, as in Claude Code; above the repository nothing."""
    (tmp_path / "CLAUDE.md").write_text("ABOVE-THE-REPOSITORY\n")
    _files(
        workspace,
        {"CLAUDE.md": "ROOT @docs/style.md\n", "docs/style.md": "STYLE\n", "sub/AGENTS.md": "SUB\n"},
    )
    deeper = workspace / "sub" / "deeper"
    deeper.mkdir()
    (deeper / "CLAUDE.md").write_text("HERE\n")
    assert read_user_context(deeper) == (
        "# ../../CLAUDE.md\nROOT @docs/style.md\n\n# ../../docs/style.md (imported by ../../CLAUDE.md)\nSTYLE"
        "\n\n# ../AGENTS.md\nSUB\n\n# CLAUDE.md\nHERE"
    )
    alone = tmp_path / "no-repository" / "sub"
    alone.mkdir(parents=True)
    (alone.parent / "CLAUDE.md").write_text("NOT A PROJECT OF THIS ONE\n")
    assert read_user_context(alone) == ""


def test_imports_follow_relative_paths_not_code_and_stop_at_five_hops(workspace):
    _files(
        workspace,
        {
            "CLAUDE.md": "See @docs/a.md, mail me@example.com, `@nope.md`\n```\n@docs/in-block.md\n```\n@ghost.md\n",
            "docs/a.md": "A @b.md @a.md",
            "docs/b.md": "B @c.md",
            "docs/c.md": "C @d.md",
            "docs/d.md": "D @e.md",
            "docs/e.md": "E @f.md",
            "docs/f.md": "F, six hops away",
            "docs/in-block.md": "IN-BLOCK",
            "nope.md": "IN-SPAN",
        },
    )
    text = read_user_context(workspace)
    for letter in "ABCDE":
        assert f"\n{letter}" in text
    assert "IN-BLOCK" not in text and "IN-SPAN" not in text and "six hops" not in text
    assert "# @f.md (imported by docs/e.md)\n(not read: imports go at most 5 deep)" in text
    assert "# @ghost" not in text and "example.com (" not in text  # names of no file are words
    assert text.index("# docs/a.md (imported by CLAUDE.md)") < text.index(
        "# docs/b.md (imported by docs/a.md)"
    )


def test_an_import_cannot_read_outside_the_workspace_or_past_a_rule(workspace, tmp_path):
    """A cloned repository's CLAUDE.md is the attacker's: `@../secret`, `@/abs/path`, `@~/.ssh/id_rsa`
    and a link out are not read (a line says why); nor what a deny rule of the person's covers. The
    person's own memory file may import from their home folder."""
    home = tmp_path / "home"
    _files(home, {".ssh/id_rsa": "PRIVATE-KEY", "notes.md": "MY-NOTES", "mine.md": "Mine. @~/notes.md"})
    (tmp_path / "secret.txt").write_text("SECRET-BESIDE")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "out.md").symlink_to(home / ".ssh" / "id_rsa")
    _files(workspace, {"secrets/key": "DENIED-KEY", "AGENTS.md": "ok"})
    (workspace / "CLAUDE.md").write_text(
        f"@../secret.txt @{tmp_path}/secret.txt @~/.ssh/id_rsa @docs/out.md @secrets/key @/dev/zero @AGENTS.md\n"
    )
    denied = lambda path: "denied by Read(secrets/**)" if "secrets" in str(path) else ""  # noqa: E731
    with_home = {"HOME": str(home)}
    import os
    from unittest import mock

    with mock.patch.dict(os.environ, with_home):
        text = read_user_context(workspace, [home / "mine.md"], denied)
    assert not any(s in text for s in ("PRIVATE-KEY", "SECRET-BESIDE", "DENIED-KEY"))
    assert "# mine.md" not in text and "# ~/mine.md (yours, every workspace)\nMine." in text
    assert "# ~/notes.md (imported by ~/mine.md)\nMY-NOTES" in text  # the person's own import
    for raw, why in (
        ("../secret.txt", "outside the workspace"),
        (f"{tmp_path}/secret.txt", "outside the workspace"),
        ("~/.ssh/id_rsa", "only your own memory files may import from your home folder"),
        ("docs/out.md", "outside the workspace"),
        ("secrets/key", "denied by Read(secrets/**)"),
        ("/dev/zero", "outside the workspace"),
    ):
        assert f"# @{raw} (imported by CLAUDE.md)\n(not read: {why})" in text, raw
    assert text.count("\nok") == 1  # AGENTS.md is read once, as itself


def test_imports_are_capped_each_and_in_all(workspace):
    big = "x" * 30_000
    _files(
        workspace, {"CLAUDE.md": " ".join(f"@{i}.md" for i in range(4)), **{f"{i}.md": big for i in range(4)}}
    )
    text = read_user_context(workspace)
    assert text.count("more chars of 0.md not shown") == 1 and "# 1.md (imported by CLAUDE.md)\n" in text
    for late in ("2", "3"):
        assert (
            f"# @{late}.md (imported by CLAUDE.md)\n(not read: imports hold at most 40,000 characters" in text
        )
    assert len(text) < 42_000


def test_a_repository_without_imports_reads_as_before(workspace):
    (workspace / "AGENTS.md").write_text("Use pytest.\n")
    (workspace / "CLAUDE.md").write_text("Decorate with @pytest.fixture; write to a@b.c.\n")
    assert read_user_context(workspace) == (
        "# AGENTS.md\nUse pytest.\n\n# CLAUDE.md\nDecorate with @pytest.fixture; write to a@b.c."
    )


async def test_the_session_s_deny_rules_bind_imports(workspace):
    from agent_cli.settings.config import PermissionRules

    _files(
        workspace,
        {
            "CLAUDE.md": "Keys: @secrets/key, style: @style.md\n",
            "secrets/key": "KEY-1234",
            "style.md": "TABS",
        },
    )
    session = make_session(
        workspace, [{"text": "ok"}], permissions=PermissionRules(deny=("Read(secrets/**)",))
    )
    await run(session, "hi")
    sent = json.dumps(session.provider.requests[0].to_api())
    assert "KEY-1234" not in sent and "TABS" in sent
    assert "(not read: denied by the rule Read(secrets/**) (user config))" in sent


async def test_a_memory_file_linked_to_a_denied_file_and_a_sub_agent_without_read_file_keep_the_rules(
    workspace,
):
    """`CLAUDE.local.md -> secrets/key` under `Read(secrets/**)` is not read as a memory file, as it is
    not as an import; and a sub-agent whose tools leave out read_file (`tools: Bash, Grep`) reads its
    memory under the same rules (its engine's user context held the key)."""
    from agent_cli.settings.config import PermissionRules
    from agent_cli.tools.bash import BashTool
    from agent_cli.tools.registry import ToolRegistry

    _files(workspace, {"CLAUDE.md": "Keys: @secrets/key\n", "secrets/key": "KEY-1234"})
    (workspace / "CLAUDE.local.md").symlink_to("secrets/key")
    session = make_session(
        workspace, [{"text": "ok"}], permissions=PermissionRules(deny=("Read(secrets/**)",))
    )
    await run(session, "hi")
    sent = json.dumps(session.provider.requests[0].to_api())
    assert "KEY-1234" not in sent
    assert "# CLAUDE.local.md\\n(not read: denied by the rule Read(secrets/**) (user config))" in sent
    child = session.builder.engine(
        model=session.info,
        system_prompt="child",
        tools=ToolRegistry([BashTool()]),
        store=session.dir_store,
        summarizer=session.summarizer,
        file_reader=lambda path: None,
    )
    assert "KEY-1234" not in child.user_context and "denied by the rule" in child.user_context
