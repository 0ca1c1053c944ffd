"""The context policy judged closed-loop: what its clears cost a model that must see what it edits.

    .venv/bin/python bench/closed_loop.py [--scenario batch ...] [--budget 60000 ...] [--jobs 2] [--json]

Each scenario runs through the real CLI (`python -m agent_cli.cli -p … --permission-mode yolo
--output-format json --budget-tokens N`) in a scratch git repository, against the local fake
Messages API answered by a reactive model (tests/fakeapi/reactive.py): before an edit whose old text
the request does not show, the model recalls the ref a placeholder names for the file, or reads the
file again — a forced re-read. Every scenario runs at each budget with the default policy, and once
unpressured: `[context] policy = "none"` and a budget of 1M tokens (the default model's window), so
nothing is managed and nothing is hidden.

Columns: requests (the model's; summarizer requests are in the weighted input, not counted here),
forced re-reads (recalls and reads the model had to make before an edit, and how many edits
needed them; "blind": edits it made without the text after trying), weighted input = uncached + 1.25 x cache write + 0.1 x cache read
as the server reported it (its prompt-cache simulation, a token = 4 characters of the request), and
its ratio to the same scenario unpressured. A run whose edits did not all land in the files, that
did not finish its scenario or whose tool calls failed is marked FAILED. The scenarios, the file
sizes and the run itself: tests/fakeapi/scenarios.py —
- batch: read 10 files of 250 lines whole, then edit a middle line of each;
- repeated: read one file, then edit 8 lines spread through it;
- repeated_loaded: the same after 9 whole reads of other files, so the edits run under pressure;
- interleaved: read A, edit A, read B, edit B, … over 10 files;
- exploration: 40 whole-file reads, then edit 10 of them;
- bash: read 5 files, then `seq 1 20000` before each of their edits;
- steps30: 30 tool calls — 15 x `seq 1 3000`, 14 small `echo`s between them, one read — and an answer
  (31 requests).

`--agents-md CHARS` (repeatable) runs each scenario in a project whose AGENTS.md has that many
characters: every request carries it, as in a real project, which shows how far a row depends on the
exact size of what is sent. `--line-extra CHARS` (repeatable) runs the batch with files whose every
line is CHARS characters longer (negative: shorter), so ten reads fill more or less of the budget.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.model import MIN_BUDGET_TOKENS  # noqa: E402
from bench._args import count  # noqa: E402
from tests.fakeapi.scenarios import (  # noqa: E402
    SCENARIOS,
    Scenario,
    batch,
    run_closed_loop,
    with_instructions,
)

BUDGETS = (40_000, 60_000, 100_000, 200_000)


@dataclass(frozen=True)
class Row:
    scenario: str
    budget: int | None  # None: unpressured
    requests: int
    side_requests: int
    forced: int
    forced_edits: int
    blind: int
    weighted_input: int
    ratio: float | None
    ok: bool
    problem: str = ""


def run(scenario: Scenario, budget: int | None) -> Row:
    """One run of `scenario` at `budget` (None: unpressured) in a scratch repository; no ratio yet."""
    root = Path(tempfile.mkdtemp(prefix=f"closed-loop-{scenario.name}-"))
    try:
        loop = run_closed_loop(scenario, root / "repo", budget)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    model = loop.model
    return Row(
        scenario=scenario.name,
        budget=budget,
        requests=model.requests,
        side_requests=model.side_requests,
        forced=len(model.forced),
        forced_edits=model.forced_edits,
        blind=len(model.blind),
        weighted_input=round(model.weighted_input),
        ratio=None,
        ok=not loop.problem,
        problem=loop.problem,
    )


def widened(name: str, extra: int) -> Scenario:
    """Scenario `name`; the batch's files with `extra` characters more on every line (negative: fewer)."""
    if not extra:
        return SCENARIOS[name]()
    return replace(batch(extra=extra), name=f"batch (lines {extra:+d})")


def grid(
    names: list[str],
    budgets: list[int],
    jobs: int,
    instructions: list[int] | None = None,
    extras: list[int] | None = None,
) -> list[Row]:
    """Every scenario at every budget and unpressured, with ratios to the unpressured run (in each
    project of `instructions`: AGENTS.md sizes, 0 for none; the batch also with each of `extras`)."""
    scenarios = [
        with_instructions(widened(n, e), c)
        for n in names
        for e in (extras or [0] if n == "batch" else [0])
        for c in instructions or [0]
    ]
    tasks = [(scenario, budget) for scenario in scenarios for budget in [None, *budgets]]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(lambda t: run(*t), tasks))
    base = {r.scenario: r.weighted_input for r in rows if r.budget is None}
    return [
        replace(r, ratio=round(r.weighted_input / base[r.scenario], 3) if base.get(r.scenario) else None)
        for r in rows
    ]


def table(rows: list[Row]) -> str:
    lines = [
        "| scenario | budget | requests | forced re-reads | weighted input | ratio to unpressured |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        budget = "unpressured" if r.budget is None else f"{r.budget // 1000}k"
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        plural = "s" if r.forced_edits != 1 else ""
        forced = f"{r.forced}" + (f" in {r.forced_edits} edit{plural}" if r.forced else "")
        forced += f", {r.blind} blind" if r.blind else ""
        status = "" if r.ok else f" FAILED: {r.problem}"
        lines.append(
            f"| {r.scenario} | {budget} | {r.requests} | {forced} | {r.weighted_input:,} | {ratio}{status} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="repeatable")
    parser.add_argument("--budget", action="append", type=int, help="repeatable (tokens)")
    parser.add_argument("--jobs", type=count, default=2, help="runs at once (default 2)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument(
        "--agents-md",
        action="append",
        type=int,
        metavar="CHARS",
        help="run in a project whose AGENTS.md has CHARS characters (repeatable; 0: none, the default)",
    )
    parser.add_argument(
        "--line-extra",
        action="append",
        type=int,
        metavar="CHARS",
        help="the batch's files with CHARS more characters on every line (repeatable; negative: fewer)",
    )
    args = parser.parse_args(argv)
    if any(b < MIN_BUDGET_TOKENS for b in args.budget or ()):  # the CLI's own floor
        parser.error(f"--budget must be at least {MIN_BUDGET_TOKENS} tokens (leave it out for 40k-200k)")
    names = args.scenario or list(SCENARIOS)
    rows = grid(names, args.budget or list(BUDGETS), args.jobs, args.agents_md, args.line_extra)
    if args.json:
        for r in rows:
            print(json.dumps(asdict(r)))
    else:
        print(table(rows))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
