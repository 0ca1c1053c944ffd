"""Replay every recorded session under every compaction policy and compare with what Claude Code spent.

    .venv/bin/python bench/policies.py [--dir tests/replay/fixtures/transcripts] [--policy default ...] [--json]

For each file and policy: weighted input (uncached 1, cache write 1.25, cache read 0.1) and its ratio
to Claude Code's recorded weighted input, peak context and its ratio to the recorded peak,
compactions, integrity (orphans, over-budget requests), recall (texts that left the view given back
byte-identical) and fidelity (recorded edits, blind ones, the adjusted weighted input).
Goals (printed next to the numbers): on each long session the default policy costs <= 0.75x Claude
Code's weighted input and <= 0.70x adjusted, peaks <= 0.6x its context; blind <= 2% of the edits
visible with no management; integrity 0; everything compacted recoverable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_cli.replay.driver import POLICIES, replay  # noqa: E402
from agent_cli.replay.report import ReplayResult  # noqa: E402

LONG_SESSION_REQUESTS = 50  # a session with at least this many requests is "long" for the goals
GOAL_WEIGHTED = 0.75
GOAL_PEAK = 0.60
GOAL_BLIND = 0.02  # of the edits visible with no management (fidelity.py)
GOAL_ADJUSTED = 0.70  # adjusted weighted input (one re-read per blind edit) over Claude Code's


def measure(path: Path, policy: str) -> dict[str, Any]:
    start = time.perf_counter()
    result = replay(path, policy=policy)
    seconds = time.perf_counter() - start
    return {
        **result.to_json(),
        "seconds": round(seconds, 2),
        "calibration_factor": round(result.calibration_factor, 3),
        **_ratios(result),
    }


def _ratios(result: ReplayResult) -> dict[str, Any]:
    ref = result.reference
    if ref is None:
        return {"weighted_ratio": None, "peak_ratio": None, "adjusted_ratio": None}
    return {
        "adjusted_ratio": round(result.fidelity.adjusted_weighted_input / ref.weighted_input, 3)
        if ref.weighted_input
        else None,
        "weighted_ratio": round(result.weighted_input / ref.weighted_input, 3)
        if ref.weighted_input
        else None,
        "peak_ratio": round(result.peak_context_tokens / ref.peak_context_tokens, 3)
        if ref.peak_context_tokens
        else None,
    }


def goals(row: dict[str, Any]) -> list[tuple[str, bool]]:
    """(goal, met) for one row; the cost goals apply to the default policy on long sessions."""
    out: list[tuple[str, bool]] = []
    integrity = row["integrity"]
    recall = row["recall"]
    if row["policy"] == "default":
        out.append(("integrity 0", not any(integrity.values())))
        out.append(("all compacted recoverable", recall["recoverable_items"] == recall["compacted_items"]))
        fid = row["fidelity"]
        if fid["visible_unmanaged"]:
            out.append((f"blind <= {GOAL_BLIND:.0%}", fid["blind"] <= GOAL_BLIND * fid["visible_unmanaged"]))
        if row["requests"] >= LONG_SESSION_REQUESTS and row["adjusted_ratio"] is not None:
            out.append((f"adjusted <= {GOAL_ADJUSTED}x", row["adjusted_ratio"] <= GOAL_ADJUSTED))
        if row["requests"] >= LONG_SESSION_REQUESTS and row["weighted_ratio"] is not None:
            out.append((f"weighted <= {GOAL_WEIGHTED}x", row["weighted_ratio"] <= GOAL_WEIGHTED))
            out.append((f"peak <= {GOAL_PEAK}x", row["peak_ratio"] <= GOAL_PEAK))
    return out


def _tiers(row: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for c in row["compactions"]:
        counts[c["tier"]] = counts.get(c["tier"], 0) + 1
    return " ".join(f"{t}x{n}" for t, n in sorted(counts.items())) or "-"


def render(rows: list[dict[str, Any]], console: Console) -> None:
    for file in dict.fromkeys(r["file"] for r in rows):
        group = [r for r in rows if r["file"] == file]
        ref = group[0].get("reference")
        title = f"{Path(file).name} (token factor {group[0]['calibration_factor']})"
        if ref:
            title += (
                f"\nClaude Code recorded: {ref['requests']} requests, weighted input {ref['weighted_input']:,},"
                f" peak {ref['peak_context_tokens']:,}"
            )
        table = Table(title=title, title_justify="left")
        table.add_column("policy")
        table.add_column("weighted input", justify="right")
        table.add_column("peak", justify="right")
        table.add_column("mean", justify="right")
        table.add_column("compactions")
        table.add_column("integrity", justify="right")
        table.add_column("recall", justify="right")
        table.add_column("edits", justify="right")
        table.add_column("blind", justify="right")
        table.add_column("adjusted", justify="right")
        for row in group:
            i = row["integrity"]
            fid = row["fidelity"]
            table.add_row(
                row["policy"],
                f"{row['weighted_input']:,}" + _ratio(row["weighted_ratio"]),
                f"{row['peak_context_tokens']:,}" + _ratio(row["peak_ratio"]),
                f"{row['mean_context_tokens']:,}",
                _tiers(row),
                f"{i['orphan_tool_uses']}/{i['orphan_tool_results']}/{i['over_budget_requests']}",
                f"{row['recall']['recoverable_items']}/{row['recall']['compacted_items']}",
                str(fid["edits"]),
                f"{fid['blind']}/{fid['visible_unmanaged']}",
                f"{fid['adjusted_weighted_input']:,}" + _ratio(row["adjusted_ratio"]),
            )
        console.print(table)
        for row in group:
            for name, ok in goals(row):
                mark = "[green]met[/]" if ok else "[red]MISSED[/]"
                console.print(f"  goal ({row['policy']}): {name}: {mark}")
    console.print(
        "integrity = orphan tool_uses / orphan tool_results / over-budget requests; recall = items that left the "
        "view given back byte-identical / items that left it; blind = edits whose text the policy hid / visible with no management"
    )


def _ratio(value: float | None) -> str:
    return f" ({value:.2f}x)" if value is not None else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "tests" / "replay" / "fixtures" / "transcripts")
    parser.add_argument("--policy", action="append", choices=POLICIES, help="repeatable; default: all")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of tables")
    args = parser.parse_args(argv)
    files = sorted(args.dir.glob("*.jsonl"))
    if not files:
        print(f"no .jsonl files in {args.dir}", file=sys.stderr)
        return 2
    rows = [measure(path, policy) for path in files for policy in (args.policy or POLICIES)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    console = Console()
    render(rows, console)
    missed = [(Path(r["file"]).name, name) for r in rows for name, ok in goals(r) if not ok]
    console.print(
        f"goals (default policy): weighted <= {GOAL_WEIGHTED}x and peak <= {GOAL_PEAK}x Claude Code's on each "
        f"session of >= {LONG_SESSION_REQUESTS} requests; integrity 0; all compacted items recoverable"
    )
    console.print("[green]all goals met[/]" if not missed else f"[red]missed:[/] {missed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
