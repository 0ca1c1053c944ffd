"""Reads of workspace files the engine and the tools ask the session for: a touched file's text to
re-attach after compaction, and whether a read_file output is already visible in the view."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agent_cli.context.reread import visible_read
from agent_cli.core.types import Message
from agent_cli.tools.encoding import decode_file
from agent_cli.tools.fs import resolve_path

REATTACH_MAX_BYTES = 1_000_000


def read_for_reattach(workspace: Path, path: str) -> str | None:
    """A touched file's current text for re-attachment after compaction (None: gone, huge, binary)."""
    target = (workspace / path).resolve() if not Path(path).is_absolute() else Path(path)
    try:
        if not target.is_file() or target.stat().st_size > REATTACH_MAX_BYTES:
            return None
        data = target.read_bytes()
    except OSError:
        return None
    decoded = decode_file(data)  # Latin-1, UTF-16…: text; None for binary
    return decoded[0] if decoded else None


def seen_read(workspace: Path, view: Sequence[Message], path: Path, output: str) -> str | None:
    """For read_file: the id of a read still visible in `view` with this very output."""

    def same(candidate: str) -> bool:
        try:
            return resolve_path(workspace, candidate) == path
        except Exception:  # noqa: BLE001 - a path the tool would refuse is not the same file
            return False

    return visible_read(view, same, output)
