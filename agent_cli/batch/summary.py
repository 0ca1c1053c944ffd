"""The table at the end of a batch: how many tasks were done, failed, skipped (a result from an
earlier run) and interrupted; the tokens, the cost and the cache hit rate of this run's tasks; their
p50 and p95 time; and the batch's wall time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from agent_cli.batch.results import Row


@dataclass(frozen=True)
class Summary:
    done: int
    failed: int
    skipped: int
    interrupted: int
    not_started: int
    bad_lines: int
    input_tokens: int  # everything read: uncached, cache writes and cache reads
    cache_read_tokens: int
    output_tokens: int
    cost_usd: float
    p50_ms: int
    p95_ms: int
    wall_ms: int
    failed_ids: tuple[str, ...] = ()

    @property
    def cache_hit_rate(self) -> float:
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0

    def rows(self) -> list[tuple[str, str]]:
        failed = str(self.failed)
        if self.failed:
            more = " …" if self.failed > 8 else ""
            failed += f"  ({', '.join(self.failed_ids[:8])}{more})"
        out = [
            ("done", str(self.done)),
            ("failed", failed),
            ("skipped (a result already)", str(self.skipped)),
        ]
        if self.interrupted or self.not_started:
            out.append(("interrupted", str(self.interrupted)))
            out.append(("not started", str(self.not_started)))
        if self.bad_lines:
            out.append(("bad lines", str(self.bad_lines)))
        out += [
            ("tokens", f"{self.input_tokens:,} in · {self.output_tokens:,} out"),
            ("cost", f"${self.cost_usd:.4f}"),
            ("cache hit", f"{self.cache_hit_rate:.1%}"),
            ("time p50 / p95", f"{self.p50_ms / 1000:.1f} s / {self.p95_ms / 1000:.1f} s"),
            ("wall time", f"{self.wall_ms / 1000:.1f} s"),
        ]
        return out


def summarize(
    rows: Sequence[Row],
    *,
    skipped: int,
    interrupted: int,
    not_started: int,
    bad_lines: int,
    wall_ms: int,
) -> Summary:
    failed = [row for row in rows if row.is_error]
    times = sorted(row.duration_ms for row in rows)
    return Summary(
        done=len(rows) - len(failed),
        failed=len(failed),
        skipped=skipped,
        interrupted=interrupted,
        not_started=not_started,
        bad_lines=bad_lines,
        input_tokens=sum(row.usage.total_input for row in rows),
        cache_read_tokens=sum(row.usage.cache_read_input_tokens for row in rows),
        output_tokens=sum(row.usage.output_tokens for row in rows),
        cost_usd=round(sum(row.total_cost_usd for row in rows), 6),
        p50_ms=percentile(times, 50),
        p95_ms=percentile(times, 95),
        wall_ms=wall_ms,
        failed_ids=tuple(row.id for row in failed),
    )


def percentile(sorted_values: Sequence[int], pct: float) -> int:
    """The nearest-rank percentile (0 for none)."""
    if not sorted_values:
        return 0
    rank = max(1, -(-len(sorted_values) * pct // 100))  # ceil
    return int(sorted_values[int(rank) - 1])


def print_summary(summary: Summary, out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="agent batch", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    for key, value in summary.rows():
        table.add_row(Text(key), Text(value))
    Console(file=out, highlight=False, soft_wrap=False).print(table)
