"""One writer per session, a session on disk only once it has a prompt, a huge prompt stored once,
and commands left running by a dead process found again and ended (only when still theirs)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from agent_cli.core.errors import SessionError
from agent_cli.session.lock import SessionLocked
from agent_cli.session.log import SessionStore
from agent_cli.session.opening import refuse_links
from agent_cli.session.processes import ProcessRecords, live_members, proc_stat
from agent_cli.tools.base import ToolContext
from agent_cli.tools.bash import run_command

from .helpers import make_session, run


def _disk_bytes(directory) -> int:
    """Bytes the directory takes, each file counted once however many names (hard links) it has."""
    seen, total = set(), 0
    for path in directory.rglob("*"):
        stat = path.stat()
        if path.is_file() and (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_size
    return total


async def test_a_session_is_on_disk_only_after_its_first_prompt(workspace):
    session = make_session(workspace, [{"text": "hi"}])
    session.set_model("scripted")  # a change before any prompt does not create the session
    assert not session.session_dir.exists() and session.conversation() == []
    await run(session, "hello")
    types = [json.loads(line)["type"] for line in session.log.path.read_text().splitlines()]
    assert types[:3] == ["session_start", "config", "user"]
    session.close()
    unused = make_session(workspace, [])
    unused.close()
    store = SessionStore(workspace / ".agent" / "sessions")
    assert store.ids() == [session.session_id] and store.latest() == session.session_id


async def test_continue_skips_a_newer_session_without_a_turn(workspace):
    session = make_session(workspace, [{"text": "hi"}])
    await run(session, "hello")
    session.close()
    empty = workspace / ".agent" / "sessions" / "29991231-000000-aaaaaa"  # left by an older version
    empty.mkdir()
    (empty / "events.jsonl").write_text('{"type":"session_start","ts":1}\n')
    assert SessionStore(workspace / ".agent" / "sessions").latest() == session.session_id


async def test_a_second_writer_is_refused_with_the_pid_and_the_fork_hint(workspace):
    first = make_session(workspace, [{"text": "hi"}])
    await run(first, "hello")
    with pytest.raises(SessionLocked) as refused:
        make_session(workspace, [], resume=first.session_id)
    assert f"in use by pid {os.getpid()}" in str(refused.value) and "--fork-session" in str(refused.value)
    fork = make_session(workspace, [{"text": "in the copy"}], resume=first.session_id, fork=True)
    assert fork.session_id != first.session_id and fork.engine.messages == first.engine.messages
    events = await run(fork, "go on")
    assert events[-1].result == "in the copy"
    first.close()
    again = make_session(workspace, [], resume=first.session_id)  # free once the holder closed it
    assert len(again.engine.messages) == 2


async def test_resume_of_a_session_in_use_is_an_error_and_this_one_stays_open(workspace):
    other = make_session(workspace, [{"text": "other"}])
    await run(other, "elsewhere")
    mine = make_session(workspace, [{"text": "a"}, {"text": "b"}])
    await run(mine, "mine")
    events = await run(mine, f"/resume {other.session_id}")
    result = next(e for e in events if e.kind == "command")
    assert result.is_error and "in use by pid" in result.text and "--fork-session" in result.text
    assert mine.session_id != other.session_id
    events = await run(mine, "still mine")  # the log is still open and written
    assert events[-1].result == "b" and "still mine" in mine.log.path.read_text()


async def test_a_ten_megabyte_prompt_is_stored_once(workspace):
    prompt = "x" * 10_000_000
    session = make_session(workspace, [{"text": "read it"}, {"text": "still there"}])
    await run(session, prompt)
    session.close()
    assert _disk_bytes(session.session_dir) < 10_500_000  # was 30 MB: log + paste + ledger's copy
    resumed = make_session(workspace, [], resume=session.session_id)
    assert resumed.dir_store.get("paste-1") == prompt  # the whole prompt can be recalled
    assert resumed.engine.messages == session.engine.messages
    assert resumed.engine.ledger.to_json() == session.engine.ledger.to_json()
    assert resumed.engine.ledger.messages[0] == "[pasted text, 10,000,000 chars: recall ref paste-1]"


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def test_a_recorded_group_is_ended_on_the_next_start_only_while_it_is_still_that_command(tmp_path):
    records = ProcessRecords(tmp_path)
    mine, stranger = _sleeper(), _sleeper()
    try:
        records.started(mine.pid, "sleep 60")
        records.started(stranger.pid, "sleep 60")
        for path in (tmp_path / "running").glob("*.json"):  # the agent that wrote them is gone
            path.write_text(json.dumps({**json.loads(path.read_text()), "agent_start": -1}))
        record = tmp_path / "running" / f"{stranger.pid}.json"
        data = json.loads(record.read_text())
        record.write_text(json.dumps({**data, "start": data["start"] - 1}))  # the pid was reused
        notes = ProcessRecords(tmp_path).reap()
        mine.wait(timeout=30)
        assert mine.returncode is not None and live_members(mine.pid) == []
        assert stranger.poll() is None  # not the recorded command: left alone
        assert len(notes) == 1 and f"process group {mine.pid}" in notes[0]
        assert not list((tmp_path / "running").glob("*.json"))
    finally:
        for proc in (mine, stranger):
            proc.kill()
            proc.wait()


async def test_bash_records_its_process_group_while_it_runs(workspace):
    seen: list[tuple[str, int, bool]] = []

    class Recorder:
        def started(self, pgid: int, command: str) -> None:
            seen.append(("started", pgid, proc_stat(pgid) is not None))
            (workspace / "go").touch()  # the command waits for this: it is running while we look

        def ended(self, pgid: int) -> None:
            seen.append(("ended", pgid, False))

    ctx = ToolContext(workspace, processes=Recorder())
    result = await run_command("until [ -e go ]; do sleep 0.05; done; echo hi", 60, ctx)
    assert result.output.strip() == "hi"
    assert [s[0] for s in seen] == ["started", "ended"] and seen[0][1] == seen[1][1] and seen[0][2]


def test_proc_stat_reads_the_start_time_of_a_live_process():
    stat = proc_stat(os.getpid())
    assert stat is not None and stat.start > 0 and stat.state in "RS"
    assert proc_stat(2**22 + 7) is None  # above pid_max: never a process


async def test_a_fork_keeps_the_checkpoints_so_rewind_works_in_the_copy(workspace):
    from .test_loop import FIX_TASK

    original = (workspace / "app.py").read_text()
    first = make_session(workspace, FIX_TASK)
    await run(first, "fix add()")
    assert (workspace / "app.py").read_text() != original
    fork = make_session(workspace, [], resume=first.session_id, fork=True)  # the original is still open
    said = await fork.rewind(1, "code")
    assert "restored" in said and (workspace / "app.py").read_text() == original
    first.close()
    fork.close()


async def test_a_lost_results_line_under_a_later_offload_resumes_with_the_real_results(workspace):
    """The stand-in keeps the message count, so the T0 compaction logged after the lost line still
    lands on its message: the offloaded results come back and the view checks out (debug=True)."""
    (workspace / "big.txt").write_text(("x" * 40 + "\n") * 2_000)  # a read of ~56k chars: T0
    read = {"tool_calls": [{"name": "read_file", "input": {"path": "big.txt"}}]}
    session = make_session(workspace, [read, {"text": "read it"}])
    await run(session, "read big.txt")
    session.close()
    lines = session.log.path.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "tool_results")
    lines[number] = b"{{" + lines[number][1:]  # no longer JSON
    session.log.path.write_bytes(b"".join(lines))
    resumed = make_session(workspace, [{"text": "still here"}], resume=session.session_id)
    assert any(f"corrupt line {number + 1}" in w for w in resumed.warnings), resumed.warnings
    results = [b for m in resumed.engine.messages for b in m.tool_results()]
    assert len(results) == 1 and results[0].text.startswith("<persisted-output")
    assert resumed.engine.messages == session.engine.messages
    events = await run(resumed, "go on")
    assert events[-1].result == "still here"


async def test_a_log_that_starts_with_a_reply_gets_a_stand_in_prompt(workspace):
    session = make_session(workspace, [{"text": "one"}, {"text": "two"}])
    await run(session, "first")
    await run(session, "second")
    session.close()
    lines = session.log.path.read_text().splitlines(keepends=True)
    first_user = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "user")
    lines[first_user] = "not json\n"
    session.log.path.write_text("".join(lines))
    resumed = make_session(workspace, [{"text": "three"}], resume=session.session_id)
    first = resumed.engine.messages[0]
    assert first.role == "user" and "a message was lost here" in first.text
    assert (await run(resumed, "third"))[-1].result == "three"


async def test_continue_on_a_full_disk_is_one_clear_error(workspace, monkeypatch):
    import errno

    from agent_cli.core.errors import SessionError
    from agent_cli.session import log as log_module

    session = make_session(workspace, [{"text": "one"}])
    await run(session, "hi")
    session.close()

    def no_space(path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(log_module, "set_aside_torn_tail", no_space)
    with pytest.raises(SessionError) as failed:
        make_session(workspace, [], resume=session.session_id)
    assert str(failed.value) == f"cannot write the session log: No space left on device ({session.log.path})"
    assert "--continue" in failed.value.hint


async def test_a_lost_plain_reply_between_two_prompts_keeps_its_place(workspace):
    session = make_session(workspace, [{"text": "one"}, {"text": "two"}])
    await run(session, "first")
    await run(session, "second")
    session.close()
    lines = session.log.path.read_text().splitlines(keepends=True)
    reply = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "assistant")
    lines[reply] = lines[reply][:30] + "\n"
    session.log.path.write_text("".join(lines))
    resumed = make_session(workspace, [{"text": "three"}], resume=session.session_id)
    assert [m.role for m in resumed.engine.messages] == ["user", "assistant", "user", "assistant"]
    assert "a message was lost here" in resumed.engine.messages[1].text
    assert resumed.engine.messages[2:] == session.engine.messages[2:]
    assert (await run(resumed, "third"))[-1].result == "three"


@pytest.mark.parametrize("special", ["fifo", "link"])
def test_a_session_holding_a_fifo_or_a_link_is_refused_at_once(workspace, special):
    """A shipped session whose log is a FIFO hung `--resume` on the first read; one whose file links
    outside had it read into the context. Either is refused before anything is opened."""
    folder = workspace / ".agent" / "sessions" / "planted"
    folder.mkdir(parents=True)
    log = folder / "events.jsonl"
    os.mkfifo(log) if special == "fifo" else log.symlink_to("/etc/hostname")
    with pytest.raises(SessionError, match="special file" if special == "fifo" else "symbolic link"):
        refuse_links(folder, "planted")
    log.unlink()
    log.write_text("{}\n")
    refuse_links(folder, "planted")  # a regular log is opened
