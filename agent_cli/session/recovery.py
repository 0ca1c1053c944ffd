"""Opening a session a crash may have left half-written, before anything is appended to it.

- a torn last line (the process died mid-write) is moved to `events.jsonl.torn`, so the next event
  starts on a fresh line instead of being glued onto the fragment (and lost with it);
- a tool_use left without a result (the process died while the tool ran) gets an "interrupted"
  result, logged, so the model is told and the API never sees an orphan;
- `fork` copies a conversation into a new session directory (`--fork-session`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from agent_cli.core.files import PRIVATE_DIR, open_private
from agent_cli.core.types import Block, BlockMeta, Message, Trust

TORN_SUFFIX = ".torn"
EVENTS_NAME = "events.jsonl"
NOT_COPIED = ("lock", "running")  # the source's writer and its running commands stay its own
INTERRUPTED_BY_EXIT = "interrupted: the process ended before this tool finished"


def set_aside_torn_tail(path: Path) -> str | None:
    """Move an unterminated or unreadable last line to `<path>.torn`; the warning to show, once."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return None
            start = _last_line_start(fh, size)
            fh.seek(start)
            tail = fh.read()
    except FileNotFoundError:
        return None
    if tail.endswith(b"\n") and _is_event(tail):
        return None
    if not tail.strip():
        return None
    torn = path.with_name(path.name + TORN_SUFFIX)
    with torn.open("ab") as out:  # earlier fragments stay: nothing is ever thrown away
        out.write(tail if tail.endswith(b"\n") else tail + b"\n")
        out.flush()
        os.fsync(out.fileno())
    with path.open("r+b") as fh:
        fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
    return (
        f"{path.name}: the last line was cut off by an interrupted write ({len(tail.rstrip())} bytes); "
        f"it was moved to {torn.name} and the session goes on from the line before"
    )


def _last_line_start(fh: Any, size: int) -> int:
    """Offset of the last line (a trailing newline belongs to it)."""
    end = size - 1
    fh.seek(end)
    if fh.read(1) == b"\n":
        end -= 1
    pos, chunk = end + 1, 65_536
    while pos > 0:
        step = min(chunk, pos)
        fh.seek(pos - step)
        data = fh.read(step)
        found = data.rfind(b"\n")
        if found >= 0:
            return pos - step + found + 1
        pos -= step
    return 0


def _is_event(line: bytes) -> bool:
    try:
        event = json.loads(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(event, dict) and "type" in event


def orphan_results(view: list[Message], turn: int) -> Message | None:
    """The results a dead process never wrote: one per tool_use of a last assistant message."""
    if not view or view[-1].role != "assistant":
        return None
    uses = view[-1].tool_uses()
    if not uses:
        return None
    now = time.time()
    return Message(
        "user",
        tuple(
            Block.tool_result(
                b.id, INTERRUPTED_BY_EXIT, is_error=True, meta=BlockMeta(Trust.TOOL, "tool", now, b.name)
            )
            for b in uses
        ),
        turn,
    )


def fork(events: list[dict[str, Any]], source: Path, target: Path, source_id: str, new_id: str) -> None:
    """A new session from a copy of the conversation: the events (with a new `session_start`
    naming the source) and everything else the session keeps (tool results, the note, checkpoints),
    but not its lock or its running commands."""
    target.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=False)
    os.chmod(target, PRIVATE_DIR)  # mkdir's mode is masked by the umask
    start = next((e for e in events if e.get("type") == "session_start"), {})
    header = {
        **start,
        "type": "session_start",
        "ts": time.time(),
        "id": new_id,
        "forked_from": source_id,
    }
    lines = [header] + [e for e in events if e.get("type") != "session_start"]
    for entry in source.iterdir():  # tool results, the note, checkpoints: whatever the session keeps
        if entry.name in NOT_COPIED or entry.name.startswith(EVENTS_NAME) or entry.name.startswith("."):
            continue
        if entry.is_dir():
            shutil.copytree(entry, target / entry.name, ignore=shutil.ignore_patterns(".*.tmp"))
        elif entry.is_file():
            shutil.copy2(entry, target / entry.name)
    with open(open_private(target / "events.jsonl", os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as fh:
        for event in lines:
            fh.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
