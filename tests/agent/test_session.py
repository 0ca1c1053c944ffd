"""The event log is the source of truth: resume rebuilds the exact view, a torn line is survived."""

from __future__ import annotations

import json
import os

import pytest

from agent_cli.core.errors import SessionError
from agent_cli.session.log import SessionStore, read_events

from .helpers import make_session, run
from .test_loop import FIX_TASK


def _bytes(session) -> str:
    return json.dumps(session.engine.build_request().to_api(), sort_keys=True)


async def test_resume_rebuilds_the_identical_view_and_request(workspace):
    session = make_session(workspace, FIX_TASK)
    await run(session, "fix add()")
    before = _bytes(session)
    session.close()
    resumed = make_session(workspace, [{"text": "still here"}], resume=session.session_id)
    assert resumed.session_id == session.session_id
    assert resumed.engine.messages == session.engine.messages
    assert _bytes(resumed) == before
    events = await run(resumed, "and now?")
    assert events[-1].result == "still here"
    # the earlier conversation was sent with the new prompt
    sent = resumed.provider.requests[-1].messages
    assert any("fix add()" in json.dumps(m) for m in sent)
    assert len(read_events(resumed.log.path).events) > len(read_events(session.log.path).events) - 1


async def test_a_torn_last_line_is_set_aside_once_and_the_next_event_starts_a_fresh_line(workspace):
    session = make_session(workspace, FIX_TASK)
    await run(session, "fix add()")
    session.close()
    fragment = '{"type": "assistant", "message": {"role": "assis'
    with session.log.path.open("a") as fh:
        fh.write(fragment)  # crash mid-write
    resumed = make_session(workspace, [{"text": "fine"}], resume=session.session_id)
    assert any("cut off" in w and "events.jsonl.torn" in w for w in resumed.warnings)
    assert (session.log.path.parent / "events.jsonl.torn").read_text() == fragment + "\n"
    assert (session.log.path.parent / "events.jsonl.torn").stat().st_mode & 0o777 == 0o600  # as the log
    assert resumed.engine.messages == session.engine.messages
    events = await run(resumed, "go on")
    assert events[-1].result == "fine"
    resumed.close()
    loaded = read_events(session.log.path)
    assert loaded.warnings == []  # every line is whole: the new events did not land on the fragment
    assert [e.get("prompt") for e in loaded.events if e["type"] == "user"] == ["fix add()", "go on"]
    again = make_session(workspace, [], resume=session.session_id)
    assert not any("cut off" in w for w in again.warnings)  # reported once


async def test_a_corrupt_middle_line_is_skipped_not_fatal(workspace):
    session = make_session(workspace, [{"text": "one"}])
    await run(session, "hi")
    session.close()
    lines = session.log.path.read_text().splitlines()
    lines.insert(1, "\x00garbage{")
    session.log.path.write_text("\n".join(lines) + "\n")
    loaded = read_events(session.log.path)
    assert any("corrupt line 2" in w for w in loaded.warnings)
    assert [e["type"] for e in loaded.events][:2] == ["session_start", "user"]


async def test_sessions_are_listed_with_first_prompt_and_turns(workspace):
    first = make_session(workspace, [{"text": "a"}, {"text": "b"}])
    await run(first, "first task")
    await run(first, "second prompt")
    first.close()
    second = make_session(workspace, [{"text": "c"}])
    await run(second, "other task")
    store = SessionStore(workspace / ".agent" / "sessions")
    infos = {i.id: i for i in store.list()}
    assert infos[first.session_id].first_prompt == "first task"
    assert infos[first.session_id].turns == 2
    older = (first.log.path.stat().st_mtime - 10,) * 2  # the clock's grain is coarser than two runs
    os.utime(first.log.path, older)
    assert store.latest() == second.session_id  # the one used last
    assert store.resolve(first.session_id[:-2]) == first.session_id


async def test_a_sessions_turns_are_the_prompts_left_after_its_rewinds(workspace):
    """The picker and `agent sessions` count what `--resume` shows: a session of four prompts rewound
    to before the second has one turn; rewound to before the first it has none, yet --continue
    still takes it (it was used)."""
    session = make_session(workspace, [{"text": t} for t in "abcd"])
    for prompt in ("one", "two", "three", "four"):
        await run(session, prompt)
    await run(session, "/rewind 2 conversation")
    store = SessionStore(workspace / ".agent" / "sessions")
    info = store.info(session.session_id)
    assert (info.turns, info.first_prompt) == (1, "one")
    await run(session, "/rewind 1 conversation")
    assert store.info(session.session_id).turns == 0
    assert store.latest() == session.session_id


async def test_our_files_stay_out_of_git_status(workspace):
    make_session(workspace, [])
    exclude = (workspace / ".git" / "info" / "exclude").read_text()
    assert ".agent/" in exclude and ".session_memory.md" in exclude


@pytest.mark.parametrize("planted", ["exclude", "info", "fifo"])
async def test_an_exclude_a_command_linked_elsewhere_is_left_alone_and_said(workspace, tmp_path, planted):
    """A sandboxed `ln -sf ~/x.json .git/info/exclude`: the next start appended to the link's target
    outside the workspace (finding H5). Now that exclude is left alone, with a warning."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = elsewhere / "exclude"
    outside.write_text('{"a": 1}\n')
    info = workspace / ".git" / "info"
    if planted == "exclude":
        (info / "exclude").symlink_to(outside)
    elif planted == "info":
        info.rmdir()
        info.symlink_to(elsewhere, target_is_directory=True)
    else:
        os.mkfifo(info / "exclude")  # would hang a read
    session = make_session(workspace, [{"text": "hi"}])
    assert outside.read_text() == '{"a": 1}\n'
    events = await run(session, "hello")
    said = [e.text for e in events if type(e).__name__ == "Notice" and "exclude" in e.text]
    assert len(said) == 1 and "left alone" in said[0], said


def test_a_write_that_failed_half_way_leaves_no_fragment_for_the_next_event(tmp_path):
    from agent_cli.session.log import EventLog

    log = EventLog(tmp_path / "s")
    log.append("user", prompt="one")
    real = log._fh

    class DiskFull:
        def write(self, data: bytes) -> int:
            real.write(data[: len(data) // 2])
            real.flush()
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            real.close()

        def fileno(self) -> int:
            return real.fileno()

    log._fh = DiskFull()  # type: ignore[assignment]
    with pytest.raises(SessionError) as failed:
        log.append("user", prompt="two" * 50)
    assert str(failed.value) == f"cannot write the session log: No space left on device ({log.path})"
    assert log.failure is not None and log.path.read_text().endswith('"one"}\n')  # the half is cut off
    log.append("user", prompt="three")  # the disk has room again
    log.close()
    loaded = read_events(log.path)
    assert loaded.warnings == [] and [e["prompt"] for e in loaded.events] == ["one", "three"]
    assert not (tmp_path / "s" / "events.jsonl.torn").exists() and log.warnings == []
