"""How long T1 takes to make room over the threshold in a long view (context/eviction.py:_make_room).

    .venv/bin/python bench/make_room.py [--reads 400]

A view of N whole-file reads (2N + 1 messages, every read beyond the cache's look-back) and one
candidate per read; the plan must free 5-6k tokens. Prints the wall time of one forced plan.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.eviction import Candidate, Market, plan  # noqa: E402
from agent_cli.context.tiers.pricing import RewriteModel  # noqa: E402
from bench._args import count  # noqa: E402
from tests.context.test_tiers import asst, person, results  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=count, default=400)
    args = parser.parse_args(argv)
    view = [person("go")]
    for i in range(args.reads):
        view.append(asst("", (f"c{i}", "read_file", {"path": f"f{i}.py"})))
        view.append(results((f"c{i}", "read_file", "x" * 400)))
    tokens = [120] * len(view)
    rewrite = RewriteModel(view, tokens, cold=False, cached=None)
    candidates = [
        Candidate(f"c{i}", 2 * i + 2, 120, 0.05 + (i % 7) * 0.01, args.reads - i, "whole", f"f{i}.py", 0.9)
        for i in range(args.reads)
    ]
    market = Market(30, sum(tokens), 60_000, rewrite)
    began = time.perf_counter()
    chosen = plan(candidates, market, excess=5_000, target_excess=6_000)
    took = time.perf_counter() - began
    print(
        f"forced plan, {args.reads} candidates, {len(view)} messages: {took * 1000:.0f} ms, cleared {len(chosen.chosen)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
