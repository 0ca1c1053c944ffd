"""Recoverable means identical: what a compaction took out of the view must come back, byte for byte.

For every compaction the replay sees the view before it. Whatever text left the view — a tool
result's body, a large string of a tool call's input, the words of a message — and is not still in
the span's new messages must occur verbatim in what the store holds under one of the compaction's
refs (or the ref the block already carried). Input strings are looked for as JSON strings too
(tool inputs are stored as JSON); an input's list or object (a todo list, MultiEdit's edits) is
looked for as its JSON, in the text or as a value of the stored input. The view holds text from
outside with our tags escaped (core/tags.py) while the store keeps the original bytes, so the
store's text is compared escaped too. Summaries and engine placeholders leaving the view are not
items: their own originals were checked when they were made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_cli.context.model import Compaction
from agent_cli.context.tiers.markers import CLEARED_PREFIX
from agent_cli.context.tiers.pricing import input_text
from agent_cli.context.tiers.selection import is_compacted_result, is_summary_block
from agent_cli.core.tags import escape_tags
from agent_cli.core.types import Block, Message
from agent_cli.tools.base import RecallStore

MIN_ITEM_CHARS = 40  # shorter strings are not compacted by any tier; they would match by accident
ENGINE_TEXT = (CLEARED_PREFIX, "<persisted-output")  # a placeholder or an offload preview, not an original


def block_strings(block: Block) -> list[str]:
    if block.type == "thinking" or is_summary_block(block) or is_compacted_result(block):
        return []
    if block.type in ("text", "tool_result"):
        strings = [block.text]
    elif block.type == "tool_use":
        strings = [input_text(v) for v in block.input.values() if _bulky(v)]
    else:
        return []
    return [s for s in strings if not s.startswith(ENGINE_TEXT)]


def _bulky(value: object) -> bool:
    return isinstance(value, str | list | dict)


def stored_values(stored: str) -> set[str]:
    """The lists and objects of a stored tool input (JSON, however indented), as `input_text` writes them."""
    try:
        data = json.loads(stored)
    except ValueError:
        return set()
    if not isinstance(data, dict):
        return set()
    return {input_text(v) for v in data.values() if isinstance(v, list | dict)}


@dataclass
class RecoverableCheck:
    """Collects what left the view at each compaction; `count(store)` checks it at the end."""

    items: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def observe(self, before: Sequence[Message], compaction: Compaction) -> None:
        for span in compaction.replacements:
            kept = "\n".join(s for m in span.messages for b in m.blocks for s in block_strings(b))
            for message in before[span.start : span.end]:
                for block in message.blocks:
                    refs = (*compaction.refs, block.meta.ref) if block.meta.ref else compaction.refs
                    for text in block_strings(block):
                        if len(text) >= MIN_ITEM_CHARS and text not in kept:
                            self.items.append((text, refs))

    def count(self, store: RecallStore) -> tuple[int, int]:
        """(items that left the view, items the store gives back byte-identical)."""
        found = 0
        cache: dict[str, str] = {}
        values: dict[str, set[str]] = {}
        for text, refs in self.items:
            quoted = json.dumps(text, ensure_ascii=False)[1:-1]
            for ref in refs:
                if ref not in cache:
                    cache[ref] = store.get(ref) or ""
                    values[ref] = stored_values(cache[ref])
                stored = cache[ref]
                if text in stored or quoted in stored or text in escape_tags(stored) or text in values[ref]:
                    found += 1
                    break
        return len(self.items), found
