"""What the API reads of the thinking sent back: models before Opus 4.5 keep only the last turn's
(models.toml `thinking_turns = 1`); the replay counts and caches requests as the API reads them."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.context.tokens import TokenCounter
from agent_cli.llm.base import Request
from agent_cli.replay.cache_sim import CacheSimulator, request_segments
from agent_cli.replay.calibration import calibrate
from agent_cli.replay.claude_code import load_claude_code
from agent_cli.replay.driver import replay
from agent_cli.replay.thinking_turns import as_read, turns_kept

from .helpers import SessionWriter

MARK = {"type": "ephemeral"}


def _thought(text: str) -> dict:
    return {"type": "thinking", "thinking": text, "signature": "sig-" + text[:8]}


def _turns() -> list[dict]:
    return [
        {"role": "user", "content": "look at a.py"},
        {
            "role": "assistant",
            "content": [_thought("first"), {"type": "tool_use", "id": "t1", "name": "r", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "code"}]},
        {"role": "assistant", "content": [_thought("second"), {"type": "text", "text": "fine"}]},
        {"role": "assistant", "content": [_thought("only thinking")]},
        {"role": "user", "content": "now b.py"},
        {
            "role": "assistant",
            "content": [_thought("third"), {"type": "tool_use", "id": "t2", "name": "r", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "more"}]},
    ]


def _kinds(request: Request) -> list[list[str]]:
    return [
        [b["type"] for b in m["content"]] if isinstance(m["content"], list) else ["text"]
        for m in request.messages
    ]


def test_only_the_last_turns_thinking_is_read_and_a_model_that_keeps_all_is_untouched():
    request = Request(model="claude-sonnet-4-5", system=[], messages=_turns())
    read = as_read(request, 1)
    assert _kinds(read) == [
        ["text"],
        ["tool_use"],  # the first turn's thinking is left out ...
        ["tool_result"],
        ["text"],
        ["thinking"],  # ... but a message of thinking alone is not emptied
        ["text"],
        ["thinking", "tool_use"],  # the turn in progress keeps its thinking
        ["tool_result"],
    ]
    assert as_read(request, 0) is request and as_read(read, 1) == read
    assert turns_kept("claude-sonnet-4-5-20250929") == 1 and turns_kept("claude-haiku-4-5") == 1
    assert turns_kept("claude-opus-4-5-20251101") == 0 and turns_kept("claude-sonnet-5-5") == 0


def test_the_prefix_cached_with_a_turns_thinking_is_still_read_once_the_api_leaves_it_out():
    counter = TokenCounter("claude-sonnet-4-5", factor=1.0)
    first = _turns()[:5]
    first[-1] = {"role": "user", "content": [{"type": "text", "text": "and?", "cache_control": MARK}]}
    second = [*_turns()[:4], first[-1], {"role": "assistant", "content": [{"type": "text", "text": "b"}]}]
    second.append({"role": "user", "content": [{"type": "text", "text": "next", "cache_control": MARK}]})
    for keyed, reads_all in ((False, True), (True, False)):
        sim = CacheSimulator()
        sim.request(request_segments(Request("m", [], first), counter, thinking_keyed=keyed), 0.0)
        later = as_read(Request("m", [], second), 1)  # "next" begins a turn: the older thinking goes
        segments = request_segments(later, counter, thinking_keyed=keyed)
        result = sim.request(segments, 1.0)
        cached = sum(s.tokens for s in segments[:5])  # what the first request sent, less its thinking
        assert (result.cache_read == cached) is reads_all, (keyed, result)


def _session(tmp_path: Path, model: str) -> Path:
    w = SessionWriter(model)
    w.user("look at a.py", at=0)
    w.response(
        [
            _thought("a " * 2000),
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a.py"}},
        ],
        1,
        write=3000,
    )
    w.user([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "line\n" * 500}], 2)
    w.response([_thought("b " * 2000), {"type": "text", "text": "a.py is fine"}], 3, read=3000, write=3000)
    w.user("now b.py", 4)
    w.response([{"type": "text", "text": "ok"}], 5, read=3000, write=100)
    return w.write(tmp_path / f"{model}.jsonl")


def test_a_replay_counts_a_sonnet_4_5_session_without_its_older_turns_thinking(tmp_path: Path):
    for model, kept in (("claude-sonnet-4-5-20250929", 0), ("claude-opus-4-6", 2)):
        dump = tmp_path / f"{model}.requests.jsonl"
        result = replay(_session(tmp_path, model), policy="none", dump_requests=dump)
        last = [json.loads(line) for line in dump.read_text().splitlines()][-1]
        thoughts = [
            b
            for m in last["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "thinking"
        ]
        assert len(thoughts) == kept, model
        usage = last["usage"]
        assert usage["cache_read_input_tokens"] > 2_000, usage  # the cached prefix is still read ...
        # ... and only the new turn is written; with the thinking kept, the last answer's is too
        assert (usage["cache_creation_input_tokens"] < 100) is (kept == 0), usage
        assert result.integrity.orphan_tool_uses == 0


def test_the_overhead_is_the_typical_request_not_the_first(tmp_path: Path):
    w = SessionWriter()
    w.user("go", at=0)
    w.response([{"type": "text", "text": "x"}], 1, write=30_000)  # an attachment the log does not hold
    for i in range(6):
        w.user(f"again {i}", at=10 + 10 * i)
        w.response([{"type": "text", "text": "y"}], 11 + 10 * i, read=20_000)
    transcript = load_claude_code(w.write(tmp_path / "s.jsonl"))
    assert 19_900 < calibrate(transcript, transcript.model).overhead < 20_000


def _reads_after_thoughts(tmp_path: Path, model: str) -> Path:
    """Twelve long reads, each after a long thought; one prompt (a model that keeps every turn's)."""
    s = SessionWriter(model=model)
    s.user("read the data files", 0)
    body = "".join(f"{n:>6}\trecord {n}: lorem ipsum dolor sit amet\n" for n in range(1, 300))
    for i in range(12):
        s._calls += 1
        call = f"toolu_{s._calls:03d}"
        thought = {"type": "thinking", "thinking": f"weighing file {i}. " * 200, "signature": f"sig-{i:03d}"}
        use = {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": f"/repo/d{i}.txt"}}
        s.response([thought, use], at=10 + 20 * i)
        s.user([{"type": "tool_result", "tool_use_id": call, "content": body}], at=11 + 20 * i)
    s.response([{"type": "text", "text": "All read."}], at=300)
    return s.write(tmp_path / f"{model}.jsonl")


def _thoughts_sent(dump: Path) -> list[int]:
    return [
        sum(
            b["type"] == "thinking"
            for m in r["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
        )
        for r in map(json.loads, dump.read_text().splitlines())
    ]


def test_a_model_that_binds_its_thinking_is_replayed_without_what_a_clear_invalidated(tmp_path: Path):
    # the provider leaves out thinking whose prefix a clear changed (llm/thinking_binding.py): the
    # replay sends what it would send, and prices that
    runs = {}
    for model in ("claude-sonnet-5-5", "claude-opus-4-6"):  # binds its thinking; keeps it all as it is
        dump = tmp_path / f"{model}.requests.jsonl"
        result = replay(_reads_after_thoughts(tmp_path, model), budget_tokens=40_000, dump_requests=dump)
        assert any(c.tier == "T1" for c in result.compactions)
        assert result.integrity.over_budget_requests == result.integrity.orphan_tool_uses == 0
        assert result.recoverable_items == result.compacted_items
        runs[model] = (_thoughts_sent(dump), result.weighted_input)
    (bound, bound_cost), (kept, kept_cost) = runs["claude-sonnet-5-5"], runs["claude-opus-4-6"]
    assert kept == list(range(13))  # every thought goes back
    assert bound[:3] == kept[:3] and bound[-1] < kept[-1] / 2  # until clears change what came before
    assert bound_cost < kept_cost
