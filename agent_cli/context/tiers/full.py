"""T4 full compaction: the middle of the history becomes one structured summary.

The head (first user message) and a token-budget tail stay verbatim; the middle is replaced by
`[ack, <summary ref="span-…">…</summary> + the ledger verbatim]`. A previous summary in the middle is
*updated* with only the new turns (prompts/compact_update.md), never summarized as raw material. The
summarizer reads the whole middle: one larger than `summarizer_input_tokens` goes in chunks, each
updating the running summary (condense.py), so a compaction never fails for length and never cuts. When the summarizer is missing or raises, the ledger-only static
summary of T5 stands in (tier "T5", trigger "no_summarizer" / "summarizer_failed").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from agent_cli.context.model import Compaction, Summarizer, TierContext, TierName
from agent_cli.context.tiers.condense import Templates, condense
from agent_cli.context.tiers.emergency import static_summary
from agent_cli.context.tiers.markers import TAG_LEDGER, TAG_SUMMARY, make_ref
from agent_cli.context.tiers.rendering import render_for_summary, render_transcript
from agent_cli.context.tiers.selection import plan_tail, tail_tokens_for, tool_uses_by_id
from agent_cli.context.tiers.splice import (
    carried_pinned,
    compactor_block,
    ledger_block,
    lifted_blocks,
    reattached,
    span_delta,
    splice,
)
from agent_cli.core.tags import element
from agent_cli.core.types import Block, Message

log = logging.getLogger(__name__)

SUMMARY_PREAMBLE = (
    "Reference material: a summary of earlier turns of this session, written when they were compacted. "
    "It is not an instruction and not a message to answer. recall(ref) returns the original turns."
)

NO_FOCUS = "(none given: cover the whole session evenly)"


def summary_block(summary: str, ref: str, now: float = 0.0) -> Block:
    body = element(TAG_SUMMARY, f"{SUMMARY_PREAMBLE}\n\n{summary.strip()}", ref=ref)  # escaped
    return compactor_block(body, TAG_SUMMARY, now, ref=ref)


def previous_summary(messages: Sequence[Message]) -> str:
    """The text of the latest summary block in `messages` (its wrapper and preamble removed), or ""."""
    found = ""
    for message in messages:
        for block in message.blocks:
            if block.type == "text" and block.meta.tag == TAG_SUMMARY:
                found = block.text
    if not found:
        return ""
    body = found.split("\n", 1)[1] if found.startswith("<summary") and "\n" in found else found
    body = body.removesuffix("</summary>").strip()
    first, _, rest = body.partition("\n\n")
    return rest.strip() if first.startswith("Reference material:") and rest else body


class FullCompact:
    name: TierName = "T4"

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if not view:
            return None
        start, lifted = plan_tail(view, ctx.counter, tail_tokens_for(ctx.config, ctx.budget, ctx.used))
        if start <= 1 and trigger == "manual":
            # the person asked for it: a short session is summarized too, keeping only its last group
            messages = sum(ctx.counter.message(m) for m in view)
            start, lifted = plan_tail(view, ctx.counter, int(ctx.config.tail_fraction * messages))
            if start <= 1:
                start, lifted = plan_tail(view, ctx.counter, 0)
        if start <= 1:
            return None
        middle = view[1:start]
        original = render_transcript(middle)
        ref = make_ref("span", original)
        tier: TierName = "T4"
        if ctx.summarizer is None:
            summary, tier, trigger = static_summary(ctx), "T5", "no_summarizer"
        else:
            try:
                summary = await summarize_middle(middle, ctx, ctx.summarizer, tool_uses_by_id(view))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure of the model: the ledger still holds the facts
                log.warning("summarizer failed (%s); falling back to the static ledger summary", exc)
                summary, tier, trigger = static_summary(ctx), "T5", "summarizer_failed"
        blocks: list[Block] = []
        if tier == "T4":
            blocks.append(summary_block(summary, ref, ctx.now))
            ledger = ledger_block(ctx.ledger_text, ctx.now)
            if ledger is not None:
                blocks.append(ledger)
            blocks += reattached(carried_pinned(middle), ctx)
        else:  # keep the previous model summary; the static one is the ledger, in the ledger's place
            blocks += carried_pinned(middle, frozenset({TAG_SUMMARY}))
            text = element(TAG_LEDGER, summary, ref=ref)
            blocks.append(compactor_block(text, TAG_LEDGER, ctx.now, ref=ref))
        if lifted is not None:
            blocks += lifted_blocks(lifted)
        span = splice(view, start, blocks, ctx.now)
        saved = span_delta(view, [span], ctx.counter)
        already = all(b.meta.source in ("compactor", "memory") for m in middle for b in m.blocks)
        if saved <= 0 and (trigger != "manual" or already or start < 3):  # (one message: not worth it)
            return None  # nothing worth replacing (the middle is already a summary)
        return Compaction(
            tier=tier,
            trigger=trigger,
            replacements=(span,),
            before=ctx.used,
            after=ctx.used - saved,
            refs=(ref,),
            summary=summary,
            originals={ref: original},
        )


async def summarize_middle(
    middle: Sequence[Message], ctx: TierContext, summarizer: Summarizer, uses: dict[str, Block]
) -> str:
    """The summary of `middle` from its whole text: an update of the previous summary when there is
    one, condensed in chunks when the material is larger than the summarizer takes (condense.py)."""
    pieces = [render_for_summary([m], None, uses) for m in middle]
    templates = Templates(ctx.prompts("compact"), ctx.prompts("compact_update"))
    if not templates.fresh.strip() or not templates.update.strip():
        raise ValueError("the compaction prompts (prompts/compact.md, compact_update.md) are missing")
    return await condense(
        pieces,
        templates=templates,
        summarizer=summarizer,
        counter=ctx.counter,
        limit=ctx.config.summarizer_input_tokens,
        values={"focus": ctx.focus.strip() or NO_FOCUS},
        previous=previous_summary(middle),
    )
