"""Fit the reuse predictor's hazard (context/reuse.py: HAZARD) to when real sessions' edits used what they needed.

    .venv/bin/python bench/fit_reuse.py [--dir ../shared/transcripts] [--exclude NAME ...] [--table] [--by-session]

For every request of every recorded session, the view as it was sent with no management (every
message so far) goes through the predictor's features (`reuse.predict` with a flat hazard): each
tool call's class (named, whole, partial, edited, output, listing, other, stale) and age. The label
of (call, request) is whether a later recorded edit's old text is shown by this call's output or
input and by nothing more recent (the text the edit needed, as replay/fidelity.py reads it). Each
class's `p = prior × h / (h + age)` is then fitted by maximum likelihood (a grid over h, the prior
in closed form per h... by grid too). `--exclude` leaves sessions out (leave-one-out: bench/loo.py).
Prints the fitted table, with `--table` the observed rates by class and age, and with `--by-session`
each session's rate per class (how far sessions differ from the pooled fit: bench/RESULTS.md, stop 41).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.reuse import HAZARD, Hazard, predict  # noqa: E402
from agent_cli.replay.driver import load_transcript  # noqa: E402
from agent_cli.replay.oracle import needs  # noqa: E402
from bench._args import count  # noqa: E402

PLAIN = {cls: Hazard(0.5, 0.0) for cls in HAZARD}
FLOOR = 0.01  # the grid's smallest prior
TAUS = (0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 60, 100, 0)
AGE_BUCKETS = (0, 1, 2, 4, 8, 16, 32, 10**9)

Sample = tuple[str, int, bool]  # class, age, needed later


def samples(path: Path, stride: int = 1) -> list[Sample]:
    """(class, age, needed) for every tool call at every `stride`-th request of one session."""
    transcript = load_transcript(path)
    source = needs(transcript)  # call id -> positions of the edits it supplied (replay/oracle.py)
    out: list[Sample] = []
    for request in transcript.requests[::stride]:
        view = transcript.messages[: request.position]
        if not view:
            continue
        for call, guess in predict(view, hazard=PLAIN).items():
            needed = any(p >= request.position for p in source.get(call, ()))
            out.append((guess.cls, guess.age, needed))
    return out


def log_likelihood(data: Sequence[tuple[int, int, int]], prior: float, tau: float) -> float:
    """data: (age, n, positives)."""
    total = 0.0
    for age, n, k in data:
        p = Hazard(prior, tau).at(age)
        p = min(max(p, 1e-6), 1 - 1e-6)
        total += k * math.log(p) + (n - k) * math.log(1 - p)
    return total


FLAT = frozenset(
    {"named"}
)  # pointed at by the person, the todo list or a failing test: the pointer does not age


def fit(data: Sequence[tuple[int, int, int]], flat: bool = False) -> Hazard:
    """Maximum likelihood over the grid; a `flat` class only fits its prior (no decay). A class
    never seen needed gets the grid's floor, flat: a p of 0 no miss could raise (reuse.learned)."""
    best, best_ll = Hazard(0.0, 0.0), -math.inf
    positives = sum(k for _, _, k in data)
    if not positives:
        return Hazard(FLOOR, 0.0)
    for tau in (0,) if flat else TAUS:
        for step in range(1, 100):
            prior = step / 100
            ll = log_likelihood(data, prior, tau)
            if ll > best_ll:
                best, best_ll = Hazard(prior, float(tau)), ll
    return best


def grouped(all_samples: Iterable[Sample]) -> dict[str, list[tuple[int, int, int]]]:
    counts: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for cls, age, needed in all_samples:
        cell = counts[cls][age]
        cell[0] += 1
        cell[1] += int(needed)
    return {cls: [(age, n, k) for age, (n, k) in sorted(ages.items())] for cls, ages in counts.items()}


def fitted(paths: Sequence[Path], stride: int = 1) -> dict[str, Hazard]:
    """The hazard fitted on `paths` (classes with no data keep the shipped prior)."""
    data = grouped(s for path in paths for s in samples(path, stride))
    out = dict(HAZARD)
    for cls, rows in data.items():
        if cls in out and cls != "stale":
            out[cls] = fit(rows, cls in FLAT)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT.parent / "shared" / "transcripts")
    parser.add_argument("--exclude", action="append", default=[], help="leave this session out")
    parser.add_argument("--stride", type=count, default=1, help="use every N-th request")
    parser.add_argument("--table", action="store_true", help="also print observed rates by age")
    parser.add_argument("--by-session", action="store_true", help="also print each session's rate per class")
    args = parser.parse_args(argv)
    paths = [p for p in sorted(args.dir.glob("*.jsonl")) if not any(x in p.name for x in args.exclude)]
    if not paths:
        raise SystemExit(f"no sessions (*.jsonl) in {args.dir} (after --exclude): nothing to fit")
    per = {path.name: samples(path, args.stride) for path in paths}
    data = grouped(s for rows in per.values() for s in rows)
    print(f"sessions: {', '.join(p.name[:16] for p in paths)}")
    print(f"{'class':8} {'prior':>6} {'tau':>9} {'items':>7} {'needed':>7}")
    for cls in sorted(data):
        rows = data[cls]
        hazard = fit(rows, cls in FLAT) if cls != "stale" else Hazard(0.0, 0.0)
        n, k = sum(r[1] for r in rows), sum(r[2] for r in rows)
        print(f"{cls:8} {hazard.prior:6.2f} {hazard.tau:9.2f} {n:7d} {k:7d}")
        if args.by_session:  # sessions differ far more than one fit says: the rate in each
            for name, rows_of in per.items():
                mine = [needed for c, _, needed in rows_of if c == cls]
                if mine:
                    print(f"    {name[:16]:16} {sum(mine) / len(mine):5.3f} of {len(mine)}")
        if args.table:
            for lo, hi in zip(AGE_BUCKETS, AGE_BUCKETS[1:], strict=False):
                cell = [(a, m, j) for a, m, j in rows if lo <= a < hi]
                m, j = sum(c[1] for c in cell), sum(c[2] for c in cell)
                if m:
                    print(f"    age {lo:>3}-{min(hi - 1, 999):<3} {j / m:5.2f} of {m}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
