"""Background shells as a person meets them: `agent -p` against the local Messages-API server, the
scripted model starting `sleep 2; seq 1 100000` in the background, polling it with
`bash_output(filter="^99999")` while it works with another tool (the script polls until the output is
there: no test sleeps), reading all of it back with `recall`, and leaving a shell running when the
run ends: it is killed, and no process of it is left. A `kill -9` of the agent leaves none behind for
good either: the sandbox takes them down with it, or the next start ends them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from agent_cli.session.processes import live_members
from agent_cli.tools.recall import MAX_LIMIT
from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy
from tests.e2e import AGENT, anthropic_env, user_config
from tests.fakeapi.replies import Reply, Stall, ToolUse, Until, text, tool_call
from tests.fakeapi.server import FakeAnthropic
from tests.test_e2e_crash import PATIENCE, assert_all_requests_valid, sessions, spawn, wait_for

SEQ = "".join(f"{n}\n" for n in range(1, 100_001))
MARKER = "987654"  # a sleep no other test starts: found in /proc by it


def commands_running(marker: str) -> list[int]:
    """Pids whose command line holds `marker` (bwrap, bash or the sleep itself)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    status = (entry / "stat").read_text()
                    if status[status.rfind(")") + 2] != "Z":
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def record_of(workspace: Path, marker: str) -> dict | None:
    for path in sessions(workspace).glob("*/running/*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if marker in record.get("command", "") and live_members(record["pgid"]):
            return record
    return None


def logged_results(session_dir: Path, name: str) -> list[str]:
    """The results of calls to `name` as the session's log has them (what the tool returned; a
    compaction may take one out of the view before the next request)."""
    events = [json.loads(line) for line in (session_dir / "events.jsonl").read_text().splitlines()]
    names = {
        block["id"]: block["name"]
        for event in events
        if event["type"] == "assistant"
        for block in event["message"]["content"]
        if block.get("type") == "tool_use"
    }
    return [
        block["content"]
        for event in events
        if event["type"] == "tool_results"
        for block in event["message"]["content"]
        if block.get("type") == "tool_result" and names.get(block["tool_use_id"]) == name
    ]


def page_text(result: str) -> str:
    """A recall page without its header line and its `call again` footer."""
    body = result.split("\n", 1)[1]
    cut = body.rfind("\n[… ")
    return body[:cut] if cut >= 0 else body


@pytest.fixture
def server():
    """The local API server; the summaries a compaction asks for are answered apart from the script."""
    fake = FakeAnthropic(separate_summaries=True).start()
    try:
        yield fake
    finally:
        fake.stop()


def test_a_background_seq_is_polled_recalled_whole_and_killed_on_exit(workspace, server):
    server.push(
        tool_call("bash", {"command": "sleep 2; seq 1 100000", "run_in_background": True}, say="Starting."),
        Until(
            Reply(
                (
                    ToolUse("bash_output", {"bash_id": "bash_1", "filter": "^99999"}),
                    ToolUse("read_file", {"path": "app.py"}),
                )
            ),
            pattern=r"^99999$",
        ),
        *(
            tool_call("recall", {"ref": "bash_1", "offset": offset, "limit": MAX_LIMIT})
            for offset in range(0, len(SEQ), MAX_LIMIT)
        ),
        tool_call("bash", {"command": f"sleep {MARKER}", "run_in_background": True}),
        Stall(reply=text("The sequence is complete.")),
    )
    proc = spawn(
        workspace, server, "-p", "count to 100000", "--permission-mode", "yolo", "--output-format", "json"
    )
    try:
        record = wait_for(lambda: record_of(workspace, MARKER) or proc.poll() is not None, "the sleep to run")
        assert isinstance(record, dict), proc.communicate()
        assert commands_running(MARKER)  # the second shell runs while the model's answer streams
        server.release()
        out, err = proc.communicate(timeout=PATIENCE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert json.loads(out)["result"] == "The sequence is complete."
    assert_all_requests_valid(server)

    (session_dir,) = sessions(workspace).iterdir()
    started = logged_results(session_dir, "bash")
    assert started[0].splitlines()[0] == "Command running in background with ID: bash_1"
    assert "100000" not in started[0]  # it returned at once, before the command printed anything
    assert started[1].startswith("Command running in background with ID: bash_2")

    polls = logged_results(session_dir, "bash_output")
    reads = logged_results(session_dir, "read_file")
    assert len(reads) == len(polls) >= 1  # every poll went with another tool's call
    assert polls[-1].splitlines()[0] == "99999"
    assert "1 of " in polls[-1] and "match /^99999/" in polls[-1]
    assert all("99999\n" not in p for p in polls[:-1])

    pages = logged_results(session_dir, "recall")
    assert len(pages) == -(-len(SEQ) // MAX_LIMIT)
    assert "".join(page_text(p) for p in pages) == SEQ  # every byte, through the tool
    assert (session_dir / "tool-results" / "bash_1.txt").read_bytes() == SEQ.encode()

    assert live_members(record["pgid"]) == []  # killed on exit: nothing of its group is left
    assert commands_running(MARKER) == []
    assert not list((session_dir / "running").glob("*.json"))


@pytest.mark.parametrize("sandbox", ["off", "on"])
def test_kill_9_leaves_no_background_shell_for_good(workspace, fake_anthropic, sandbox):
    """Unsandboxed, the shell outlives the agent until the next start in the workspace (a new
    session, not a resume) ends it; under bubblewrap it dies with the agent."""
    server = fake_anthropic
    if sandbox == "on":
        status = Sandbox(SandboxPolicy(), workspace).status()
        if not status.available:
            pytest.skip(f"bubblewrap cannot run here: {status.problem}")
    else:
        user_config(workspace, 'sandbox = "off"\n')
    marker = f"{MARKER}1"
    server.push(
        tool_call("bash", {"command": f"sleep {marker}", "run_in_background": True}),
        Stall(reply=text("never sent")),
    )
    proc = spawn(workspace, server, "-p", "start it", "--permission-mode", "yolo")
    record = wait_for(lambda: record_of(workspace, marker) or proc.poll() is not None, "the shell to run")
    assert isinstance(record, dict), proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=PATIENCE)
    if sandbox == "on":
        wait_for(lambda: not live_members(record["pgid"]), "the sandboxed shell to die with the agent")
    else:
        assert live_members(record["pgid"])  # orphaned, until the next start
    server.release()

    server.push(text("A new session."))
    env_run = subprocess.run(
        [*AGENT, "-p", "hello", "--output-format", "json"],
        cwd=workspace,
        env=anthropic_env(workspace, server),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert env_run.returncode == 0, env_run.stderr
    assert live_members(record["pgid"]) == [] and commands_running(marker) == []
    if sandbox == "off":
        warnings = json.loads(env_run.stdout)["warnings"]
        assert any("ended a command" in w and marker in w for w in warnings), warnings


def test_sigterm_ends_the_background_shells_with_the_run(workspace, fake_anthropic):
    server = fake_anthropic
    marker = f"{MARKER}2"
    server.push(
        tool_call("bash", {"command": f"sleep {marker}", "run_in_background": True}),
        Stall(reply=text("never sent")),
    )
    proc = spawn(workspace, server, "-p", "start it", "--permission-mode", "yolo")
    record = wait_for(lambda: record_of(workspace, marker) or proc.poll() is not None, "the shell to run")
    assert isinstance(record, dict), proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=PATIENCE)
    server.release()
    assert proc.returncode == 143, err
    assert live_members(record["pgid"]) == [] and commands_running(marker) == []
    assert not list(sessions(workspace).glob("*/running/*.json"))
