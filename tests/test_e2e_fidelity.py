"""Fidelity in the engine, end to end (`agent -p` over loopback against the fake Anthropic API):
T5 pays the cache rewrite once and reports the server's figures; a headless run sends nothing after
its final answer; with a 20k budget a line from the middle of an early, large output is still found."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.agent.session import compaction_history, read_events
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic
from tests.test_e2e_anthropic import agent
from tests.test_e2e_context import _big_files


def _events(workspace: Path, session_id: str) -> list[dict]:
    return read_events(workspace / ".agent" / "sessions" / session_id / "events.jsonl").events


def _medium_files(workspace: Path, count: int, lines: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"med_{i}.txt"
        body = "".join(f"{k:04d} medium line of text number {k} for file {i}\n" for k in range(lines))
        (workspace / name).write_text(body)
        names.append(name)
    return names


def test_t5_rewrites_the_cache_once_and_records_the_servers_figures(workspace):
    names = _big_files(workspace, 2, 20_000) + _medium_files(workspace, 2, 150)
    with FakeAnthropic(max_prompt_tokens=14_000, separate_summaries=True) as server:
        for name in names:
            server.push(tool_call("read_file", {"path": name}))
        server.push(text("Done reading."))
        out = agent(
            workspace, server, "-p", "read them all", "--permission-mode", "yolo", "--output-format", "json"
        )
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert server.statuses.count(400) == 1  # one overflow: the next requests did not hit the limit
    events = _events(workspace, data["session_id"])
    error = next(e for e in events if e["type"] == "error")
    at = events.index(error)
    after = [e for e in events[at:] if e["type"] == "assistant"]
    retry, next1, next2 = (e["usage"] for e in after[:3])
    # the retry wrote the new prefix; the next two requests read it (and what each added) from cache
    assert (
        next1["cache_read_input_tokens"]
        >= retry["cache_read_input_tokens"] + retry["cache_creation_input_tokens"]
    )
    assert (
        next2["cache_read_input_tokens"]
        >= next1["cache_read_input_tokens"] + next1["cache_creation_input_tokens"]
    )
    assert [c["tier"] for c in data["compactions"]] == ["T5"]  # nothing else rewrote it in between
    # the event shows the server's figures: N from its error, after from the next response's usage
    t5 = data["compactions"][0]
    server_after = (
        retry["input_tokens"] + retry["cache_read_input_tokens"] + retry["cache_creation_input_tokens"]
    )
    assert (t5["before"], t5["after"], t5["measured_by"]) == (error["tokens"], server_after, "server")
    assert t5["after"] <= 0.5 * error["maximum"]  # down to the target, not just under the limit
    # ... and so does the log, for resume and replay
    history = compaction_history(events)
    assert history[0]["before"] == error["tokens"] and history[0]["after"] == server_after
    assert history[0]["estimated_after"] > 0
