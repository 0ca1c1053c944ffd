"""The context engine end to end: `agent -p` over loopback with a small budget, a server with a hard
prompt limit, and the prompt cache across a multi-step task."""

from __future__ import annotations

import json

from agent_cli.context.invariants import check
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.types import Message
from tests.e2e import READ_ALL, agent, big_files, script_reads
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic


def _request_tokens(body: dict) -> int:
    return TokenCounter("claude-sonnet-5-5", factor=1.0).request(body)


def test_small_budget_compacts_and_keeps_every_request_valid(workspace):
    server = FakeAnthropic(separate_summaries=True).start()
    names = big_files(workspace, 8, 16_000)  # ~8 x 4k tokens of tool output
    for name in names:
        server.push(tool_call("read_file", {"path": name}, say=f"Reading {name}."))
    server.push(text("All eight files hold numbered records."))
    out = agent(
        workspace,
        server,
        "-p",
        "summarize the data files",
        "--permission-mode",
        "yolo",
        "--output-format",
        "json",
        "--budget-tokens",
        "20000",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "All eight files hold numbered records."
    assert data["compactions"], "a 20k budget with ~32k tokens of output must compact"
    assert data["context"]["budget"] <= 20_000
    assert set(server.statuses) == {200}, server.statuses  # the validator never saw a broken tool pair
    sizes = [_request_tokens(body) for body in server.requests]
    assert max(sizes) <= 20_000 * 1.1, sizes
    # the final view is valid and everything compacted is still on disk
    log = workspace / ".agent" / "sessions" / data["session_id"] / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    refs = [r for e in events if e["type"] == "compaction" for r in e["compaction"]["refs"]]
    stored = {p.stem for p in (log.parent / "tool-results").iterdir()}
    assert refs and set(refs) <= stored
    server.stop()


def test_a_server_prompt_limit_is_survived(workspace):
    names = big_files(workspace, 6, 20_000)  # each result ~5k tokens: capped, under the limit alone
    with FakeAnthropic(max_prompt_tokens=14_000, separate_summaries=True) as server:
        script_reads(server, names)
        out = agent(workspace, server, *READ_ALL)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["result"] == "Done reading." and not data["is_error"]
        assert 400 in server.statuses  # the limit was hit ...
        assert any(c["tier"] == "T5" for c in data["compactions"])  # ... and recovered from
        ok = [body for body, status in zip(server.requests, server.statuses, strict=True) if status == 200]
        last = [Message.from_json(m) for m in ok[-1]["messages"]]
        assert check(last) == []


def test_the_prompt_cache_is_hit_across_a_ten_step_task(workspace):
    server = FakeAnthropic(separate_summaries=True).start()
    for i in range(9):
        server.push(tool_call("bash", {"command": f"echo step {i}"}))
    server.push(text("Ten steps done."))
    out = agent(
        workspace, server, "-p", "do ten small steps", "--permission-mode", "yolo", "--output-format", "json"
    )
    data = json.loads(out.stdout)
    usage = data["usage"]
    total = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    # a second session in the same workspace starts from the cached system + tools prefix
    for i in range(9):
        server.push(tool_call("bash", {"command": f"echo again {i}"}))
    server.push(text("Again."))
    out2 = agent(
        workspace, server, "-p", "and ten more", "--permission-mode", "yolo", "--output-format", "json"
    )
    usage2 = json.loads(out2.stdout)["usage"]
    total2 = (
        usage2["input_tokens"] + usage2["cache_read_input_tokens"] + usage2["cache_creation_input_tokens"]
    )
    first_rate = usage["cache_read_input_tokens"] / total
    warm_rate = usage2["cache_read_input_tokens"] / total2
    assert first_rate >= 0.85, usage
    assert warm_rate >= 0.9, usage2
    server.stop()
