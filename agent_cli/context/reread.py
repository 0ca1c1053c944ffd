"""Unchanged re-read: is a read's output already in the view, word for word, and still visible?

A file read whose output (same range, same bytes, hence the same numbered lines) equals a read result
that is still visible in the view — not cleared, offloaded or summarized — need not be sent again:
the read tool answers with one line naming that earlier result (Claude Code does the same). The tool
cannot see the engine; the runner injects `visible_read` into its ToolContext as a closure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from agent_cli.context.tiers.selection import is_compacted_result
from agent_cli.core.tags import escape_tags, split_result_parts
from agent_cli.core.types import Message

READ_TOOLS = frozenset({"read_file", "Read"})


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def visible_read(view: Sequence[Message], same_path: Callable[[str], bool], output: str) -> str | None:
    """The tool_use id of the latest visible read of a path `same_path` accepts whose output is
    `output`, byte for byte; None when there is none (never read, cleared, or changed since)."""
    wanted = digest(escape_tags(output))  # the view holds results as the model reads them
    uses = {b.id: b for m in view if m.role == "assistant" for b in m.tool_uses()}
    for message in reversed(view):
        if message.role != "user":
            continue
        for block in reversed(message.tool_results()):
            use = uses.get(block.tool_use_id)
            if use is None or (block.meta.tool_name or use.name) not in READ_TOOLS or block.is_error:
                continue
            if is_compacted_result(block) or block.meta.ref:  # cleared or offloaded: not in view whole
                continue
            path = use.input.get("path") or use.input.get("file_path")
            own = split_result_parts(block.text, block.meta.tag)[0]  # not a folder's memory after it
            if isinstance(path, str) and same_path(path) and digest(own) == wanted:
                return block.tool_use_id
    return None
