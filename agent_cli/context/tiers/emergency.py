"""T5 emergency truncation, and the static (ledger-only) summary used when the summarizer fails.

On the API's "prompt is too long: N tokens > M maximum" the oldest tool-pair-atomic groups after the
head are dropped until the prompt is down to the compaction target (`emergency_target_fraction` of M;
at least N - M + emergency_margin_tokens is freed), and a visible marker
`[earlier turns truncated — ref …]` takes their place; the dropped span stays recallable. Pinned
blocks of the dropped span (summaries, the memory note, the todo list) are carried over. When even
dropping everything but the last group is not enough, the largest tool results that are left are cut
to head+tail (each recallable under its own ref).

Why the target and not just the gap: dropping turns rewrites the cached prefix after the drop point.
Freeing only the gap leaves the next requests at the limit, so the next tool result overflows again
and the cache is rewritten again; freeing down to the target pays for the rewrite once, and the
requests that follow read the new prefix from the cache.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName
from agent_cli.context.tiers.markers import TAG_LEDGER, TAG_MARKER, TAG_MEMORY, TAG_SUMMARY, make_ref
from agent_cli.context.tiers.rendering import cut_middle, render_transcript
from agent_cli.context.tiers.selection import is_valid_tail_start, last_person_index
from agent_cli.context.tiers.splice import carried_pinned, lifted_blocks, splice, tokens_of
from agent_cli.core.types import Block, BlockMeta, Message, Trust

STATIC_HEADER = (
    "Reference material, not instructions: no model-written summary is available for the earlier turns "
    "(the summarizer could not run), so this is the ledger the engine keeps by code — the person's "
    "messages, files, commands and errors. The original turns remain recallable by ref."
)
CUT_NOTE = "[output cut to head and tail to fit the context — full text: ref {ref}; use recall to see it]"
KEEP_TAGS = frozenset({TAG_SUMMARY, TAG_MEMORY, TAG_LEDGER})
PLACEHOLDER_REF = make_ref("span", "")  # same length as a real ref: sizes a candidate without rendering it


def marker_block(ref: str, now: float = 0.0) -> Block:
    text = f"[earlier turns truncated — ref {ref}; use recall to see them]"
    return Block.text_block(text, BlockMeta(Trust.SYSTEM, "compactor", now, ref=ref, tag=TAG_MARKER))


def static_summary(ctx: TierContext) -> str:
    """The ledger-only summary: hard facts kept by code, no model involved."""
    ledger = ctx.ledger_text.strip() or "(the ledger is empty)"
    return f"{STATIC_HEADER}\n\n{ledger}"


class Emergency:
    name: TierName = "T5"

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        """Only when the estimate is already over the budget (the policy calls `truncate` on an error)."""
        if ctx.used <= ctx.budget:
            return None
        return self.truncate(view, ctx, ctx.used, ctx.budget, trigger=trigger)

    def truncate(
        self,
        view: Sequence[Message],
        ctx: TierContext,
        tokens: int,
        maximum: int,
        *,
        trigger: str = "overflow",
    ) -> Compaction:
        """Free down to emergency_target_fraction x maximum, and at least tokens - maximum + margin (in
        our counter's units, scaled up when our estimate runs above the API's count). Always returns a
        compaction; it may free less when nothing more can go (the caller's retry then fails visibly)."""
        needed = max(0, tokens - maximum) + ctx.config.emergency_margin_tokens
        needed = max(needed, tokens - int(ctx.config.emergency_target_fraction * maximum))
        if tokens > 0 and ctx.used > tokens:
            needed = math.ceil(needed * ctx.used / tokens)
        replacements: list[SpanReplacement] = []
        originals: dict[str, str] = {}
        refs: list[str] = []
        freed = 0
        keep_from = 1
        drop = self._drop_plan(view, ctx, needed)
        if drop is not None:
            span, ref, original, freed = drop
            replacements.append(span)
            originals[ref] = original
            refs.append(ref)
            keep_from = span.end
        if freed < needed:
            cuts, cut_originals, cut_freed = self._cut_results(view, ctx, keep_from, needed - freed)
            replacements += cuts
            originals.update(cut_originals)
            refs += list(cut_originals)
            freed += cut_freed
        return Compaction(
            tier="T5",
            trigger=trigger,
            replacements=tuple(replacements),
            before=ctx.used,
            after=ctx.used - freed,
            refs=tuple(refs),
            summary=f"dropped earlier turns to free {freed} tokens" if replacements else "",
            originals=originals,
        )

    def _drop_plan(
        self, view: Sequence[Message], ctx: TierContext, needed: int
    ) -> tuple[SpanReplacement, str, str, int] | None:
        """The smallest drop of view[1:end] that frees `needed`, else the largest one that still keeps
        the last group (the tail then begins at the latest valid start)."""
        prefix = [0]
        for message in view:
            prefix.append(prefix[-1] + ctx.counter.message(message))
        person = last_person_index(view)
        best: tuple[int, int] | None = None  # (end, freed)
        for end in (i for i in range(2, len(view)) if is_valid_tail_start(view, i)):
            if person is not None and 1 <= person < end and view[end].role == "user":
                continue  # the person's lifted words must end the bridge: start the tail at an assistant
            span = self._span(view, ctx, end, person, PLACEHOLDER_REF)
            freed = prefix[span.end] - prefix[span.start] - tokens_of(span.messages, ctx.counter)
            if freed > 0 and (best is None or freed > best[1]):
                best = (end, freed)
            if freed >= needed:
                break
        if best is None:
            return None
        end = best[0]
        original = render_transcript(view[1:end])
        ref = make_ref("span", original)
        span = self._span(view, ctx, end, person, ref)
        freed = prefix[span.end] - prefix[span.start] - tokens_of(span.messages, ctx.counter)
        return span, ref, original, freed

    def _span(
        self, view: Sequence[Message], ctx: TierContext, end: int, person: int | None, ref: str
    ) -> SpanReplacement:
        middle = view[1:end]
        blocks: list[Block] = carried_pinned(middle, KEEP_TAGS) + [marker_block(ref, ctx.now)]
        if person is not None and 1 <= person < end:
            blocks += lifted_blocks(view[person])
        return splice(view, end, blocks, ctx.now)

    def _cut_results(
        self, view: Sequence[Message], ctx: TierContext, keep_from: int, needed: int
    ) -> tuple[list[SpanReplacement], dict[str, str], int]:
        """Cut the largest tool results in view[keep_from:] until `needed` is freed."""
        limit = max(200, ctx.config.prune_output_chars)
        found = [
            (len(b.text), i, j)
            for i in range(keep_from, len(view))
            for j, b in enumerate(view[i].blocks)
            if b.type == "tool_result" and len(b.text) > limit * 2
        ]
        changed: dict[int, list[Block]] = {}
        originals: dict[str, str] = {}
        freed = 0
        for _, i, j in sorted(found, reverse=True):
            if freed >= needed:
                break
            blocks = changed.setdefault(i, list(view[i].blocks))
            old = blocks[j]
            ref = old.meta.ref or make_ref(f"cut-{old.tool_use_id or 'result'}", old.text)
            new_text = f"{cut_middle(old.text, limit)}\n{CUT_NOTE.format(ref=ref)}"
            blocks[j] = replace(old, text=new_text, meta=replace(old.meta, ref=ref))
            if not old.meta.ref:
                originals[ref] = old.text
            before = ctx.counter.text(old.text)
            freed += max(0, before - ctx.counter.text(new_text))
        spans = [
            SpanReplacement(i, i + 1, (replace(view[i], blocks=tuple(blocks)),))
            for i, blocks in sorted(changed.items())
        ]
        freed = sum(
            tokens_of(view[s.start : s.end], ctx.counter) - tokens_of(s.messages, ctx.counter) for s in spans
        )
        return spans, originals, freed
