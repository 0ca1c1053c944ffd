"""What compaction puts back: after T2/T4 the todo list and the recently touched files return as
pinned attachments, as they are now — the summary tells what happened, these tell where things stand."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_cli.context.intake import AttachmentSource
from agent_cli.context.ledger import Ledger
from agent_cli.context.model import ContextConfig
from agent_cli.context.tiers.markers import TAG_REATTACH
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.tags import attr, element
from agent_cli.core.types import Block, BlockMeta, Trust


def reattachments(
    ledger: Ledger,
    config: ContextConfig,
    counter: TokenCounter,
    file_reader: Callable[[str], str | None] | None,
    now: float,
    sources: Sequence[AttachmentSource] = (),
) -> list[Block]:
    """What T2/T4 put back as pinned attachments: the todo list, what the sources pin (the running
    background shells) and up to `reattach_files` recently touched files as they are now
    (<= reattach_file_tokens each; only the path when larger)."""
    blocks: list[Block] = []
    meta = BlockMeta(Trust.TOOL, "reminder", now, pinned=True, tag=TAG_REATTACH)
    if ledger.todos:
        items = "\n".join(ledger.todo_lines())
        blocks.append(Block.text_block(element("todo-list", items), meta))
    for text in (source.pinned().strip() for source in sources):
        if text:
            blocks.append(Block.text_block(element("system-reminder", text), meta))
    if file_reader is None:
        return blocks
    for path in reversed(ledger.touched[-config.reattach_files :]):
        text = file_reader(path)
        if text is None:
            continue
        tokens = counter.text(text)
        if tokens > config.reattach_file_tokens:
            body = f'<file path="{attr(path)}" tokens="{tokens}">(too large to re-attach: read_file it again)</file>'
        else:
            body = element("file", text, path=path, note="as it is now, re-attached after compaction")
        blocks.append(Block.text_block(body, meta))
    return blocks
