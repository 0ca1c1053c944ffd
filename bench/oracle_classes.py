"""Where the predictor's distance from the oracle lies: the oracle's knowledge for some classes only.

    .venv/bin/python bench/oracle_classes.py [--dir ../shared/transcripts] [--set edited] [--set patch,old-patch]

`--policy oracle` knows, for every call, whether a later edit needs it (replay/oracle.py). Here it
knows that only for the calls the predictor (context/reuse.py) puts in the given classes and leaves
every other call to the predictor, so the drop in adjusted cost from the default to each row is
what perfect knowledge of those classes alone would save. Each `--set` is one comma-separated row;
without one, the default groups below. Sessions of fewer than LONG requests are skipped.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.replay.driver import load_transcript, replay, sessions_in  # noqa: E402
from bench._baselines import baseline_of  # noqa: E402

LONG = 50  # requests, as bench/policies.py's long sessions
GROUPS = (
    "whole",
    "edited",
    "old-read",
    "queued",
    "editing",
    "named,partial,passed",
    "patch,old-patch",
    "output,listing,glimpse,other",
)


def adjusted(path: Path, classes: frozenset[str] | None) -> tuple[float, int]:
    """(adjusted cost / Claude Code's bill, blind edits) of one session under the oracle for `classes`
    (None: the default policy)."""
    if classes is None:
        result = replay(path, baseline=baseline_of(path))
    else:
        result = replay(path, policy="oracle", oracle_classes=classes, baseline=baseline_of(path))
    reference = result.reference
    assert reference is not None and reference.weighted_input
    return result.fidelity.adjusted_weighted_input / reference.weighted_input, result.fidelity.blind


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT.parent / "shared" / "transcripts")
    parser.add_argument("--set", action="append", dest="sets", help="comma-separated predictor classes")
    args = parser.parse_args(argv)
    paths = [p for p in sessions_in(args.dir)[0] if len(load_transcript(p).requests) >= LONG]
    if not paths:
        raise SystemExit(f"no session of {LONG} requests or more (*.jsonl) in {args.dir}: pass --dir")
    print("| oracle for | " + " | ".join(p.name[:8] for p in paths) + " | median | blind |")
    print("|---|" + "---:|" * (len(paths) + 2))
    rows: list[tuple[str, frozenset[str] | None]] = [("nothing (the default)", None)]
    rows += [(s, frozenset(s.split(","))) for s in (args.sets or GROUPS)]
    for label, classes in rows:
        scores = [adjusted(p, classes) for p in paths]
        ratios = [r for r, _ in scores]
        cells = " | ".join(f"{r:.3f}x" for r in ratios)
        blind = sum(b for _, b in scores)
        print(f"| {label} | {cells} | {statistics.median(ratios):.3f}x | {blind} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
