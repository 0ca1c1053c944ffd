"""T3 region compaction: contiguous runs of tool traffic outside the recent tail, summarized largest first.

A run is a sequence of consecutive tool pairs (an assistant message with tool_use + the user message
holding only its results and unpinned reminders) whose tools are compactable. Each run worth it is
summarized by the cheap model (prompts/region.md) to about `region_ratio` of its size. Pair
structure stays valid: every tool_use block stays, the first large result of the run carries the
summary, the run's other large results a one-line pointer to it; reminders inside the run are folded
into the summary. The person's words and the assistant's text are not touched. Stops once usage is at
or below `region_target_fraction` of the budget, or when the summarizer fails (what was done stays).
Below the auto threshold it is a priced bet like T1's (`pays`): it runs only when what it frees,
read by every request of the forecast, saves more than the cache rewrite and the summarizer cost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from agent_cli.context.eviction import CACHE_READ
from agent_cli.context.model import Compaction, SpanReplacement, Summarizer, TierContext, TierName
from agent_cli.context.tiers.condense import Templates, condense
from agent_cli.context.tiers.markers import POINTER_PREFIX, REGION_PREFIX, make_ref
from agent_cli.context.tiers.micro import is_cache_cold
from agent_cli.context.tiers.pricing import auto_threshold, market_for, valued, valued_tokens
from agent_cli.context.tiers.rendering import render_for_summary, render_transcript
from agent_cli.context.tiers.selection import (
    find_tail_start,
    group_view,
    is_compacted_result,
    is_person_message,
    result_tool_name,
    tail_tokens_for,
    tool_target,
    tool_uses_by_id,
)
from agent_cli.core.types import Block, Message

log = logging.getLogger(__name__)

MIN_RUN_TOKENS = 500  # below this a summary call costs more than it saves


@dataclass(frozen=True)
class Run:
    start: int  # view[start:end], whole tool pairs
    end: int
    worth: int  # tokens of the bodies that would be replaced


def _pure_results(message: Message) -> bool:
    """A user message holding tool results and nothing that must stay (no words, nothing pinned)."""
    if message.role != "user" or not message.tool_results() or is_person_message(message):
        return False
    return all(
        b.type == "tool_result" or (b.meta.source == "reminder" and not b.meta.pinned) for b in message.blocks
    )


def _replaceable(block: Block, keep_chars: int) -> bool:
    """A result body worth replacing: not pinned, not tiny, not already a placeholder or summary."""
    return (
        block.type == "tool_result"
        and not block.meta.pinned
        and len(block.text) > keep_chars
        and not is_compacted_result(block)
    )


def find_runs(view: Sequence[Message], ctx: TierContext, uses: dict[str, Block]) -> list[Run]:
    """Runs outside the tail, largest first. A pair of the working set (context/working_set.py) ends a
    run: the model is still working with it."""
    ws = valued(view, ctx)
    tail = find_tail_start(
        view, ctx.counter, tail_tokens_for(ctx.config, ctx.budget, ctx.used), keep_last_person=False
    )
    runs: list[Run] = []
    current: list[tuple[int, int]] = []

    def close() -> None:
        if current:
            start, end = current[0][0], current[-1][1]
            worth = sum(
                ctx.counter.text(b.text)
                for m in view[start:end]
                for b in m.blocks
                if _replaceable(b, ctx.config.micro_keep_chars)
                or (b.type == "text" and b.meta.source == "reminder")
            )
            if worth >= MIN_RUN_TOKENS:
                runs.append(Run(start, end, worth))
            current.clear()

    for group in group_view(view):
        ok = (
            group.start >= 1
            and group.end <= tail
            and group.end - group.start == 2
            and _pure_results(view[group.start + 1])
            and not any(ws.keeps(b.tool_use_id) for b in view[group.start + 1].tool_results())
            and all(
                ctx.tool_compactable(result_tool_name(b, uses)) for b in view[group.start + 1].tool_results()
            )
        )
        if ok:
            current.append((group.start, group.end))
        else:
            close()
    close()
    return sorted(runs, key=lambda r: r.worth, reverse=True)


class RegionCompact:
    name: TierName = "T3"

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if ctx.summarizer is None or not view:
            return None
        try:
            template = ctx.prompts("region")
        except Exception as exc:  # a missing prompt file must not break the turn: T4 still follows
            log.warning("region compaction skipped: %s", exc)
            return None
        if not template.strip():
            log.warning("prompts/region.md is missing: region compaction skipped")
            return None
        uses = tool_uses_by_id(view)
        target = ctx.config.region_target_fraction * ctx.budget
        used = ctx.used
        runs = find_runs(view, ctx, uses)
        due = auto_threshold(ctx.config.auto_fraction, ctx.budget, valued_tokens(view, ctx))
        if trigger != "manual" and used < due and not pays(view, ctx, runs):
            return None  # below the auto threshold T3 is a bet like T1's: it must pay
        replacements: list[SpanReplacement] = []
        originals: dict[str, str] = {}
        summaries: list[str] = []
        for run in runs:
            if used <= target:
                break
            messages = view[run.start : run.end]
            try:
                summary = await summarize_run(messages, run, ctx, ctx.summarizer, template, uses)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("region summary failed (%s); stopping T3 here", exc)
                break
            original = render_transcript(messages, uses=uses)
            ref = make_ref("region", original)
            spans = rewrite_run(view, run, summary, ref, uses, ctx.config.micro_keep_chars)
            saved = sum(
                sum(ctx.counter.message(m) for m in view[s.start : s.end])
                - sum(ctx.counter.message(m) for m in s.messages)
                for s in spans
            )
            if saved <= 0:
                continue
            replacements += spans
            originals[ref] = original
            summaries.append(summary)
            used -= saved
        if not replacements:
            return None
        return Compaction(
            tier="T3",
            trigger=trigger,
            replacements=tuple(sorted(replacements, key=lambda s: s.start)),
            before=ctx.used,
            after=used,
            refs=tuple(originals),
            summary="\n\n".join(summaries),
            originals=originals,
        )


def pays(view: Sequence[Message], ctx: TierContext, runs: Sequence[Run]) -> bool:
    """Whether summarizing `runs` saves, over the forecast, more than it costs: the cache rewritten
    from the first run on (tiers/pricing.py prices it) and the summarizer reading the runs."""
    if not runs:
        return False
    tokens = [ctx.counter.message(m) for m in view]
    market = market_for(view, ctx, tokens, cold=is_cache_cold(ctx))
    worth = sum(r.worth for r in runs)
    freed = int(worth * (1 - ctx.config.region_ratio))
    saving = CACHE_READ * freed * market.requests
    return saving > market.rewrite(min(r.start for r in runs), freed) + worth


async def summarize_run(
    messages: Sequence[Message],
    run: Run,
    ctx: TierContext,
    summarizer: Summarizer,
    template: str,
    uses: dict[str, Block],
) -> str:
    """The run's summary from its whole text; a run larger than the summarizer takes goes in chunks,
    each updating the notes so far (prompts/region_update.md)."""
    values = {
        "focus": ctx.focus.strip() or "(none)",
        "target_tokens": str(max(50, int(run.worth * ctx.config.region_ratio))),
    }
    pieces = [render_for_summary([m], None, uses) for m in messages]
    update = ctx.prompts("region_update") or template
    text = await condense(
        pieces,
        templates=Templates(template, update),
        summarizer=summarizer,
        counter=ctx.counter,
        limit=ctx.config.summarizer_input_tokens,
        values=values,
    )
    if not text:
        raise ValueError("the summarizer returned an empty region summary")
    return text


def rewrite_run(
    view: Sequence[Message], run: Run, summary: str, ref: str, uses: dict[str, Block], keep_chars: int
) -> list[SpanReplacement]:
    """One replacement per user message of the run: results become the summary or a pointer to it."""
    return rewrite_results(view, range(run.start + 1, run.end, 2), summary, ref, uses, keep_chars)


def rewrite_results(
    view: Sequence[Message],
    indices: Iterable[int],
    summary: str,
    ref: str,
    uses: dict[str, Block],
    keep_chars: int,
    label: str = "",
) -> list[SpanReplacement]:
    """Rewrite the tool-result messages at `indices` as one region: the first large result carries
    the summary, the others a pointer to it; reminders among them are folded into the summary."""
    indices = list(indices)
    spans: list[SpanReplacement] = []
    first_id = ""
    count = sum(1 for i in indices for b in view[i].tool_results() if _replaceable(b, keep_chars))
    about = f" ({label})" if label else ""
    for index in indices:
        message = view[index]
        blocks: list[Block] = []
        for block in message.blocks:
            if block.type == "text":
                continue  # a reminder: folded into the summary, recallable with the run
            if not _replaceable(block, keep_chars):
                blocks.append(block)
                continue
            # an output kept whole in the store (T0, bash) is named by its own ref: one recall gets it
            own = f"; its full output: ref {block.meta.ref}" if block.meta.ref else ""
            if not first_id:
                first_id = block.tool_use_id
                text = (
                    f"{REGION_PREFIX} ref {ref}{about} — {count} tool results summarized; "
                    f"use recall to see them{own}]\n{summary}"
                )
            else:
                use = uses.get(block.tool_use_id)
                what = f"{result_tool_name(block, uses)} {tool_target(use.input) if use else ''}".strip()
                text = (
                    f"{POINTER_PREFIX} ref {ref} (in the result of {first_id}) — {what}, "
                    f"{len(block.text)} chars{own}]"
                )
            blocks.append(replace(block, text=text, meta=replace(block.meta, ref=block.meta.ref or ref)))
        spans.append(SpanReplacement(index, index + 1, (replace(message, blocks=tuple(blocks)),)))
    return spans
