"""T1 micro-compaction: old tool results and the large inputs of old calls become one-line placeholders.

Lossless by recall: every cleared body is written to the store under its ref (the tool_use_id, or
the ref it already had when T0 offloaded it — then the full text is in the store already and is not
overwritten by the preview). tool_use blocks stay, so every pair stays intact.

What goes is a priced bet (tiers/pricing.py, context/eviction.py): each clearable item gets a
probability of being needed again (context/reuse.py: what it is, how old, what names it, what the
session's misses have taught); clearing it saves its holding over the forecast of the remaining
requests and risks a miss; items are cleared only where the saving beats the cache rewrite the clear
causes, or where the view must shrink below the next tier's threshold. Stale outputs (a superseded
read, text written over, an applied edit's old text) are worth nothing. When the clear rewrites the
cache from far back anyway, cleared pairs are also folded into digest lines (collapse.py) and old
digest lines coarsened (coarsen.py): the step is priced once more with what folding saves and the
rewrite it causes, and the cheaper of the two (with or without folding) is made — or nothing.

Triggers:
- "cache_cold": idle longer than the cache TTL; the cached prefix is gone, so there is no rewrite to pay;
- "pressure": before each request, when the bet pays (or space requires it);
- anything else ("masking", "manual", ...): clear every result but the most recent
  (`micro_keep_recent`), unconditionally (no pricing), and fold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from agent_cli.context.eviction import bet_of
from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName, apply_compaction
from agent_cli.context.tiers.coarsen import coarsen
from agent_cli.context.tiers.collapse import KEEP_CALLS, collapse
from agent_cli.context.tiers.image_clear import clear_image
from agent_cli.context.tiers.markers import CLEARED_PREFIX, short_ref
from agent_cli.context.tiers.pricing import (
    Choice,
    auto_threshold,
    choose,
    input_text,
    large_keys,
    valued_tokens,
    worth_keeping,
)
from agent_cli.context.tiers.selection import (
    is_compacted_result,
    read_range,
    result_tool_name,
    tool_target,
    tool_uses_by_id,
)
from agent_cli.context.tiers.splice import tokens_of
from agent_cli.context.working_set import READ_TOOLS
from agent_cli.core.types import Message


def placeholder(tool: str, target: str, chars: int, ref: str, lines: tuple[int, int] | None = None) -> str:
    """Short on purpose: it stays in every later request. The target is named only when the call
    that produced the result is not right before it. A cleared file read names its path and line
    range, so the model knows what one `recall` brings back without reading the file again."""
    what = f"{tool} {target}".strip() if target else f"{tool} output"
    if lines is not None:
        what += f" lines {lines[0]}-{lines[1]}"
    return f"{CLEARED_PREFIX}{what}, {chars} chars; recall ref {ref}]"


def is_cache_cold(ctx: TierContext) -> bool:
    return ctx.last_request_at is not None and ctx.now - ctx.last_request_at > ctx.config.cache_ttl_seconds


class MicroCompact:
    """T1. `keep_recent` set: the unpriced "masking" T1 (clear every result but the last
    `keep_recent`, every turn); otherwise every clear is priced."""

    name: TierName = "T1"

    def __init__(self, keep_recent: int | None = None, collapse: bool = True) -> None:
        self.keep_recent = keep_recent
        self.collapse = collapse  # fold old cleared pairs into digest lines (tiers/collapse.py)

    def capacity(self, view: Sequence[Message], ctx: TierContext) -> float:
        """The auto-compaction threshold (tiers/pricing.py:auto_threshold, which counts what is
        worth keeping like a fixed cost): above it T4 (or T2) would summarize the middle, so space
        decides what T1 clears first. (T3's lower threshold does not count: T3 leaves the pairs
        worth keeping alone, tiers/region.py.)"""
        return self.limit(ctx, valued_tokens(view, ctx))

    @staticmethod
    def limit(ctx: TierContext, kept: int) -> float:
        """`capacity` with `kept` tokens worth keeping (a clear of some of them lowers it)."""
        threshold = auto_threshold(ctx.config.auto_fraction, ctx.budget, max(0, kept))
        cap = ctx.config.micro_cap_tokens
        return min(threshold, cap) if cap > 0 else threshold

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if trigger == "cache_cold" and not is_cache_cold(ctx):
            return None
        if self.keep_recent is not None or trigger not in ("cache_cold", "pressure"):
            keep = ctx.config.micro_keep_recent if self.keep_recent is None else self.keep_recent
            return self._unpriced(view, ctx, trigger, keep)
        cold = trigger == "cache_cold"
        keep = worth_keeping(view, ctx)
        kept = valued_tokens(view, ctx, keep)
        capacity = self.limit(ctx, kept)
        over = ctx.used > capacity  # above the next tier's threshold (a forced plan's case too): a
        # clear beats a lossy tier even when its bet, recomputed below, no longer pays
        choice = choose(
            view,
            ctx,
            cold=cold,
            capacity=capacity,
            keep=keep,
            after=lambda lost: self.limit(ctx, kept - lost),
        )
        if not choice.plan.chosen:
            return None
        cleared, originals, refs = clear(view, ctx, choice.results, choice.inputs)
        options = [(cleared, dict(originals), list(refs))]
        if self.collapse and ctx.config.micro_collapse:
            options.append(self._folded(cleared, ctx, originals, refs, choice.keep, choice.files, cold))
        best: Compaction | None = None
        for new, kept, named in options:
            span = _changed_span(view, new)
            if span is None:
                continue
            saved = tokens_of(view[span.start : span.end], ctx.counter) - tokens_of(
                span.messages, ctx.counter
            )
            bet = bet_of(
                choice.plan.chosen,
                choice.candidates,
                choice.market,
                freed=saved,
                start=span.start,
                forced=choice.plan.bet.forced,
            )
            if saved <= 0 or (bet.net <= 0 and not over):
                continue
            compaction = Compaction(
                "T1", trigger, (span,), ctx.used, ctx.used - saved, tuple(named), originals=kept, bet=bet
            )
            if best is None or best.bet is None or bet.net >= best.bet.net:  # a tie: the smaller view
                best = compaction
        return best

    def _folded(
        self,
        view: list[Message],
        ctx: TierContext,
        originals: dict[str, str],
        refs: list[str],
        keep: frozenset[str],
        files: Sequence[str],
        cold: bool,
    ) -> tuple[list[Message], dict[str, str], list[str]]:
        """`view` with its old cleared pairs folded into digest lines and old digest lines coarsened;
        on a cold cache (the rewrite is free anyway) everything older than collapse's recent calls."""
        folded = collapse(view, small=ctx.config.micro_keep_chars, now=ctx.now, keep=keep)
        calls = ctx.config.micro_coarse_calls
        if cold and calls > 0:
            calls = min(calls, KEEP_CALLS)
        coarse = coarsen(folded.view, coarse_calls=calls, working_files=files)
        more = {**originals, **folded.originals, **coarse.originals}
        return coarse.view, more, _merged(refs, folded.refs, coarse.refs)

    def _unpriced(
        self, view: Sequence[Message], ctx: TierContext, trigger: str, keep: int
    ) -> Compaction | None:
        """Every result but the last `keep`, and every large input before them, with no pricing
        (the "masking" policy, or a trigger such as "manual"); folded too when collapse is on."""
        uses = tool_uses_by_id(view)
        results = [
            (i, j)
            for i, m in enumerate(view)
            if m.role == "user"
            for j, b in enumerate(m.blocks)
            if b.type == "tool_result"
            and not b.meta.pinned
            and b.meta.source != "compactor"
            and ctx.tool_compactable(result_tool_name(b, uses))
        ]
        calls = [
            (i, j)
            for i, m in enumerate(view)
            if m.role == "assistant"
            for j, b in enumerate(m.blocks)
            if b.type == "tool_use" and not b.meta.pinned and ctx.tool_compactable(b.name)
        ]
        limit = ctx.config.micro_keep_chars
        old = results[: max(0, len(results) - keep)]
        chosen = frozenset(
            (i, j)
            for i, j in old
            if (len(view[i].blocks[j].text) > limit or view[i].blocks[j].data)  # data: an image
            and not is_compacted_result(view[i].blocks[j])
        )
        inputs = {
            (i, j): tuple(keys)
            for i, j in calls[: max(0, len(calls) - keep)]
            if (keys := large_keys(view[i].blocks[j].input, limit))
        }
        new, originals, refs = clear(view, ctx, chosen, inputs)
        if self.collapse and ctx.config.micro_collapse:
            new, originals, refs = self._folded(new, ctx, originals, refs, frozenset(), (), False)
        span = _changed_span(view, new)
        if span is None:
            return None
        saved = tokens_of(view[span.start : span.end], ctx.counter) - tokens_of(span.messages, ctx.counter)
        if saved <= 0:
            return None
        return Compaction(
            "T1", trigger, (span,), ctx.used, ctx.used - saved, tuple(refs), originals=originals
        )


def clear(
    view: Sequence[Message],
    ctx: TierContext,
    results: frozenset[tuple[int, int]],
    inputs: dict[tuple[int, int], tuple[str, ...]],
) -> tuple[list[Message], dict[str, str], list[str]]:
    """The view with `results` (message, block) replaced by placeholders and the `inputs` keys of
    those tool_use blocks too; the originals to store and every ref."""
    uses = tool_uses_by_id(view)
    originals: dict[str, str] = {}
    refs: list[str] = []
    replacements: list[SpanReplacement] = []
    touched = sorted({i for i, _ in results} | {i for i, _ in inputs})
    for index in touched:
        blocks = list(view[index].blocks)
        for j, old in enumerate(blocks):
            if (index, j) in results:
                ref = old.meta.ref or short_ref(old.tool_use_id)
                tool = result_tool_name(old, uses)
                use = uses.get(old.tool_use_id)
                if old.data:  # an image: placeholder, bytes to the store (tiers/image_clear.py)
                    blocks[j], originals[ref] = clear_image(
                        old, tool, tool_target(use.input) if use else "", ref
                    )
                    refs.append(ref)
                    continue
                lines = read_range(old.text) if tool in READ_TOOLS else None
                target = tool_target(use.input) if use is not None and lines else ""
                if not old.meta.ref:  # an offloaded result's full text is in the store already
                    originals[ref] = old.text
                refs.append(ref)
                text = placeholder(tool, target, len(old.text), ref, lines)
                blocks[j] = replace(old, text=text, meta=replace(old.meta, ref=ref))
            elif (index, j) in inputs:
                ref = old.meta.ref or f"{short_ref(old.id)}-in"
                if not old.meta.ref:  # cleared in part before: the whole input is stored already
                    originals[ref] = json.dumps(old.input, ensure_ascii=False, indent=1)
                refs.append(ref)
                keys = inputs[(index, j)]
                cleared = {
                    k: (f"{CLEARED_PREFIX}{len(input_text(v))} chars; recall ref {ref}]" if k in keys else v)
                    for k, v in old.input.items()
                }
                blocks[j] = replace(old, input=cleared, meta=replace(old.meta, ref=ref))
        replacements.append(SpanReplacement(index, index + 1, (replace(view[index], blocks=tuple(blocks)),)))
    return apply_compaction(view, Compaction("T1", "", tuple(replacements))), originals, refs


def _merged(*groups: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(r for group in groups for r in group))


def _changed_span(old: Sequence[Message], new: Sequence[Message]) -> SpanReplacement | None:
    """One replacement covering everything that differs between two views (None when equal)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    if head == len(old) == len(new):
        return None
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return SpanReplacement(head, len(old) - tail, tuple(new[head : len(new) - tail]))


__all__ = ["Choice", "MicroCompact", "clear", "is_cache_cold", "placeholder"]
