"""Sessions survive real signals, torn writes and a second process, as a person would meet them:
`agent -p` processes against the local Messages-API server, which validates every request (a
tool_use without its tool_result is a 400, as with the real API). Waits are for conditions, never
fixed sleeps."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.session.processes import live_members
from tests.e2e import AGENT, agent, anthropic_env
from tests.fakeapi.replies import ToolUse, reply, text, tool_call
from tests.fakeapi.server import FakeAnthropic

PATIENCE = 90.0  # seconds a condition may take on a loaded CI machine before the test gives up


def spawn(workspace: Path, server: FakeAnthropic, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*AGENT, *args],
        cwd=workspace,
        env=anthropic_env(workspace, server),
        stdin=subprocess.DEVNULL,  # -p reads a piped stdin: never the test's own
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def sessions(workspace: Path) -> Path:
    return workspace / ".agent" / "sessions"


def running_command(workspace: Path) -> dict | None:
    """The record bash writes while a command runs (pgid and start time), once the command exists."""
    for path in sessions(workspace).glob("*/running/*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if live_members(record["pgid"]):
            return record
    return None


def events(workspace: Path, session_id: str) -> list[dict]:
    path = sessions(workspace) / session_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_results(request: dict) -> list[str]:
    return [
        block["content"] if isinstance(block["content"], str) else json.dumps(block["content"])
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def assert_all_requests_valid(server: FakeAnthropic) -> None:
    assert all(status == 200 for status in server.statuses), server.statuses


def start_sleeping(workspace: Path, server: FakeAnthropic) -> tuple[subprocess.Popen, dict]:
    server.push(tool_call("bash", {"command": "sleep 25"}, say="Waiting for the build."))
    proc = spawn(workspace, server, "-p", "wait for the build", "--permission-mode", "yolo")
    record = wait_for(lambda: running_command(workspace) or proc.poll() is not None, "bash to start")
    assert isinstance(record, dict), proc.communicate()
    return proc, record


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_sigterm_during_bash_ends_the_command_records_it_and_continue_finishes(
    workspace, fake_anthropic, sig, code
):
    server = fake_anthropic
    proc, record = start_sleeping(workspace, server)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == code, err
    assert sig.name in err and "--continue" in err
    assert live_members(record["pgid"]) == []  # no child is left
    (session_id,) = [p.name for p in sessions(workspace).iterdir()]
    logged = events(workspace, session_id)
    results = [e for e in logged if e["type"] == "tool_results"]
    assert f"agent received {sig.name}" in json.dumps(results[-1]["message"])
    assert logged[-2]["type"] == "turn_end" and logged[-2]["stop_reason"] == "interrupted"
    assert logged[-1]["type"] == "checkpoint_end"  # the end-of-turn snapshot, taken all the same
    assert not list((sessions(workspace) / session_id / "running").glob("*.json"))

    server.push(text("The build is done."))
    cont = agent(workspace, server, "-p", "go on", "--continue", "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
    data = json.loads(cont.stdout)
    assert data["result"] == "The build is done." and data["session_id"] == session_id
    assert any(sig.name in r for r in tool_results(server.requests[-1]))
    assert_all_requests_valid(server)


@pytest.mark.parametrize("sandbox", ["off", "on"])
def test_kill_9_during_bash_leaves_no_child_for_good_and_continue_finishes(
    workspace, fake_anthropic, sandbox
):
    """Unsandboxed, the orphaned `sleep` outlives the agent until the session's next start ends it;
    under bubblewrap (--die-with-parent) it dies with the agent. Either way --continue finishes."""
    server = fake_anthropic
    if sandbox == "off":
        config = workspace / ".cfg" / "agent" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('sandbox = "off"\n')
    proc, record = start_sleeping(workspace, server)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=PATIENCE)
    assert proc.returncode == -signal.SIGKILL
    if sandbox == "off":
        assert live_members(record["pgid"])  # the orphaned `sleep 25` is still there
    else:
        wait_for(lambda: not live_members(record["pgid"]), "the sandboxed command to die with the agent")

    server.push(text("Done after the crash."))
    cont = agent(workspace, server, "-p", "go on", "--continue", "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
    assert live_members(record["pgid"]) == []  # nothing left once the session is opened again
    data = json.loads(cont.stdout)
    assert data["result"] == "Done after the crash."
    if sandbox == "off":
        assert any("ended a command" in w for w in data["warnings"]), data["warnings"]
    sent = tool_results(server.requests[-1])
    assert any("interrupted: the process ended before this tool finished" in r for r in sent), sent
    assert_all_requests_valid(server)


def test_a_torn_last_line_then_three_continues_keep_every_prompt(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(text("First answer."))
    first = agent(workspace, server, "-p", "prompt 1", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    log = sessions(workspace) / session_id / "events.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole + whole.splitlines(keepends=True)[-2][:37])  # a power cut mid-write

    warnings = []
    for n in (2, 3, 4):
        server.push(text(f"Answer {n}."))
        run = agent(workspace, server, "-p", f"prompt {n}", "--continue", "--output-format", "json")
        assert run.returncode == 0, run.stderr
        warnings.append(json.loads(run.stdout)["warnings"])
    sent = json.dumps(server.requests[-1]["messages"])
    for n in (1, 2, 3, 4):
        assert f"prompt {n}" in sent
    assert any("cut off" in w for w in warnings[0]) and not any(
        "cut off" in w for w in warnings[1] + warnings[2]
    )
    assert (log.parent / "events.jsonl.torn").read_bytes() == whole.splitlines(keepends=True)[-2][:37] + b"\n"
    assert_all_requests_valid(server)


def test_two_continues_at_once_one_is_told_the_session_is_in_use(workspace, fake_anthropic):
    from tests.fakeapi.replies import Stall

    server = fake_anthropic
    server.push(text("Started."))
    assert agent(workspace, server, "-p", "start", "--output-format", "json").returncode == 0
    seen = len(server.requests)
    server.push(Stall(reply=text("First one finished.")))
    holder = spawn(workspace, server, "-p", "one", "--continue", "--output-format", "json")
    wait_for(lambda: len(server.requests) > seen or holder.poll() is not None, "the first request")
    second = agent(workspace, server, "-p", "two", "--continue")
    assert second.returncode != 0
    assert f"in use by pid {holder.pid}" in second.stderr and "--fork-session" in second.stderr
    assert "Traceback" not in second.stderr
    server.release()
    out, err = holder.communicate(timeout=PATIENCE)
    assert holder.returncode == 0, err
    assert json.loads(out)["result"] == "First one finished."

    server.push(text("Third is fine."))
    third = agent(workspace, server, "-p", "three", "--continue", "--output-format", "json")
    assert third.returncode == 0, third.stderr
    sent = json.dumps(server.requests[-1]["messages"])
    assert "start" in sent and "one" in sent and "three" in sent and '"two"' not in sent
    assert_all_requests_valid(server)


def test_fork_session_goes_on_in_a_copy_while_the_original_is_in_use(workspace, fake_anthropic):
    from tests.fakeapi.replies import Stall

    server = fake_anthropic
    server.push(tool_call("bash", {"command": "echo built"}), text("Built."))
    first = agent(workspace, server, "-p", "build it", "--permission-mode", "yolo", "--output-format", "json")
    original = json.loads(first.stdout)["session_id"]
    seen = len(server.requests)
    server.push(Stall(reply=text("Still here.")))
    holder = spawn(workspace, server, "-p", "and then?", "--continue")
    wait_for(lambda: len(server.requests) > seen or holder.poll() is not None, "the first request")
    server.push(text("In the copy."))
    fork = agent(
        workspace, server, "-p", "try another way", "--continue", "--fork-session", "--output-format", "json"
    )
    assert fork.returncode == 0, fork.stderr
    forked = json.loads(fork.stdout)["session_id"]
    assert forked != original
    sent = json.dumps(server.requests[-1]["messages"])
    assert "build it" in sent and "built" in sent and "try another way" in sent
    server.release()
    holder.communicate(timeout=PATIENCE)
    assert holder.returncode == 0
    assert not any(e.get("prompt") == "try another way" for e in events(workspace, original))
    assert events(workspace, forked)[0]["forked_from"] == original
    assert_all_requests_valid(server)


def _session_with_two_turns(workspace: Path, server: FakeAnthropic) -> tuple[str, Path]:
    """Turn 1 reads two files (one response, two tool calls); turn 2 is a plain question."""
    server.push(
        reply(ToolUse("read_file", {"path": "app.py"}), ToolUse("read_file", {"path": "README.md"})),
        text("add() subtracts."),
        text("Nothing else."),
    )
    first = agent(
        workspace, server, "-p", "read both", "--permission-mode", "yolo", "--output-format", "json"
    )
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    second = agent(workspace, server, "-p", "anything else?", "--continue", "--output-format", "json")
    assert second.returncode == 0, second.stderr
    return session_id, sessions(workspace) / session_id / "events.jsonl"


def _corrupt(log: Path, kind: str) -> int:
    """Make the first `kind` line of the log unreadable (a flipped byte: not JSON); its line number."""
    lines = log.read_bytes().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == kind)
    lines[number] = lines[number][:40] + b"\xff\x00" + lines[number][60:]
    log.write_bytes(b"".join(lines))
    return number + 1


@pytest.mark.parametrize("lost", ["tool_results", "assistant", "user"])
def test_a_corrupt_line_in_the_middle_is_skipped_and_continue_sends_a_valid_request(
    workspace, fake_anthropic, lost
):
    server = fake_anthropic
    session_id, log = _session_with_two_turns(workspace, server)
    number = _corrupt(log, lost)
    server.push(text("Still with you."))
    run = agent(workspace, server, "-p", "and now?", "--continue", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["result"] == "Still with you." and data["session_id"] == session_id
    assert any(f"corrupt line {number}" in w for w in data["warnings"]), data["warnings"]
    sent = json.dumps(server.requests[-1]["messages"])
    assert "anything else?" in sent and "and now?" in sent
    if lost == "tool_results":  # both calls of the response get their stand-in, not only the first
        assert sum("result lost" in r for r in tool_results(server.requests[-1])) == 2
    assert_all_requests_valid(server)
    again = agent(workspace, server, "-p", "once more", "--continue", "--output-format", "json")
    assert again.returncode == 0, again.stderr  # the same mending on every resume
    assert_all_requests_valid(server)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_crash_with_two_tool_calls_open_gives_each_its_interrupted_result(workspace, fake_anthropic, sig):
    server = fake_anthropic
    server.push(
        reply(
            ToolUse("bash", {"command": "sleep 25"}, id="toolu_first"),
            ToolUse("bash", {"command": "sleep 26"}, id="toolu_second"),
        )
    )
    proc = spawn(workspace, server, "-p", "wait twice", "--permission-mode", "yolo")
    record = wait_for(lambda: running_command(workspace) or proc.poll() is not None, "bash to start")
    assert isinstance(record, dict), proc.communicate()
    proc.send_signal(sig)
    proc.communicate(timeout=PATIENCE)
    server.push(text("Both were cut short."))
    cont = agent(workspace, server, "-p", "go on", "--continue", "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
    assert json.loads(cont.stdout)["result"] == "Both were cut short."
    answered = [
        block["tool_use_id"]
        for message in server.requests[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert sorted(answered) == ["toolu_first", "toolu_second"]
    assert all("interrupted" in r for r in tool_results(server.requests[-1]))
    assert_all_requests_valid(server)


def test_an_unterminated_last_line_that_is_whole_json_is_set_aside_not_glued_onto(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(text("First answer."))
    first = agent(workspace, server, "-p", "prompt 1", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    log = sessions(workspace) / json.loads(first.stdout)["session_id"] / "events.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[:-1])  # the power went before the newline: the last line is valid JSON
    assert json.loads(whole.splitlines()[-1])
    for n in (2, 3):
        server.push(text(f"Answer {n}."))
        run = agent(workspace, server, "-p", f"prompt {n}", "--continue", "--output-format", "json")
        assert run.returncode == 0, run.stderr
        assert not any("corrupt" in w for w in json.loads(run.stdout)["warnings"])
    sent = json.dumps(server.requests[-1]["messages"])
    assert all(f"prompt {n}" in sent for n in (1, 2, 3))
    assert (log.parent / "events.jsonl.torn").read_bytes() == whole.splitlines(keepends=True)[-1]
    assert all(json.loads(line) for line in log.read_bytes().splitlines())  # every line whole
    assert_all_requests_valid(server)


def test_a_process_record_a_repository_ships_kills_nothing(workspace, fake_anthropic):
    """A session under `.agent/sessions/` that the person's key did not seal is someone else's: its
    `running/` records (which name a process group to end) are not acted on, here a live one of the
    person's own with the right start time."""
    from agent_cli.session.processes import ProcessRecords

    shipped = sessions(workspace) / "20260101-000000-abcdef"
    shipped.mkdir(parents=True)
    (shipped / "events.jsonl").write_text(json.dumps({"type": "session_start", "id": shipped.name}) + "\n")
    victim = subprocess.Popen(["sleep", "120"], start_new_session=True)
    try:
        ProcessRecords(shipped).started(victim.pid, "sleep 120")
        record = next((shipped / "running").glob("*.json"))
        record.write_text(json.dumps({**json.loads(record.read_text()), "agent_pid": 999_999_999}))
        fake_anthropic.push(text("hello"))
        out = agent(workspace, fake_anthropic, "-p", "hi", "--output-format", "json")
        assert out.returncode == 0, out.stderr
        assert not any("ended a command" in w for w in json.loads(out.stdout)["warnings"])
        assert victim.poll() is None and live_members(victim.pid)
    finally:
        victim.kill()
        victim.wait()
