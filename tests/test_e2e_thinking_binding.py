"""`agent -p` on the default model, which thinks by default and binds each thinking block to what
precedes it: with a budget that makes the context engine clear old results, no request is refused
and the API never has to drop a block — the agent leaves out the thinking a clear invalidated, and
keeps the rest."""

from __future__ import annotations

import json

from tests.e2e import READ_ALL, agent, big_files
from tests.fakeapi.replies import Thinking, ToolUse, reply
from tests.fakeapi.server import FakeAnthropic


def _thoughts(body: dict) -> int:
    return sum(
        1
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    )


def test_clears_never_send_back_thinking_bound_to_what_they_changed(workspace):
    with FakeAnthropic(bind_thinking=True, separate_summaries=True) as server:
        names = big_files(workspace, 8, 16_000)  # ~8 x 4k tokens of tool output
        for name in names:
            server.push(reply(Thinking(f"{name} next"), ToolUse("read_file", {"path": name})))
        server.push(reply(Thinking("all read"), "Done reading."))
        out = agent(workspace, server, *READ_ALL, "--budget-tokens", "20000")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["result"] == "Done reading." and not data["is_error"]
        assert data["compactions"], "a 20k budget with ~32k tokens of output must clear"
        assert set(server.statuses) == {200}, server.statuses  # no block refused ...
        assert server.binding is not None and server.binding.dropped == []  # ... nor dropped by the API
        sent = [_thoughts(body) for body in server.requests]
        assert max(sent) >= 2  # thinking still bound to its prefix goes back
        # a clear invalidated some: fewer go back than the requests before had received
        assert any(count < previous + 1 for previous, count in zip(sent, sent[1:], strict=False))
        # and the requests went out as the engine built them: no thinking setting, no beta
        assert all("thinking" not in body for body in server.requests)
        assert all("anthropic-beta" not in h for h in server.headers)


def _session_events(workspace) -> list[dict]:
    (log,) = (workspace / ".agent" / "sessions").glob("*/events.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_what_a_clear_reports_is_what_the_next_request_is_billed(workspace):
    """The size a clear reports (and the gauge shows until the next answer) is the last bill moved by
    what the clear changed, and on this model the thinking after the change is not sent again: it
    counts at nothing from the first clear on, not from the first request that went without it."""
    with FakeAnthropic(bind_thinking=True, separate_summaries=True) as server:
        names = big_files(workspace, 8, 16_000)
        for name in names:  # each read after a long thought (~500 tokens on the fake's scale)
            server.push(reply(Thinking(f"weighing {name}. " * 110), ToolUse("read_file", {"path": name})))
        server.push(reply(Thinking("all read"), "Done reading."))
        out = agent(workspace, server, *READ_ALL, "--budget-tokens", "20000")
        assert out.returncode == 0, out.stderr
    events = _session_events(workspace)
    pairs = []  # (what a T1 reported, the bill of the request after it)
    for i, event in enumerate(events):
        if event["type"] == "compaction" and event["compaction"]["tier"] == "T1":
            nxt = next(e for e in events[i:] if e["type"] == "assistant")
            usage = nxt["usage"]
            billed = sum(
                usage[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
            pairs.append((event["compaction"]["after"], billed))
    assert len(pairs) >= 2, pairs
    assert all(abs(after - billed) <= 0.03 * billed for after, billed in pairs), pairs
