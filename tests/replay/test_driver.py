from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from agent_cli.context.model import Compaction, SpanReplacement
from agent_cli.core.types import Block, BlockMeta, Message, Trust, Usage
from agent_cli.replay.driver import (
    ReplayError,
    load_transcript,
    replay,
    replay_async,
    sessions_in,
)
from agent_cli.replay.report import api_orphans, render_table
from agent_cli.session.log import EventLog

from .helpers import SessionWriter

TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"  # copies of ../shared/transcripts (MIT)
KEYS = {
    "misses",
    "requests",
    "peak_context_tokens",
    "mean_context_tokens",
    "compactions",
    "tokens",
    "weighted_input",
    "integrity",
    "recall",
    "estimator",
    "reference",
    "policy",
    "file",
    "warnings",
    "fidelity",
}
ZERO = {"orphan_tool_uses": 0, "orphan_tool_results": 0, "over_budget_requests": 0}


def shared(name: str) -> Path:
    path = TRANSCRIPTS / name
    return path


def test_short_session_replays_to_its_one_request_with_a_warm_tool_prefix():
    result = replay(shared("short.jsonl"), policy="default")
    data = result.to_json()
    assert set(data) == KEYS
    assert data["requests"] == 1 and data["reference"]["requests"] == 1
    assert data["integrity"] == ZERO
    assert data["compactions"] == [] and data["recall"] == {"compacted_items": 0, "recoverable_items": 0}
    tokens = data["tokens"]
    assert tokens["output"] == 13  # the recorded output, counted once for the 5 lines of the response
    # the recorded first request read 11,515 tokens (tools cached by earlier sessions): so does ours
    assert abs(tokens["cache_read"] - 11_515) <= 10
    assert (
        tokens["cache_read"] + tokens["cache_write"] + tokens["uncached_input"] == data["peak_context_tokens"]
    )
    # overhead is taken from this very request: the replayed size is the recorded one
    assert abs(data["peak_context_tokens"] - 25_353) <= 20
    assert data["estimator"] == {"median_abs_error_pct": 0.0, "p95_abs_error_pct": 0.0}


def test_tool_heavy_session_reads_each_previous_request_from_the_cache():
    result = replay(shared("tool_heavy.jsonl"), policy="default")
    assert result.requests == 4
    assert result.integrity.ok
    assert result.compactions == ()
    sizes = result.context_tokens
    assert list(sizes) == sorted(sizes)  # nothing compacted: the context only grows
    warm = result.tokens.cache_read - sum(sizes[:-1])
    # all four requests fall within 5 minutes: each reads all of the previous one and writes the rest
    assert 9_000 < warm < 20_000  # the first request's tool prefix, warm from earlier sessions
    assert result.tokens.cache_write == sizes[-1] - warm
    assert result.tokens.uncached_input == 0
    assert result.tokens.output == 212


@pytest.mark.parametrize("policy", ["none", "claude-code", "masking", "recorded"])
def test_every_policy_replays_the_small_session_validly(policy):
    result = replay(shared("tool_heavy.jsonl"), policy=policy)
    assert result.policy == policy and result.requests == 4 and result.integrity.ok


def _compacted_session(tmp_path: Path) -> Path:
    """A large command output, then Claude Code's own compaction (boundary, summary), then one turn."""
    s = SessionWriter()
    s.user("run the suite", 0)
    output = "".join(f"tests/test_{i}.py::test_case_{i} FAILED\n" for i in range(1_000))  # ~40k chars
    s.tool_turn("Bash", {"command": "pytest -q"}, output, at=10, read=11_000, write=2_000)
    s.response([{"type": "text", "text": "It fails."}], at=20, read=13_000, write=10_000)
    s.lines.append(
        {"type": "system", "subtype": "compact_boundary", "uuid": "b-1", "timestamp": s._stamp(30),
         "compactMetadata": {"trigger": "manual", "preTokens": 23_000}}
    )  # fmt: skip
    summary = "This session is being continued from a previous conversation. Summary: the suite fails."
    s.lines.append(
        {"type": "user", "uuid": "s-1", "timestamp": s._stamp(31), "isCompactSummary": True,
         "message": {"role": "user", "content": summary}}
    )  # fmt: skip
    s.user("go on", 40)
    s.response([{"type": "text", "text": "Fixed."}], at=50, read=11_000, write=600)
    return s.write(tmp_path / "compacted.jsonl")


def test_recorded_replays_what_claude_code_sent_its_large_output_whole_and_its_compaction(tmp_path: Path):
    path = _compacted_session(tmp_path)
    ours = replay(path, policy="none")  # our engine: T0 offloads the 40k-char output at ingest
    dump = tmp_path / "sent.jsonl"
    theirs = replay(path, policy="recorded", dump_requests=dump)
    assert theirs.policy == "recorded" and theirs.integrity.ok
    assert theirs.compactions == () and [c.tier for c in ours.compactions] == ["T0"]
    assert theirs.context_tokens[1] > ours.context_tokens[1] + 5_000  # the output went whole
    sent = [json.loads(line) for line in dump.read_text().splitlines()]
    last = sent[-1]["messages"]
    assert len(last) == 1 and last[0]["content"][0]["text"].startswith("This session is being continued")
    assert theirs.context_tokens[2] < theirs.context_tokens[1] - 8_000  # Claude Code's own compaction
    assert ours.context_tokens[2] > ours.context_tokens[1]  # ours, unmanaged, kept everything


def _long_gap_session(tmp_path: Path) -> Path:
    s = SessionWriter()
    s.user("tidy the parser", 0)
    for i in range(16):  # command outputs the model has seen: worth nothing once the cache is gone
        s.tool_turn(
            "Bash", {"command": f"grep -n def /repo/mod{i}.py"}, f"line of module {i}\n" * 120, at=10 + i * 5
        )
    # the person comes back after 10 minutes: the prompt cache has expired
    s.response([{"type": "text", "text": "Read them all."}], at=90)
    s.user("now the tests", 690)
    s.tool_turn("Bash", {"command": "pytest -q"}, "x" * 40_000, at=700)  # large: offloaded at ingest
    s.response([{"type": "text", "text": "Tests pass."}], at=710)
    return s.write(tmp_path / "gap.jsonl")


def test_idle_gap_clears_old_results_offloads_large_ones_and_all_stay_recoverable(tmp_path: Path):
    result = replay(_long_gap_session(tmp_path), policy="default")
    assert result.requests == 19
    tiers = [(c.tier, c.trigger) for c in result.compactions]
    assert ("T1", "cache_cold") in tiers  # 10 idle minutes: the prefix is lost anyway
    assert ("T0", "ingest") in tiers  # the 40,000-char result went to the store
    assert (
        result.compacted_items >= 10
    )  # most of the 16 outputs cleared (not the latest few) + the offloaded one
    assert result.recoverable_items == result.compacted_items
    assert result.integrity.ok
    # without the policy nothing is cleared (T0 still offloads at ingest)
    none = replay(tmp_path / "gap.jsonl", policy="none")
    assert [c.tier for c in none.compactions] == ["T0"]
    assert none.peak_context_tokens > result.peak_context_tokens


def test_a_small_budget_counts_over_budget_requests_without_compaction(tmp_path: Path):
    path = _long_gap_session(tmp_path)
    tight = replay(path, policy="none", budget_tokens=3_000)  # usable: 3,000 minus the reserve
    assert tight.integrity.over_budget_requests > 0
    assert tight.integrity.orphan_tool_uses == tight.integrity.orphan_tool_results == 0


def test_api_orphans_are_counted():
    use = {"type": "tool_use", "id": "a", "name": "bash", "input": {}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zzz", "content": "x"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert api_orphans(messages) == (1, 1)
    assert api_orphans(messages[:2]) == (0, 0)  # the last call is answered after this request


def test_our_own_log_is_replayed(tmp_path: Path):
    log = EventLog(tmp_path / "s1")
    now = 1_700_000_000.0
    user = BlockMeta(Trust.USER, "user", now)
    log.append("session_start", id="s1", model="scripted")
    log.message("user", Message("user", (Block.text_block("list files", user),), 1), prompt="list files")
    call = Block.tool_use("t1", "ls", {"path": "."})
    log.assistant(Message("assistant", (call,), 1), Usage(10, 5, 0, 2000), "claude-opus-4-6", "tool_use")
    result = Block.tool_result("t1", "a.py\nb.py", meta=BlockMeta(Trust.TOOL, "tool", now, tool_name="ls"))
    log.message("tool_results", Message("user", (result,), 1))
    log.assistant(
        Message("assistant", (Block.text_block("Two files."),), 1),
        Usage(3, 4, 2000, 30),
        "claude-opus-4-6",
        "end_turn",
    )
    kept = Message("user", (Block.text_block("[cleared]"),), 1)
    log.compaction(Compaction("T1", "manual", (SpanReplacement(0, 1, (kept,)),)))
    log.message("user", Message("user", (Block.text_block("thanks", user),), 2), prompt="thanks")
    log.assistant(
        Message("assistant", (Block.text_block("You're welcome."),), 2),
        Usage(5, 3, 2000, 20),
        "claude-opus-4-6",
        "end_turn",
    )
    # a turn that ended before any response: the loop logs a stand-in, never sent to a model
    log.message("user", Message("user", (Block.text_block("still there?", user),), 3), prompt="still there?")
    stand_in = Message("assistant", (Block.text_block("(no response: the previous turn ended early)"),), 3)
    log.message("assistant", stand_in, usage=Usage().to_json(), model="", stop_reason="stand_in")
    log.message("user", Message("user", (Block.text_block("ok", user),), 4), prompt="ok")
    log.assistant(
        Message("assistant", (Block.text_block("Yes."),), 4),
        Usage(5, 2, 2010, 9),
        "claude-opus-4-6",
        "end_turn",
    )
    log.close()
    with log.path.open("a") as fh:
        fh.write('{"type": "assistant", "message": {"role": "assis')  # a crash mid-write
    transcript = load_transcript(tmp_path / "s1")
    assert transcript.source == "agent" and len(transcript.requests) == 4 and transcript.torn_lines == 1
    assert len(transcript.messages) == 10  # the stand-in stays in the conversation, not as a request
    # what was really sent for the third request: the logged compaction applied
    assert transcript.recorded_context(transcript.requests[2])[0].text == "[cleared]"
    result = replay(tmp_path / "s1" / "events.jsonl", policy="default")
    assert result.requests == 4 and result.integrity.ok
    assert result.reference is not None and result.reference.cache_read == 6010
    assert any("torn" in w for w in result.warnings)


def test_bad_inputs_are_clear_errors(tmp_path: Path):
    with pytest.raises(ReplayError, match="no such file"):
        replay(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"type": "summary"}\n')
    with pytest.raises(ReplayError, match="nothing to replay"):
        replay(empty)
    with pytest.raises(ReplayError, match="unknown policy") as info:
        replay(empty, policy="aggressive")
    assert "default" in info.value.hint
    for tiny in (0, 10, 999):  # what the live CLI refuses too (settings/config.py)
        with pytest.raises(ReplayError, match="--budget-tokens must be at least 1000"):
            replay(empty, budget_tokens=tiny)


def test_dump_requests_never_overwrites_the_session_and_a_write_error_is_a_clear_error(tmp_path: Path):
    session = tmp_path / "session.jsonl"
    session.write_bytes(shared("tool_heavy.jsonl").read_bytes())
    before = session.read_bytes()
    with pytest.raises(ReplayError, match="is the session being replayed"):
        replay(session, dump_requests=session)
    (tmp_path / "alias.jsonl").symlink_to(session)
    with pytest.raises(ReplayError, match="is the session being replayed"):
        replay(session, dump_requests=tmp_path / "alias.jsonl")
    assert session.read_bytes() == before  # the recording is intact
    with pytest.raises(ReplayError, match="cannot write --dump-requests /dev/full"):
        replay(session, dump_requests=Path("/dev/full"))


def test_render_table_shows_ours_next_to_the_recorded_numbers():
    result = replay(shared("tool_heavy.jsonl"), policy="default")
    out = io.StringIO()
    render_table(result, Console(file=out, width=120, color_system=None))
    text = out.getvalue()
    assert "weighted input" in text and "recorded (Claude Code)" in text
    # the recorded session kept its cache an hour: its 17,696 written tokens cost 2x, not 1.25x
    assert f"{result.weighted_input:,}" in text and "44,269" in text
    assert f"{result.weighted_input / 44_269:.2f}x" in text
    json.dumps(result.to_json())  # serializable


def test_a_long_session_under_the_default_policy_stays_valid_and_recoverable():
    result = replay(shared("4d5611e5-241a-462a-8d15-5122611a9569.jsonl"), policy="default")
    assert result.requests == 139
    assert result.integrity.ok
    assert result.compacted_items > 0 and result.recoverable_items == result.compacted_items
    assert result.reference is not None and result.peak_context_tokens < result.reference.peak_context_tokens


async def test_a_real_session_log_replays_with_the_same_requests(workspace: Path):
    from agent_cli.agent.parts import SessionSetup
    from agent_cli.api.compose import compose_session
    from agent_cli.context.model import ContextConfig
    from agent_cli.llm.scripted import Script, ScriptedProvider
    from agent_cli.settings.config import Config

    script = [
        {"text": "Let me look.", "tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"},
                }
            ]
        },
        {"text": "Fixed."},
        {"text": "You're welcome."},
    ]
    config = Config(model="scripted", provider="scripted", permission_mode="yolo", context=ContextConfig())
    session = compose_session(
        config, ScriptedProvider(Script(responses=script)), SessionSetup(workspace, None, False)
    )
    for prompt in ("fix add()", "thanks"):
        async for _ in session.submit(prompt):
            pass
    session.close()
    transcript = load_transcript(session.log.path)
    assert transcript.source == "agent" and transcript.torn_lines == 0 and transcript.repairs == 0
    assert len(transcript.requests) == 4
    result = await replay_async(session.log.path, policy="default")
    assert result.requests == 4 and result.integrity.ok


def test_a_folder_of_sessions_names_what_it_cannot_replay_and_keeps_the_rest(tmp_path: Path):
    s = SessionWriter()
    s.user("look", 0)
    s.tool_turn("Read", {"file_path": "/repo/a.py"}, "x = 1\n", at=5)
    s.response([{"type": "text", "text": "Done."}], at=9)
    good = s.write(tmp_path / "b-session.jsonl")
    (tmp_path / "a-empty.jsonl").write_text("")
    (tmp_path / "c-garbage.jsonl").write_text('not json\n{"type": "user"\n')
    (tmp_path / "notes.txt").write_text("not a session")
    sessions, skipped = sessions_in(tmp_path)
    assert sessions == [good]
    assert [(p.name, why) for p, why in skipped] == [
        ("a-empty.jsonl", "no recorded model responses"),
        ("c-garbage.jsonl", "no recorded model responses (2 unreadable line(s))"),
    ]


def test_the_simulated_bill_does_not_move_with_what_the_engine_learns(monkeypatch):
    """Replay bills each request as the API would, with a counter of its own at the session's fitted
    factor: whatever the engine learns from that bill (its calibration) cannot change the bill
    itself. With one counter for both, a calibration that drifted fed on its own bill (stop 39: a
    calibration on growth ran to the 2.0 clamp and moved a session from 0.79x to 1.01x)."""
    from agent_cli.context import tokens

    plain = replay(shared("tool_heavy.jsonl"), policy="none")
    learned = tokens.TokenCounter.calibrate

    def drifting(self, estimate_raw, billed, since=None):  # an engine that learns a wrong factor
        learned(self, estimate_raw, billed, since)
        self.factor = tokens.FACTOR_MAX
        return self.factor

    monkeypatch.setattr(tokens.TokenCounter, "calibrate", drifting)
    drifted = replay(shared("tool_heavy.jsonl"), policy="none")
    assert drifted.weighted_input == plain.weighted_input
    assert drifted.peak_context_tokens == plain.peak_context_tokens
