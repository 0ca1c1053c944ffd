"""The summary at the end of a batch, and the lines a piped batch prints as tasks end."""

from __future__ import annotations

import io

from agent_cli.batch.progress import Progress, describe
from agent_cli.batch.results import Row
from agent_cli.batch.summary import percentile, print_summary, summarize
from agent_cli.core.types import Usage


def rows() -> list[Row]:
    made = [
        Row(f"t{n}", False, "ok", usage=Usage(100, 10, 300, 100), total_cost_usd=0.01, duration_ms=n * 1000)
        for n in range(1, 20)
    ]
    return [*made, Row("bad", True, "boom [red]x[/red]", duration_ms=20_000)]


def test_the_summary_counts_tokens_cost_cache_and_times():
    summary = summarize(rows(), skipped=3, interrupted=1, not_started=2, bad_lines=1, wall_ms=42_000)

    assert (summary.done, summary.failed, summary.skipped) == (19, 1, 3)
    assert summary.input_tokens == 19 * 500 and summary.output_tokens == 19 * 10
    assert round(summary.cache_hit_rate, 3) == 0.6  # 300 of every 500 read from the cache
    assert summary.cost_usd == 0.19
    assert (summary.p50_ms, summary.p95_ms) == (10_000, 19_000)
    out = io.StringIO()
    print_summary(summary, out)
    text = out.getvalue()
    for expected in (
        "│ 19 ",
        "1  (bad)",
        "9,500 in · 190 out",
        "$0.1900",
        "60.0%",
        "10.0 s / 19.0 s",
        "42.0 s",
    ):
        assert expected in text, text
    assert "interrupted" in text and "not started" in text and "bad lines" in text


def test_percentile_is_nearest_rank():
    assert percentile([], 50) == 0
    assert percentile([5], 95) == 5
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile(list(range(1, 101)), 95) == 95


def test_a_failed_task_with_no_result_says_why_it_ended():
    maxed = Row("m", True, "", num_turns=3, stop_reason="max_turns", subtype="error_max_turns")
    assert describe(maxed) == "error: max turns reached (3 model calls); the task is not finished"
    crashed = Row("c", True, "", errors=("session: disk full",))
    assert describe(crashed) == "error: session: disk full"


def test_piped_progress_is_plain_lines_with_the_count_and_no_markup():
    out = io.StringIO()
    ok, bad = rows()[0], rows()[-1]
    with Progress(3, out, live=False) as progress:
        progress.started("t1")
        progress.finished("t1", ok)
        progress.died("bad", "killed by SIGKILL", retrying=True)
        progress.finished("bad", bad)
        progress.finished("t9", None)
    assert out.getvalue().splitlines() == [
        "[1/3] ✓ t1  0 turns · 1.0 s · $0.0100 · no changes",
        "[1/3] ! bad  its process died (killed by SIGKILL); running it once more",
        "[2/3] ✗ bad  error: boom [red]x[/red]",
        "[3/3] … t9  interrupted; its session is kept (run the batch again to go on)",
    ]
    assert (
        progress.counts.line()
        == "batch: 1 done · 0 running · 1 failed · 1 interrupted · 0 waiting · 510 tokens · $0.0100"
    )
