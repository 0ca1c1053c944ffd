"""What a recorded session's input holds beyond the context it sent: the replay's overhead, checked.

    .venv/bin/python bench/residuals.py [--dir ../shared/transcripts] [--every 12]

For each long session: the calibrated token factor, then per request the recorded input less our
count of the context the recorded agent sent (its own compactions applied). That rest should be its
system prompt and tools, about constant. Printed twice: with the thinking of older turns counted,
and left out as the API reads it for the session's model (replay/thinking_turns.py) — each with the
factor fitted to that way of counting. Then the replay's overhead (calibration.overhead_tokens: the
median rest) against the first request's rest, and the rest's 10th and 90th percentiles; what that
overhead alone costs against the bill and its share of the peak (a floor: no policy over the
messages goes below it, `floor`). And how
the input grew at each new turn: the recorded input against our count with the older turns'
thinking counted and left out (on a model that keeps it all, the control).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.tokens import TokenCounter  # noqa: E402
from agent_cli.replay import calibration, report, thinking_turns  # noqa: E402
from agent_cli.replay.claude_code import load_claude_code  # noqa: E402
from bench._args import count  # noqa: E402

LONG = 50


def rests(path: Path, strip: bool) -> tuple[float, list[tuple[int, int]]]:
    """(factor, [(request index, recorded input less our count of what it sent)])."""
    transcript = load_claude_code(path)
    real = thinking_turns.turns_kept
    if not strip:
        thinking_turns.turns_kept = lambda _model: 0  # count every thinking block
        calibration.turns_kept = thinking_turns.turns_kept
    try:
        fitted = calibration.calibrate(transcript, transcript.model)
        counter = TokenCounter(transcript.model, factor=fitted.factor)
        count = calibration._RawMessages(counter)
        out = []
        for request in transcript.requests:
            if request.usage is None or request.usage.total_input <= 0:
                continue
            sent = count(transcript.recorded_context(request), thinking_turns.turns_kept(request.model))
            billed = request.usage.total_input / fitted.scale_for(request.model)
            out.append((request.index, round(billed - counter.scale(sent))))
        return fitted.factor, out
    finally:
        thinking_turns.turns_kept = real
        calibration.turns_kept = real


def turn_starts(path: Path) -> list[tuple[int, int, int, int]]:
    """At each request that begins a turn (its last message a prompt): (request, growth of the
    recorded input since the request before, growth of our raw count with older turns' thinking
    counted, and left out). On a model that keeps all thinking the last column is what the growth
    would be if it did not: the control."""
    transcript = load_claude_code(path)
    count = calibration._RawMessages(TokenCounter(transcript.model, factor=1.0))
    out = []
    for before, request in zip(transcript.requests, transcript.requests[1:], strict=False):
        turns = thinking_turns.turns_kept(request.model) or 1
        if before.usage is None or request.usage is None or before.model != request.model:
            continue
        a, b = transcript.recorded_context(before), transcript.recorded_context(request)
        if not b or b[-1].role != "user" or b[-1].tool_results():
            continue
        billed = request.usage.total_input - before.usage.total_input
        out.append((request.index, billed, count(b, 0) - count(a, 0), count(b, turns) - count(a, turns)))
    return out


def floor(path: Path, overhead: int) -> str:
    """What the overhead alone costs against the bill: written once, then read on every request. No
    policy over the messages goes below it (the replay keeps the recorded agent's overhead)."""
    transcript = load_claude_code(path)
    billed = report.reference(transcript)
    if billed is None:
        return "overhead alone: no usage recorded"
    requests = billed.requests
    alone = report.weighted_input(0, overhead, overhead * (requests - 1))
    return (
        f"overhead alone (the median rest, written once, read {requests - 1} times): {alone:,.0f} weighted, "
        f"{alone / billed.weighted_input:.2f}x of the bill; {overhead / billed.peak_context_tokens:.2f}x of "
        "its peak"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT.parent / "shared" / "transcripts")
    parser.add_argument("--every", type=count, default=12, help="print every Nth request's rest")
    args = parser.parse_args()
    paths = [p for p in sorted(args.dir.glob("*.jsonl")) if len(load_claude_code(p).requests) >= LONG]
    if not paths:
        raise SystemExit(
            f"no Claude Code session of {LONG} requests or more (*.jsonl) in {args.dir}: pass --dir"
        )
    for path in paths:
        print(path.name)
        for strip, label in (
            (False, "older turns' thinking counted"),
            (True, "left out as the API reads it"),
        ):
            factor, rest = rests(path, strip)
            values = sorted(v for _, v in rest)
            shown = " ".join(f"{i}:{v:,}" for i, v in rest if i % args.every == 0)
            print(
                f"  {label}: factor {factor:.3f}; first {rest[0][1]:,}, median "
                f"{round(statistics.median(values)):,}, p10-p90 {values[len(values) // 10]:,}-"
                f"{values[9 * len(values) // 10]:,}\n    {shown}"
            )
        print(f"  {floor(path, round(statistics.median(values)))}")
        starts = turn_starts(path)
        if starts:
            print(
                "  new turns: request, recorded input's growth, our raw count's (thinking counted / left out)"
            )
            for index, billed, counted, left_out in starts:
                print(f"    {index}: {billed:+,}  {counted:+,} / {left_out:+,}")


if __name__ == "__main__":
    main()
