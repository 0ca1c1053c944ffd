"""The recorded agent's own cost, from the recorded usage: the README's figures must come out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.replay.claude_code import load_claude_code
from agent_cli.replay.driver import calibrate
from agent_cli.replay.report import percentile, reference, weighted_input

TRANSCRIPTS = Path(__file__).parent / "fixtures" / "transcripts"  # copies of ../shared/transcripts (MIT)
FIXTURES = Path(__file__).parent / "fixtures"


def test_weighted_input_is_exact_and_rounds_down():
    assert weighted_input(3, 1000, 5000) == 3 + 1250 + 500
    assert weighted_input(1, 1, 1) == 2  # 2.35 -> 2


def test_a_write_kept_an_hour_costs_twice_the_input_not_a_quarter_more(tmp_path: Path):
    assert weighted_input(0, 1000, 0, cache_write_1h=400) == 600 * 1.25 + 400 * 2
    # Claude Code's usage splits its writes by TTL; the reference prices each part as billed
    usage = {"input_tokens": 3, "cache_read_input_tokens": 10_000, "cache_creation_input_tokens": 2_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2_000},
             "output_tokens": 5}  # fmt: skip
    line = {"type": "assistant", "uuid": "u1", "timestamp": "2026-02-10T10:00:00Z",
            "message": {"id": "m1", "model": "claude-opus-4-6", "role": "assistant",
                        "content": [{"type": "text", "text": "ok"}], "usage": usage}}  # fmt: skip
    prompt = {"type": "user", "uuid": "u0", "timestamp": "2026-02-10T09:59:59Z",
              "message": {"role": "user", "content": "hi"}}  # fmt: skip
    path = tmp_path / "hour.jsonl"
    path.write_text(json.dumps(prompt) + "\n" + json.dumps(line) + "\n")
    ref = reference(load_claude_code(path))
    assert ref is not None and ref.cache_write_1h == 2_000
    assert ref.weighted_input == 3 + 2 * 2_000 + 1_000  # not 3 + 2,500 + 1,000
    assert ref.to_json()["cache_write_1h"] == 2_000


def test_reference_counts_each_response_once():
    ref = reference(load_claude_code(FIXTURES / "merged.jsonl"))
    assert ref is not None
    assert ref.requests == 2
    assert ref.cache_write == 1060 and ref.cache_read == 11000
    assert ref.weighted_input == weighted_input(8, 1060, 11000)
    assert ref.peak_context_tokens == 6065


@pytest.mark.parametrize(
    ("name", "weighted", "requests", "write", "read", "peak"),
    [
        ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 1_761_454, 139, 479_537, 11_618_567, 164_831),
        ("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl", 1_952_006, 217, 237_121, 16_553_628, 141_787),
    ],
)
def test_reference_of_the_long_sessions_matches_the_readme(name, weighted, requests, write, read, peak):
    path = TRANSCRIPTS / name
    transcript = load_claude_code(path)
    ref = reference(transcript)
    assert ref is not None
    assert (ref.weighted_input, ref.requests, ref.cache_write, ref.cache_read) == (
        weighted,
        requests,
        write,
        read,
    )
    assert ref.peak_context_tokens == peak
    # the estimator against the as-sent context (Claude Code's own compaction applied) stays close
    calibration = calibrate(transcript, transcript.model)
    assert len(calibration.errors) == requests
    assert calibration.errors[0] == 0  # the live estimator takes its overhead from the first request
    assert percentile(calibration.errors, 0.5) < 5
    # our cl100k counts are scaled up to the recorded tokenizer (which counts more for this text)
    assert 1.1 < calibration.factor < 2.0
    # the replay's overhead is the typical request's (26k and 33k; their first requests show 26k)
    assert 20_000 < calibration.overhead < 35_000


def test_percentile_nearest_rank():
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([7.0], 0.95) == 7.0
