"""What T2/T4/T5 put in place of the view's middle (the engine-written blocks, the carried and lifted
ones, the [ack, bridge] splice) and how many tokens a replacement saves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_cli.context.model import SpanReplacement, TierContext, TokenCount
from agent_cli.context.tiers.markers import ACK_TEXT, TAG_ACK, TAG_LEDGER, TAG_MARKER, TAG_REATTACH
from agent_cli.context.tiers.selection import is_summary_block, is_valid_tail_start
from agent_cli.core.tags import element
from agent_cli.core.types import Block, BlockMeta, Message, Source, Trust

# After T2/T4/T5 the view reads `[head, ack (assistant), bridge (user), tail...]`: the head (first user
# message) is untouched, so its cached bytes stay valid.

# -- building replacement blocks and messages --------------------------------------------------------


def compactor_block(
    text: str, tag: str, now: float = 0.0, *, source: Source = "compactor", ref: str = ""
) -> Block:
    """Engine-written reference material: pinned, tagged, trusted as the assistant's own notes."""
    meta = BlockMeta(trust=Trust.ASSISTANT, source=source, created_at=now, pinned=True, ref=ref, tag=tag)
    return Block.text_block(text, meta)


def ledger_block(ledger_text: str, now: float = 0.0) -> Block | None:
    text = ledger_text.strip()
    if not text:
        return None
    if not text.startswith(f"<{TAG_LEDGER}"):
        text = element(TAG_LEDGER, text)  # what it quotes (the person's words, errors) is escaped
    return compactor_block(text, TAG_LEDGER, now)


def ack_message(turn: int = 0, now: float = 0.0) -> Message:
    meta = BlockMeta(Trust.ASSISTANT, "compactor", now, tag=TAG_ACK)
    return Message("assistant", (Block.text_block(ACK_TEXT, meta),), turn)


def order_user_blocks(blocks: Iterable[Block]) -> tuple[Block, ...]:
    """Rule 2 of the invariants: tool results first, tagged injections next, the person's words last."""
    blocks = list(blocks)
    results = [b for b in blocks if b.type == "tool_result"]
    tagged = [b for b in blocks if b.type != "tool_result" and b.meta.tag]
    rest = [b for b in blocks if b.type != "tool_result" and not b.meta.tag]
    return tuple(results + tagged + rest)


def carried_pinned(messages: Sequence[Message], keep_tags: frozenset[str] = frozenset()) -> list[Block]:
    """Pinned text blocks of a replaced span that must survive it (the latest one per tag or text).
    Summary, ledger and memory blocks are carried only when their tag is in `keep_tags` (T5 keeps
    them; T2/T4 write fresh ones)."""
    latest: dict[str, Block] = {}
    for message in messages:
        for block in message.blocks:
            if block.type != "text" or not block.meta.pinned or block.meta.tag in (TAG_ACK, TAG_MARKER):
                continue
            if is_summary_block(block) and block.meta.tag not in keep_tags:
                continue
            key = block.meta.tag or block.text
            latest.pop(key, None)
            latest[key] = block
    return list(latest.values())


def reattached(carried: list[Block], ctx: TierContext) -> list[Block]:
    """After T2/T4: the carried pinned blocks, with earlier re-attachments replaced by fresh ones (the
    todo list and the recently touched files as they are now)."""
    return [b for b in carried if b.meta.tag != TAG_REATTACH] + list(ctx.reattach())


def lifted_blocks(message: Message) -> list[Block]:
    """The person's message re-placed after a bridge: its words and unpinned injections — not its tool
    results (their pairs are replaced), nor summaries or pinned blocks (written fresh or carried)."""
    return [
        b for b in message.blocks if b.type != "tool_result" and not is_summary_block(b) and not b.meta.pinned
    ]


def splice(
    view: Sequence[Message], tail_start: int, blocks: Sequence[Block], now: float = 0.0
) -> SpanReplacement:
    """Replace view[1:tail_start] by [ack, bridge]: the bridge is a user message holding `blocks`; when
    the tail begins with a user message (no tool results) it is merged into the bridge."""
    if not view or view[0].role != "user":
        raise ValueError("the view must begin with a user message")
    if not is_valid_tail_start(view, tail_start):
        raise ValueError(f"the tail cannot start at {tail_start}: it would split a tool pair")
    end = tail_start
    merged = list(blocks)
    turn = view[tail_start - 1].turn if tail_start - 1 < len(view) else view[-1].turn
    if tail_start < len(view) and view[tail_start].role == "user":
        merged += list(view[tail_start].blocks)
        turn = view[tail_start].turn
        end = tail_start + 1
    bridge = Message("user", order_user_blocks(merged), turn)
    return SpanReplacement(1, end, (ack_message(view[0].turn, now), bridge))


def tokens_of(messages: Iterable[Message], counter: TokenCount) -> int:
    return sum(counter.message(m) for m in messages)


def span_delta(view: Sequence[Message], replacements: Iterable[SpanReplacement], counter: TokenCount) -> int:
    """Tokens removed by `replacements` (old spans minus new messages), counted with `counter`."""
    delta = 0
    for span in replacements:
        delta += tokens_of(view[span.start : span.end], counter) - tokens_of(span.messages, counter)
    return delta
