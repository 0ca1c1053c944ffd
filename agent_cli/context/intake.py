"""What the engine makes of new input on its way into the view: an injection wrapped in its tag, the
paste-N refs of a person's offloaded pastes, and what an append hands back for the log."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from agent_cli.context.ghosts import Miss
from agent_cli.context.model import Compaction
from agent_cli.context.offload import wrap
from agent_cli.core.types import Block, BlockMeta, Message, Trust

DEFAULT_INJECTION_TAG = "system-reminder"
_PASTE = re.compile(r"^paste-(\d+)$")


@dataclass(frozen=True)
class Appended:
    message: Message  # as placed in the view (injections merged, env on first message), BEFORE T0
    compactions: list[Compaction]  # T0 compactions already applied after it (digest: the policy's)
    logged: Message | None = None  # what to log: `message` with a person's offloaded paste as kept
    misses: list[Miss] = field(default_factory=list)  # cleared items its tool calls came back for

    @property
    def to_log(self) -> Message:
        """The message for the event log: a paste T0 offloaded is logged as its placeholder (the
        text is in the store once, not also in the log); replaying it gives the same view and ledger."""
        return self.logged or self.message


class AttachmentSource(Protocol):
    """Something outside the engine with a word for the model while it lasts (the background shells
    that run). `pending` is asked at each new user message of a live turn (`compactions`: how many the
    view has had, so a source can say again what one may have cut); `pinned` when T2/T4 put back the
    todo list. "" when there is nothing to say."""

    def pending(self, compactions: int) -> str: ...

    def pinned(self) -> str: ...


def source_injections(sources: Sequence[AttachmentSource], compactions: int, now: float) -> list[Block]:
    """What the sources have to say now, as injections (`<system-reminder>`) for the next user message."""
    meta = BlockMeta(Trust.SYSTEM, "reminder", now, tag=DEFAULT_INJECTION_TAG)
    texts = [text for source in sources if (text := source.pending(compactions).strip())]
    return [as_injection(Block.text_block(text, meta)) for text in texts]


def reminder(text: str) -> Block:
    """Our `<system-reminder>` attachment for the next user message (plan mode's, for one)."""
    return Block.text_block(text, BlockMeta(Trust.SYSTEM, "reminder", tag=DEFAULT_INJECTION_TAG))


def as_injection(block: Block) -> Block:
    """A pending attachment as it is merged into the next user message: text wrapped in its tag."""
    if block.type == "text":
        if not block.text.strip():
            raise ValueError("an injection needs some text")
        tag = block.meta.tag or DEFAULT_INJECTION_TAG
        text = wrap(tag, block.text)
        source = "reminder" if block.meta.source == "user" else block.meta.source
        block = replace(block, text=text, meta=replace(block.meta, tag=tag, source=source))
    elif block.type == "image":
        block = block.with_meta(tag=block.meta.tag or "attachment")
    else:
        raise ValueError(f"a {block.type} block cannot be injected (text or image only)")
    return block


class PasteNumbers:
    """paste-N refs for the pastes T0 offloads, numbered on from the highest one seen."""

    def __init__(self) -> None:
        self.last = 0

    def next(self, taken: Iterable[str]) -> str:
        taken = set(taken)
        while True:
            self.last += 1
            ref = f"paste-{self.last}"
            if ref not in taken:
                return ref

    def saw(self, refs: Iterable[str]) -> None:
        for ref in refs:
            found = _PASTE.match(ref)
            if found:
                self.last = max(self.last, int(found.group(1)))


def words_as_kept(message: Message, kept: Message) -> Message:
    """The ledger sees a person's paste as it stays in the view (offloaded: a ref, kept once) and
    everything else as it came — which is also what a resume replays from the log."""
    if kept is message or len(kept.blocks) != len(message.blocks):
        return message
    blocks = tuple(
        k if b.type == "text" and b.meta.source == "user" and not b.meta.tag else b
        for b, k in zip(message.blocks, kept.blocks, strict=True)
    )
    return replace(message, blocks=blocks)
