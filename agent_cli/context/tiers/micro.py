"""T1 micro-compaction: old tool results of compactable tools become one-line placeholders.

Lossless by recall: every cleared body is written to the store under its ref (the tool_use_id, or
the ref it already had when T0 offloaded it — then the full text is in the store already and is not
overwritten by the preview). tool_use blocks stay, so every pair stays intact.

Triggers:
- "cache_cold": idle longer than the cache TTL; the cached prefix is gone anyway, so clearing is free.
- "pressure": usage >= micro_fraction of the budget, >= micro_min_prunable_tokens prunable, and the
  saving over the expected remaining turns outweighs rewriting the cache from the first cleared block:
  saved * EXPECTED_TURNS * (1 - 0.1) > rewrite * 1.25. EXPECTED_TURNS (5) is a config-free guess of how
  many more requests will carry the saving: each of them would otherwise read the cleared tokens from
  the cache at 0.1x, while rewriting the suffix costs 1.25x once.
- anything else ("masking", "manual", ...): clear unconditionally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName
from agent_cli.context.tiers.common import (
    CLEARED_PREFIX,
    is_compacted_result,
    result_tool_name,
    tokens_of,
    tool_target,
    tool_uses_by_id,
)
from agent_cli.core.types import Message

EXPECTED_TURNS = 5  # a config-free guess of how many more requests will carry the saving
CACHE_READ = 0.1
CACHE_WRITE = 1.25


def placeholder(tool: str, target: str, chars: int, ref: str) -> str:
    what = f"{tool} {target}".strip()
    return f"{CLEARED_PREFIX}{what} — {chars} chars, ref {ref}; use recall to see it]"


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
    """T1. `keep_recent` overrides config.micro_keep_recent (the "masking" policy keeps 10)."""

    name: TierName = "T1"

    def __init__(self, keep_recent: int | None = None) -> None:
        self.keep_recent = keep_recent

    def candidates(self, view: Sequence[Message], ctx: TierContext) -> list[_Candidate]:
        """Results that may be cleared, oldest first, the most recent ones already excluded."""
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
                        i, j, block.meta.ref or block.tool_use_id, tool, tool_target(use.input) if use else ""
                    )
                )
        keep = ctx.config.micro_keep_recent if self.keep_recent is None else self.keep_recent
        older = found[: max(0, len(found) - keep)]
        out = []
        for c in older:
            block = view[c.message].blocks[c.block]
            if len(block.text) > ctx.config.micro_keep_chars and not is_compacted_result(block):
                out.append(c)
        return out

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if trigger == "cache_cold" and not is_cache_cold(ctx):
            return None
        if trigger == "pressure" and ctx.used < ctx.config.micro_fraction * ctx.budget:
            return None
        chosen = self.candidates(view, ctx)
        if not chosen:
            return None
        by_message: dict[int, list[_Candidate]] = {}
        for c in chosen:
            by_message.setdefault(c.message, []).append(c)
        originals: dict[str, str] = {}
        refs: list[str] = []
        replacements: list[SpanReplacement] = []
        for index, cands in by_message.items():
            blocks = list(view[index].blocks)
            for c in cands:
                old = blocks[c.block]
                text = placeholder(c.tool, c.target, len(old.text), c.ref)
                if not old.meta.ref:  # an offloaded result's full text is in the store already
                    originals[c.ref] = old.text
                refs.append(c.ref)
                blocks[c.block] = replace(old, text=text, meta=replace(old.meta, ref=c.ref))
            replacements.append(
                SpanReplacement(index, index + 1, (replace(view[index], blocks=tuple(blocks)),))
            )
        saved = sum(
            tokens_of(view[r.start : r.end], ctx.counter) - tokens_of(r.messages, ctx.counter)
            for r in replacements
        )
        if saved <= 0:
            return None
        if trigger == "pressure":
            if saved < ctx.config.micro_min_prunable_tokens:
                return None
            # after clearing, the cache must be rewritten from the first cleared message to the end
            rewrite = tokens_of(view[replacements[0].start :], ctx.counter) - saved
            if saved * EXPECTED_TURNS * (1 - CACHE_READ) <= rewrite * CACHE_WRITE:
                return None
        return Compaction(
            tier="T1",
            trigger=trigger,
            replacements=tuple(replacements),
            before=ctx.used,
            after=ctx.used - saved,
            refs=tuple(refs),
            originals=originals,
        )
