"""Reads of workspace files the engine and the tools ask the session for: a touched file's text to
re-attach after compaction, whether a read_file output is already visible in the view, and the name
of the file a call names, as the workspace names it (`name_files`: `src/a.py`, `./src/a.py` and
`/ws/src/a.py` are one file to the context's pictures and ghosts, context/working_set.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agent_cli.context.reread import visible_read
from agent_cli.core.errors import ToolError
from agent_cli.core.surrogates import shown_bytes, shown_name
from agent_cli.core.types import Message
from agent_cli.tools.encoding import decode_file
from agent_cli.tools.fs import resolve_path

REATTACH_MAX_BYTES = 1_000_000


def read_for_reattach(workspace: Path, path: str) -> str | None:
    """A touched file's current text for re-attachment after compaction (None: gone, huge, binary, or
    outside the workspace: a file there is read again only through a tool, which asks, since the name
    the session touched may since have become a link to a key)."""
    root = workspace.resolve()
    target = (root / path).resolve()
    try:
        if (
            not target.is_relative_to(root)
            or not target.is_file()
            or target.stat().st_size > REATTACH_MAX_BYTES
        ):
            return None
        data = target.read_bytes()
    except OSError:
        return None
    decoded = decode_file(data)  # Latin-1, UTF-16…: text; None for binary
    return shown_bytes(decoded[0]) if decoded else None  # as read_file shows it


def seen_read(workspace: Path, view: Sequence[Message], path: Path, output: str) -> str | None:
    """For read_file: the id of a read still visible in `view` with this very output."""

    def same(candidate: str) -> bool:
        try:
            return resolve_path(workspace, candidate) == path
        except Exception:  # noqa: BLE001 - a path the tool would refuse is not the same file
            return False

    return visible_read(view, same, output)


def workspace_file(workspace: Path, path: str) -> str:
    """The file `path` names (relative to the workspace, absolute, or `~`), as the workspace names it:
    relative to it when inside (`/`-separated), else absolute; "" for a path the tools would refuse."""
    try:
        target = resolve_path(workspace, path)
    except ToolError:
        return ""
    root = Path(os.path.normpath(Path(workspace).expanduser().absolute()))
    named = target.relative_to(root).as_posix() if target.is_relative_to(root) else target.as_posix()
    return shown_name(named)  # as the tools show it (`caf\\xe9.txt`), which resolve_path reads back


def name_files(workspace: Path, message: Message) -> Message:
    """`message` with each tool call that names a path stamped with `workspace_file` (`BlockMeta.file`),
    as the engine appends it (so the log keeps it, and a replay of the log keys files the same way)."""
    blocks = []
    for block in message.blocks:
        value = block.input.get("file_path") or block.input.get("path") if block.type == "tool_use" else ""
        if isinstance(value, str) and value and not block.meta.file:
            block = block.with_meta(file=workspace_file(workspace, value))
        blocks.append(block)
    return replace(message, blocks=tuple(blocks)) if blocks != list(message.blocks) else message
