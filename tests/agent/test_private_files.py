"""The agent's own files hold the conversation, tool output and the person's code: every session
file is 0600 and every directory we make 0700, whatever the umask (here: 0, the most open)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.core.files import atomic_write, private_dir
from agent_cli.session.processes import ProcessRecords

from .helpers import make_session, run

BIG_OUTPUT = [
    {"tool_calls": [{"name": "bash", "input": {"command": "seq 1 40000"}}]},
    {"tool_calls": [{"name": "write_file", "input": {"path": "new.py", "content": "x = 1\n"}}]},
    {"text": "done"},
]


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _open_to_others(root: Path) -> list[str]:
    """Paths under `root` (and itself) that group or others may read, write or enter."""
    found = []
    for path in [root, *root.rglob("*")]:
        if path.lstat().st_mode & 0o077:
            found.append(f"{oct(path.lstat().st_mode & 0o777)} {path.relative_to(root.parent)}")
    return found


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_session_s_files_are_private_under_any_umask(workspace, open_umask):
    session = make_session(workspace, BIG_OUTPUT)
    await run(session, "count, then write")
    session.close()
    agent_dir = workspace / ".agent"
    session_dir = session.session_dir
    assert (session_dir / "tool-results").is_dir() and list((session_dir / "tool-results").iterdir())
    assert (session_dir / "checkpoints.git" / "HEAD").is_file()  # the write took a checkpoint
    assert _open_to_others(agent_dir) == []
    assert (_mode(agent_dir), _mode(agent_dir / "sessions"), _mode(session_dir)) == (0o700,) * 3
    assert _mode(session_dir / "events.jsonl") == 0o600
    # what the tools wrote in the workspace keeps the person's umask: only our own files are private
    assert _mode(workspace / "new.py") == 0o666

    fork = make_session(workspace, [], resume=session.session_id, fork=True)
    await run(fork, "go on")  # nothing scripted: the answer is an error, the copy is written anyway
    fork.close()
    assert fork.session_dir != session_dir and _open_to_others(fork.session_dir) == []


def test_a_process_record_and_a_note_are_private(tmp_path, open_umask):
    records = ProcessRecords(tmp_path / "session")
    records.started(os.getpid(), "sleep 100")
    (record,) = (tmp_path / "session" / "running").iterdir()
    assert _open_to_others(tmp_path / "session") == [] and _mode(record) == 0o600
    atomic_write(tmp_path / "made" / "here" / "note.md", "gist", mode=0o600)
    assert _open_to_others(tmp_path / "made") == []


def test_an_older_session_file_is_tightened_and_a_workspace_file_keeps_its_mode(tmp_path, open_umask):
    from agent_cli.session.log import EventLog

    session_dir = private_dir(tmp_path / "s")
    (session_dir / "events.jsonl").write_text("")
    os.chmod(session_dir / "events.jsonl", 0o644)  # as an older version left it
    log = EventLog(session_dir)
    log.append("user", prompt="hi")
    log.close()
    assert _mode(session_dir / "events.jsonl") == 0o600
    shared = tmp_path / "shared.txt"
    shared.write_text("a")
    os.chmod(shared, 0o664)
    atomic_write(shared, "b")  # no mode: the person's file keeps its bits
    assert _mode(shared) == 0o664


def test_stored_originals_are_private(tmp_path, open_umask):
    from agent_cli.context.store import DirStore

    store = DirStore(tmp_path / "s")
    store.put("span-1", "what a compaction replaced")
    out = store.open_output("toolu_1")
    out.write("a long tool output")
    out.close()
    assert _open_to_others(tmp_path / "s") == [] and store.get("span-1") == "what a compaction replaced"


def test_private_dirs_are_exactly_0700_even_when_the_umask_takes_the_owner_s_bits(tmp_path):
    old = os.umask(0o277)
    try:
        made = private_dir(tmp_path / "a" / "b")
        atomic_write(made / "f", "x", mode=0o600)
    finally:
        os.umask(old)
    assert (_mode(tmp_path / "a"), _mode(made), _mode(made / "f")) == (0o700, 0o700, 0o600)
