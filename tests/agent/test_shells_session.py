"""Background shells in a session (scripted model, real processes): the model is told again which
shells run after a compaction or /clear (and once when one ends by itself), `/shells` lists them,
and the session's end kills what still runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_cli.core.events import CommandResult
from agent_cli.tools.shells.manager import group_alive
from tests.agent.helpers import make_session, run

PATIENCE = 60.0


def background(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "run_in_background": True}}]}


def last_request_text(session) -> str:
    return json.dumps(session.provider.requests[-1].messages)


async def wait_for(condition, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)


async def test_the_running_shells_are_pinned_after_a_compaction_and_listed_after_clear(workspace: Path):
    long = [{"text": "Here is a long answer. " * 600}, {"text": "And another long one. " * 600}]
    session = make_session(
        workspace,
        [background("sleep 300"), *long, {"text": "Still here."}, {"text": "Fresh start."}],
        summaries=["## Goal\nA server.\n## Current state\nA sleep runs in the background."],
    )
    try:
        await run(session, "start a sleep in the background")
        assert "ID: bash_1" in last_request_text(session)  # the model saw the id in the bash result
        await run(session, "tell me more")
        events = await run(session, "/compact")
        assert any(isinstance(e, CommandResult) and not e.is_error for e in events)
        await run(session, "is it still running?")
        sent = last_request_text(session)
        assert sent.count("bash_1 (running): sleep 300") == 1  # pinned with the compaction, said once
        assert "kill_shell" in sent

        await run(session, "/clear")
        await run(session, "what runs in the background?")
        sent = last_request_text(session)
        assert "<system-reminder>" in sent and "bash_1 (running): sleep 300" in sent
    finally:
        await session.aclose()


async def test_an_end_between_turns_is_said_once_and_the_sessions_end_kills_the_rest(workspace: Path):
    session = make_session(
        workspace,
        [
            background("sleep 300"),
            background("until [ -e done ]; do sleep 0.05; done; echo built"),
            {"text": "Both started."},
            {"text": "The build ended."},
            {"text": "Nothing new."},
        ],
    )
    await run(session, "start a server and a build")
    offered = [[t["name"] for t in request.tools] for request in session.provider.requests]
    assert "bash_output" not in offered[0] and "kill_shell" not in offered[0]  # no shell yet: not paid for
    assert "bash_output" in offered[1] and "kill_shell" in offered[1]  # from the first shell on
    server, build = session.shells.get("bash_1"), session.shells.get("bash_2")
    (workspace / "done").touch()
    await wait_for(lambda: not build.running, "the build to end")
    await run(session, "how is the build?")
    assert last_request_text(session).count("bash_2 (exited with code 0)") == 1
    await run(session, "anything else?")
    assert last_request_text(session).count("bash_2 (exited with code 0)") == 1  # not said again

    listed = [e for e in await run(session, "/shells") if isinstance(e, CommandResult)][0]
    assert "bash_1 (running" in listed.text and "bash_2 (exited 0" in listed.text
    assert [s["id"] for s in listed.data["shells"]] == ["bash_1", "bash_2"]

    await session.aclose()  # `agent -p` ends here
    assert not server.running and server.status == "killed" and not group_alive(server.pgid)
    assert not list((session.session_dir / "running").glob("*.json"))
    assert (session.session_dir / "tool-results" / "bash_2.txt").read_text() == "built\n"


def test_a_start_ends_what_a_dead_agent_left_but_not_what_a_live_one_runs(tmp_path: Path):
    """The records of a session whose agent is gone are reaped by any start in the workspace; those
    of an agent that still runs (shells kept across /clear) are left to it."""
    import subprocess

    from agent_cli.session.processes import ProcessRecords, live_members, reap_abandoned

    dead_dir, live_dir = tmp_path / "s1", tmp_path / "s2"
    orphan = subprocess.Popen(["sleep", "60"], start_new_session=True)
    kept = subprocess.Popen(["sleep", "61"], start_new_session=True)
    try:
        ProcessRecords(dead_dir).started(orphan.pid, "sleep 60")
        ProcessRecords(live_dir).started(kept.pid, "sleep 61")  # written by this (live) process
        record = next((dead_dir / "running").glob("*.json"))
        record.write_text(json.dumps({**json.loads(record.read_text()), "agent_start": -1}))  # its agent died
        notes = reap_abandoned([dead_dir, live_dir])
        orphan.wait(timeout=PATIENCE)
        assert len(notes) == 1 and f"process group {orphan.pid}" in notes[0]
        assert live_members(orphan.pid) == [] and kept.poll() is None
        assert list((live_dir / "running").glob("*.json"))  # left for its agent to end
    finally:
        for proc in (orphan, kept):
            proc.kill()
            proc.wait()
