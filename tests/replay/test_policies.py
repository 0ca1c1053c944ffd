"""The oracle and the API's own alternatives in replay, misses in the report, and bad input
(issue 19: item 4 and the bad-input lines)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agent_cli.replay.driver import POLICIES, ReplayError, baseline, replay
from tests.replay.helpers import SessionWriter

BODY = "".join(f"    {n:>4}\tdef step_{n}(x):  return x + {n}\n" for n in range(1, 200))


def edit_session(tmp_path: Path) -> Path:
    """A module read, then 30 long command outputs, then an edit of the module (its read is needed
    again after a long gap), then the file read again."""
    s = SessionWriter()
    s.user("tidy the steps module", 0)
    s.tool_turn("Read", {"file_path": "/repo/steps.py"}, BODY, at=5)
    for n in range(30):
        s.tool_turn("Bash", {"command": f"make check STEP={n}"}, f"check {n} ok\n" * 400, at=10 + n * 3)
    old = "def step_7(x):  return x + 7"
    s.tool_turn(
        "Edit",
        {"file_path": "/repo/steps.py", "old_string": old, "new_string": "def step_7(x): ..."},
        "ok",
        110,
    )
    s.tool_turn("Read", {"file_path": "/repo/steps.py"}, BODY, at=120)
    s.response([{"type": "text", "text": "Done."}], at=130)
    return s.write(tmp_path / "edit.jsonl")


def test_every_policy_replays_and_the_report_has_misses(tmp_path: Path):
    path = edit_session(tmp_path)
    for policy in ("default", "oracle", "api-clear", "api-compact"):
        assert policy in POLICIES
        data = replay(path, policy=policy).to_json()
        assert (
            set(data["misses"]) == {"count", "cost", "clears", "restored"}
            and data["integrity"]["orphan_tool_uses"] == 0
        )


def test_the_oracle_keeps_exactly_what_the_edit_needs_and_clears_the_rest(tmp_path: Path):
    result = replay(edit_session(tmp_path), policy="oracle", budget_tokens=40_000)
    assert result.fidelity.visible_unmanaged == 1 and result.fidelity.blind == 0
    assert result.recoverable_items == result.compacted_items > 0  # command outputs went, recallable


def test_api_clear_keeps_three_tool_uses_past_its_trigger_and_nothing_is_recallable(tmp_path: Path):
    s = SessionWriter()
    s.user("go", 0)
    for n in range(24):  # each under T0's 30,000 chars: they stay in the context until cleared
        s.tool_turn(
            "Bash",
            {"command": f"dump {n}"},
            "\n".join(f"row {n}-{k} value {k * 7}" for k in range(1_400)),
            at=5 + n,
        )
    s.response([{"type": "text", "text": "ok"}], at=40)
    result = replay(s.write(tmp_path / "big.jsonl"), policy="api-clear")
    assert [(c.tier, c.trigger) for c in result.compactions if c.tier == "T1"]
    assert result.compacted_items > result.recoverable_items  # the API keeps no originals: no recall


def test_api_compact_replaces_the_history_at_150k(tmp_path: Path):
    s = SessionWriter()
    s.user("go", 0)
    for n in range(24):  # each under T0's 30,000 chars
        rows = "\n".join(f"row {n}-{k} value {k * 7}" for k in range(1_400))
        s.tool_turn("Bash", {"command": f"dump {n}"}, rows, at=5 + n)
    s.response([{"type": "text", "text": "ok"}], at=40)
    result = replay(s.write(tmp_path / "grow.jsonl"), policy="api-compact")
    # the API's summary (here the ledger's static one: replay has no summarizer) replaces the history
    fired = [c for c in result.compactions if c.tier in ("T4", "T5") and c.after < c.before / 10]
    assert len(fired) == 1 and fired[0].before >= 150_000


def test_a_recorded_re_read_of_a_cleared_file_is_a_miss(tmp_path: Path):
    path = edit_session(tmp_path)
    result = replay(path, policy="default", budget_tokens=30_000)  # tight: the module's read goes
    if result.fidelity.blind:  # cleared before the edit: the read after it comes back for the file
        assert result.misses.count >= 1 and result.misses.cost > 0


@pytest.mark.parametrize("policy", ["default", "oracle", "api-clear", "api-compact"])
def test_sessions_with_no_edits_no_reads_or_one_request_report_zeros(tmp_path: Path, policy: str):
    s = SessionWriter()
    s.user("hello", 0)
    s.response([{"type": "text", "text": "hi"}], at=1)
    one = replay(s.write(tmp_path / "one.jsonl"), policy=policy)
    data = one.to_json()
    assert data["requests"] == 1 and data["misses"] == {"count": 0, "cost": 0, "clears": 0, "restored": 0}
    assert (data["fidelity"]["edits"], data["fidelity"]["blind"]) == (0, 0)


def test_a_transcript_with_line_types_the_reader_does_not_know_replays(tmp_path: Path):
    s = SessionWriter()
    s.user("fix it", 0)
    s.tool_turn("Read", {"file_path": "/repo/a.py"}, BODY, at=2)
    s.response([{"type": "text", "text": "Done."}], at=4)
    lines = (
        s.lines[:2]
        + [
            {"type": "attachment", "attachment": {"type": "file", "path": "x.png"}},
            {"type": "mode", "mode": "plan"},
            {"type": "custom-title", "customTitle": "fixing"},
            {"type": "last-prompt", "lastPrompt": "fix it"},
        ]
        + s.lines[2:]
    )
    synthetic = json.loads(json.dumps(s.lines[-1]))
    synthetic["message"]["model"] = "<synthetic>"
    synthetic["message"]["id"] = "msg_synthetic"
    lines.append(synthetic)
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for policy in ("default", "oracle"):
        result = replay(path, policy=policy)
        assert result.requests == 2 and result.integrity.ok


def test_above_the_auto_threshold_t1_clears_and_no_lossy_tier_runs(tmp_path: Path):
    """Thirty command outputs fill a 30k budget: T1 must clear them (they are worth little) before
    the context reaches the auto-compaction threshold — even when its bet, recomputed once the
    cleared calls are folded, is worth about nothing — rather than let T4 (here T5: replay has no
    summarizer) destroy the module's read."""
    result = replay(edit_session(tmp_path), policy="default", budget_tokens=30_000)
    tiers = {c.tier for c in result.compactions}
    assert tiers == {"T1"}
    assert result.integrity.over_budget_requests == 0


def test_an_oracle_for_some_classes_leaves_the_rest_to_the_predictor(tmp_path: Path):
    """bench/oracle_classes.py: knowing no class, the oracle replays exactly as the default; knowing
    only the command outputs' future, the default's blind edit stays; knowing the whole reads', the
    read the edit needs is kept, as the full oracle keeps it."""
    path = edit_session(tmp_path)
    default = replay(path, budget_tokens=20_000)
    assert default.fidelity.blind == 1  # the predictor lets the module's read go before its edit
    nothing = replay(path, policy="oracle", budget_tokens=20_000, oracle_classes=frozenset())
    assert (nothing.weighted_input, nothing.fidelity.blind) == (default.weighted_input, 1)
    outputs = replay(path, policy="oracle", budget_tokens=20_000, oracle_classes=frozenset({"output"}))
    assert outputs.fidelity.blind == 1
    reads = replay(path, policy="oracle", budget_tokens=20_000, oracle_classes=frozenset({"whole"}))
    assert reads.fidelity.blind == 0 == replay(path, policy="oracle", budget_tokens=20_000).fidelity.blind


def test_a_baseline_made_once_counts_blind_edits_as_the_unmanaged_pass_does(tmp_path: Path):
    """bench/loo.py and policies.py replay one session many times: its unmanaged pass (what was
    visible with no management) is made once and passed in; a baseline of another session or
    another budget is refused, never silently mixed in."""
    path = edit_session(tmp_path)
    own = replay(path, budget_tokens=20_000)
    base = baseline(path, budget_tokens=20_000)
    assert (own.fidelity.visible_unmanaged, own.fidelity.blind) == (1, 1)
    assert replay(path, budget_tokens=20_000, baseline=base).fidelity == own.fidelity
    emptied = replace(base, checks=())  # the baseline is what the blind count is measured against
    assert replay(path, budget_tokens=20_000, baseline=emptied).fidelity.blind == 0
    with pytest.raises(ReplayError, match="at a budget of 20000, not .* at 200000"):
        replay(path, baseline=base)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ReplayError, match="baseline is .*, not .*other"):
        replay(edit_session(other), budget_tokens=20_000, baseline=base)
