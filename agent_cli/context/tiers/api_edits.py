"""What the Anthropic API does for free, as policies replay can compare with ours (issue 19, item 4).

- `ApiClear`: context editing's `clear_tool_uses_20250919` with its documented defaults: once the
  input reaches 100,000 tokens, every tool result but those of the 3 most recent tool uses is
  replaced by a placeholder, on every request from then on (the API edits the full history the
  client sends, server-side, so once the history has crossed the trigger it stays crossed). Inputs
  are kept (`clear_tool_inputs` false). Nothing is stored: there is no recall.
- `ApiCompact`: server-side compaction, `compact_20260112` with its default trigger: at 150,000
  input tokens the history is replaced by a summary (here the summarizer the replay has, else the
  ledger's static summary), keeping only the last user message.

Both are data like any tier: a Compaction the policy applies and the log could replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName
from agent_cli.context.tiers.full import FullCompact
from agent_cli.context.tiers.splice import tokens_of
from agent_cli.core.types import Message

CLEAR_TRIGGER = 100_000
CLEAR_KEEP = 3
CLEARED_TEXT = "[tool result cleared by context editing]"
COMPACT_TRIGGER = 150_000


@dataclass
class ApiClear:
    """clear_tool_uses_20250919 (trigger 100k input tokens, keep 3 tool uses, placeholder, no recall)."""

    name: TierName = "T1"
    cleared_tokens: int = 0  # what the client still sends but the server no longer passes on

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if ctx.used + self.cleared_tokens < CLEAR_TRIGGER:
            return None
        uses = [u.id for m in view if m.role == "assistant" for u in m.tool_uses()]
        keep = set(uses[-CLEAR_KEEP:])
        spans: list[SpanReplacement] = []
        for index, message in enumerate(view):
            if message.role != "user":
                continue
            blocks = list(message.blocks)
            for j, block in enumerate(blocks):
                if (
                    block.type == "tool_result"
                    and block.tool_use_id not in keep
                    and block.text != CLEARED_TEXT
                ):
                    blocks[j] = replace(block, text=CLEARED_TEXT)
            if blocks != list(message.blocks):
                spans.append(SpanReplacement(index, index + 1, (replace(message, blocks=tuple(blocks)),)))
        if not spans:
            return None
        saved = sum(
            tokens_of(view[s.start : s.end], ctx.counter) - tokens_of(s.messages, ctx.counter) for s in spans
        )
        self.cleared_tokens += max(0, saved)
        return Compaction("T1", "api_clear", tuple(spans), ctx.used, ctx.used - max(0, saved))


class ApiCompact:
    """compact_20260112 (trigger 150k input tokens): the history becomes one summary."""

    name: TierName = "T4"

    def __init__(self) -> None:
        self.full = FullCompact()

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        if ctx.used < COMPACT_TRIGGER:
            return None
        tail = replace(ctx.config, tail_fraction=0.0)  # only the last user message stays
        return await self.full.propose(view, replace(ctx, config=tail), "api_compact")
