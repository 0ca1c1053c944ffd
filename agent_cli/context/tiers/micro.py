"""T1 micro-compaction: old tool results of compactable tools become one-line placeholders.

Lossless by recall: every cleared body is written to the store under its ref (the tool_use_id, or
the ref it already had when T0 offloaded it — then the full text is in the store already and is not
overwritten by the preview). tool_use blocks stay, so every pair stays intact.

Triggers:
- "cache_cold": idle longer than the cache TTL; the cached prefix is gone anyway, so clearing is free.
- "pressure": usage >= micro_fraction of the budget, >= micro_min_prunable_tokens prunable, and the
  saving over the expected remaining requests outweighs rewriting the cache from the first cleared
  block: each later request would read the cleared tokens from the cache at 0.1x, while the suffix
  after the first cleared block is written once at 1.25x instead of read at 0.1x:
      saved * 0.1 * expected_requests > rewrite * (1.25 - 0.1)
  expected_requests follows the session's own pace (a session that has made N requests is expected
  to make about N more, at least MIN_EXPECTED_REQUESTS): long sessions clear earlier, short ones never
  pay a rewrite they cannot earn back.
- anything else ("masking", "manual", ...): clear unconditionally.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName, apply_compaction
from agent_cli.context.tiers.coarsen import calls_in, coarsen
from agent_cli.context.tiers.collapse import collapse
from agent_cli.context.tiers.image_clear import clear_image
from agent_cli.context.tiers.markers import CLEARED_PREFIX, short_ref
from agent_cli.context.tiers.selection import (
    is_compacted_result,
    read_range,
    result_tool_name,
    tool_target,
    tool_uses_by_id,
)
from agent_cli.context.tiers.splice import tokens_of
from agent_cli.context.working_set import READ_TOOLS, SUPERSEDED_KEYS, WorkingSet, for_context
from agent_cli.core.types import Message

MIN_EXPECTED_REQUESTS = 5
CACHE_READ = 0.1
CACHE_WRITE = 1.25


def placeholder(tool: str, target: str, chars: int, ref: str, lines: tuple[int, int] | None = None) -> str:
    """Short on purpose: it stays in every later request. The target is named only when the call
    that produced the result is not right before it. A cleared file read names its path and line
    range, so the model knows what one `recall` brings back without reading the file again."""
    what = f"{tool} {target}".strip() if target else f"{tool} output"
    if lines is not None:
        what += f" lines {lines[0]}-{lines[1]}"
    return f"{CLEARED_PREFIX}{what}, {chars} chars; recall ref {ref}]"


def clearable_keys(tool_input: dict, limit: int, in_working_set: bool) -> list[str]:
    """Keys of an old call's input whose large strings T1 may replace by a placeholder. A call of
    the working set keeps what is still the file (the new text, the written content); only the
    text an edit replaced may go."""
    keys = [
        k
        for k, v in tool_input.items()
        if isinstance(v, str) and len(v) > limit and not v.startswith(CLEARED_PREFIX)
    ]
    return [k for k in keys if k in SUPERSEDED_KEYS] if in_working_set else keys


def expected_requests(view: Sequence[Message]) -> int:
    """How many more requests a saving will ride on: as many as the view shows were made (Lindy).
    A folded run counts its digest lines, one per call it stands for."""
    made = sum(1 + calls_in(m, uses=False) for m in view if m.role == "assistant")
    return max(MIN_EXPECTED_REQUESTS, made)


def is_cache_cold(ctx: TierContext) -> bool:
    return ctx.last_request_at is not None and ctx.now - ctx.last_request_at > ctx.config.cache_ttl_seconds


@dataclass(frozen=True)
class _Candidate:
    message: int
    block: int
    ref: str
    tool: str
    target: str


class MicroCompact:
    """T1. `keep_recent` overrides config.micro_keep_recent (the "masking" policy keeps 10).
    With `working_set` (the default policy), the working set (context/working_set.py) is never cleared."""

    name: TierName = "T1"

    def __init__(
        self, keep_recent: int | None = None, collapse: bool = True, working_set: bool = True
    ) -> None:
        self.keep_recent = keep_recent
        self.collapse = collapse  # fold old cleared pairs into digest lines (tiers/collapse.py)
        self.working_set = working_set

    def protected(self, view: Sequence[Message], ctx: TierContext) -> WorkingSet:
        return for_context(view, ctx) if self.working_set else WorkingSet()

    def candidates(
        self, view: Sequence[Message], ctx: TierContext, ws: WorkingSet | None = None
    ) -> list[_Candidate]:
        """Results that may be cleared, oldest first: not the most recent ones (unless stale), never
        the working set's."""
        ws = ws if ws is not None else self.protected(view, ctx)
        uses = tool_uses_by_id(view)
        found: list[_Candidate] = []
        for i, message in enumerate(view):
            if message.role != "user":
                continue
            for j, block in enumerate(message.blocks):
                if block.type != "tool_result" or block.meta.pinned or block.meta.source == "compactor":
                    continue
                tool = result_tool_name(block, uses)
                if not ctx.tool_compactable(tool):
                    continue
                use = uses.get(block.tool_use_id)
                found.append(
                    _Candidate(
                        i,
                        j,
                        block.meta.ref or short_ref(block.tool_use_id),
                        tool,
                        tool_target(use.input) if use else "",
                    )
                )
        keep = ctx.config.micro_keep_recent if self.keep_recent is None else self.keep_recent
        cut = max(0, len(found) - keep)
        older = found[:cut] + [
            c for c in found[cut:] if view[c.message].blocks[c.block].tool_use_id in ws.stale
        ]
        out = []
        for c in older:
            block = view[c.message].blocks[c.block]
            if ws.keeps(block.tool_use_id):
                continue
            large = len(block.text) > ctx.config.micro_keep_chars or bool(block.data)  # data: an image
            if large and not is_compacted_result(block):
                out.append(c)
        return out

    def input_candidates(
        self, view: Sequence[Message], ctx: TierContext, ws: WorkingSet | None = None
    ) -> list[tuple[int, int]]:
        """(message, block) of old tool_use blocks whose input carries large strings (a file written,
        an edit's old and new text; in the working set only an edit's old text): the call stays,
        those values become placeholders."""
        ws = ws if ws is not None else self.protected(view, ctx)
        found: list[tuple[int, int]] = []
        for i, message in enumerate(view):
            if message.role != "assistant":
                continue
            for j, block in enumerate(message.blocks):
                if block.type == "tool_use" and not block.meta.pinned and ctx.tool_compactable(block.name):
                    found.append((i, j))
        keep = ctx.config.micro_keep_recent if self.keep_recent is None else self.keep_recent
        limit = ctx.config.micro_keep_chars
        return [
            (i, j)
            for i, j in found[: max(0, len(found) - keep)]
            if clearable_keys(view[i].blocks[j].input, limit, ws.keeps(view[i].blocks[j].id))
        ]

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if trigger == "cache_cold" and not is_cache_cold(ctx):
            return None
        if trigger == "pressure" and ctx.used < ctx.config.micro_fraction * ctx.budget:
            return None
        ws = self.protected(view, ctx)
        chosen = self.candidates(view, ctx, ws)
        inputs = self.input_candidates(view, ctx, ws)
        by_message: dict[int, list[_Candidate]] = {}
        for c in chosen:
            by_message.setdefault(c.message, []).append(c)
        inputs_by_message: dict[int, list[int]] = {}
        for i, j in inputs:
            inputs_by_message.setdefault(i, []).append(j)
        originals: dict[str, str] = {}
        refs: list[str] = []
        replacements: list[SpanReplacement] = []
        for index in sorted(set(by_message) | set(inputs_by_message)):
            blocks = list(view[index].blocks)
            for c in by_message.get(index, []):
                old = blocks[c.block]
                if old.data:  # an image: placeholder, bytes to the store (tiers/image_clear.py)
                    blocks[c.block], originals[c.ref] = clear_image(old, c.tool, c.target, c.ref)
                    refs.append(c.ref)
                    continue
                lines = read_range(old.text) if c.tool in READ_TOOLS else None
                text = placeholder(c.tool, c.target if lines else "", len(old.text), c.ref, lines)
                if not old.meta.ref:  # an offloaded result's full text is in the store already
                    originals[c.ref] = old.text
                refs.append(c.ref)
                blocks[c.block] = replace(old, text=text, meta=replace(old.meta, ref=c.ref))
            for j in inputs_by_message.get(index, []):
                old = blocks[j]
                ref = old.meta.ref or f"{short_ref(old.id)}-in"
                if not old.meta.ref:  # cleared in part before: the whole input is stored already
                    originals[ref] = json.dumps(old.input, ensure_ascii=False, indent=1)
                refs.append(ref)
                keys = clearable_keys(old.input, ctx.config.micro_keep_chars, ws.keeps(old.id))
                cleared = {
                    k: (f"{CLEARED_PREFIX}{len(v)} chars; recall ref {ref}]" if k in keys else v)
                    for k, v in old.input.items()
                }
                blocks[j] = replace(old, input=cleared, meta=replace(old.meta, ref=ref))
            replacements.append(
                SpanReplacement(index, index + 1, (replace(view[index], blocks=tuple(blocks)),))
            )
        cleared = apply_compaction(view, Compaction("T1", trigger, tuple(replacements)))
        if self.collapse and ctx.config.micro_collapse:
            folded = collapse(cleared, small=ctx.config.micro_keep_chars, now=ctx.now, keep=ws.keep)
            cleared = folded.view
            originals.update(folded.originals)
            refs += [r for r in folded.refs if r not in refs]
            calls = ctx.config.micro_coarse_calls
            if (
                trigger == "cache_cold" and calls > 0
            ):  # the cache is rewritten anyway: fold all but the recent
                calls = min(calls, ctx.config.working_set_calls)
            coarse = coarsen(cleared, coarse_calls=calls, working_files=ws.files)
            cleared = coarse.view
            originals.update(coarse.originals)
            refs += [r for r in coarse.refs if r not in refs]
        span = _changed_span(view, cleared)
        if span is None:
            return None
        saved = tokens_of(view[span.start : span.end], ctx.counter) - tokens_of(span.messages, ctx.counter)
        if saved <= 0:
            return None
        if trigger == "pressure":
            if saved < ctx.config.micro_min_prunable_tokens:
                return None
            # after clearing, the cache must be rewritten from the first changed message to the end
            rewrite = tokens_of(view[span.start :], ctx.counter) - saved
            if saved * CACHE_READ * expected_requests(view) <= rewrite * (CACHE_WRITE - CACHE_READ):
                return None
        return Compaction(
            tier="T1",
            trigger=trigger,
            replacements=(span,),
            before=ctx.used,
            after=ctx.used - saved,
            refs=tuple(refs),
            originals=originals,
        )


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
