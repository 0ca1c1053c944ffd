"""The summarizer sees the whole text: T3 and T4 condense material larger than its input in chunks,
each updating the running summary, and never cut a tool output to head + tail."""

from __future__ import annotations

from collections import deque

from agent_cli.context.model import ContextConfig
from agent_cli.context.offload import persisted_text
from agent_cli.context.tiers import FullCompact, RegionCompact
from agent_cli.context.tiers.condense import split_text, take_chunk
from tests.context.test_tiers import (
    Counter,
    FakeSummarizer,
    applied,
    asst,
    make_ctx,
    person,
    read_pair,
    results,
    work_session,
)

SMALL = ContextConfig(summarizer_input_tokens=3_000)


def _log_lines(n: int) -> str:
    return "".join(f"build step {k:05d}: compiled module_{k}.o\n" for k in range(n))


def _with_big_output(lines: int) -> list:
    big = _log_lines(lines)
    view = [person("Build it and tell me what failed.", 1)]
    view += read_pair(0, 1_500)
    view += [asst("Building.", ("b1", "bash", {"command": "make all"})), results(("b1", "bash", big))]
    for n in range(1, 9):
        view += read_pair(n, 1_500)
    view += [asst("Build done; nothing failed."), person("Now run the tests.", 2)]
    return view


def _requests_text(summarizer: FakeSummarizer) -> str:
    return "\n".join(content for _, content in summarizer.calls)


def test_split_text_gives_back_exactly_the_text_in_parts_that_fit():
    text = _log_lines(2_000) + "x" * 30_000  # a long last line too
    parts = split_text(text, 1_000, Counter())
    assert "".join(parts) == text
    assert all(Counter().text(p) <= 1_000 for p in parts)
    assert all(p.endswith("\n") for p in parts if "x" not in p)  # cut at line ends where there are some


def test_take_chunk_packs_pieces_and_splits_only_a_piece_too_large_alone():
    queue = deque(["a" * 400, "b" * 400, "c" * 40_000])
    first = take_chunk(queue, 300, Counter())
    assert first == "a" * 400 + "\n\n" + "b" * 400 and len(queue) == 1
    second = take_chunk(queue, 300, Counter())
    assert set(second) == {"c"} and len(queue) >= 1 and "".join(queue) + second == "c" * 40_000


async def test_t4_summarizer_sees_every_line_of_a_long_output_in_the_middle():
    view = _with_big_output(1_500)  # ~65k chars of output: many chunks at a 3k-token input
    summarizer = FakeSummarizer()
    ctx = make_ctx(view, budget=8_000, summarizer=summarizer, config=SMALL)
    compaction, _ = await applied(FullCompact(), view, ctx, "manual")
    assert compaction is not None and compaction.tier == "T4"
    seen = _requests_text(summarizer)
    assert all(f"build step {k:05d}:" in seen for k in range(1_500))  # the middle too
    assert "omitted" not in seen
    assert len(summarizer.calls) >= 5
    assert all(Counter().text(s + c) <= 3_300 for s, c in summarizer.calls)
    # each later chunk updates the running summary
    assert "summary number 1\n</current-summary>" in summarizer.calls[1][1]
    assert compaction.summary.endswith(f"summary number {len(summarizer.calls)}")


async def test_t3_summarizer_sees_every_line_of_a_run_larger_than_its_input():
    view = _with_big_output(1_200)
    summarizer = FakeSummarizer()
    ctx = make_ctx(view, budget=8_000, summarizer=summarizer, config=SMALL)
    compaction, new = await applied(RegionCompact(), view, ctx)
    assert compaction is not None and compaction.tier == "T3"
    seen = _requests_text(summarizer)
    assert all(f"build step {k:05d}:" in seen for k in range(1_200))
    assert "omitted" not in seen
    assert len(summarizer.calls) >= 4
    assert "<notes-so-far>\n## Goal\nsummary number 1\n</notes-so-far>" in summarizer.calls[1][1]


async def test_an_omission_reaches_the_summarizer_only_inside_a_stored_outputs_preview():
    full = _log_lines(3_000)
    shown = persisted_text("toolu_x", full, None, 2_000)  # what the model itself saw (T0)
    view = [person("Build it.", 1)] + read_pair(0, 1_500)
    view += [asst("Building.", ("bx", "bash", {"command": "make"})), results(("bx", "bash", shown))]
    view += work_session(6)[1:]
    summarizer = FakeSummarizer()
    ctx = make_ctx(view, budget=8_000, summarizer=summarizer, config=SMALL)
    await applied(FullCompact(), view, ctx, "manual")
    seen = _requests_text(summarizer)
    assert seen.count("omitted") == 1
    assert "chars omitted …\n" in seen and 'ref="toolu_x"' in seen
