"""Opening a session a crash may have left half-written, before anything is appended to it.

- a torn last line (the process died mid-write) is moved to `events.jsonl.torn`, so the next event
  starts on a fresh line instead of being glued onto the fragment (and lost with it);
- a tool_use left without a result (the process died while the tool ran) gets an "interrupted"
  result, logged, so the model is told and the API never sees an orphan;
- a line lost anywhere else (corrupt, skipped by `read_events`) leaves the messages around it
  unpaired: `mend` puts a stand-in where the lost message was — a "result lost" tool_result for a
  tool_use whose results were on it, a reply (holding the tool_use a result answers, if any) between
  two user messages, a note for a lost prompt — so the view stays API-valid and keeps the message
  count the log's compactions count on;
- `fork` copies a conversation into a new session directory (`--fork-session`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.core.files import PRIVATE_DIR, open_private
from agent_cli.core.types import Block, BlockMeta, Message, Trust
from agent_cli.session.checkpoints import SHADOW, CheckpointError, Checkpoints

TORN_SUFFIX = ".torn"
EVENTS_NAME = "events.jsonl"
NOT_COPIED = ("lock", "running")  # the source's writer and its running commands stay its own
INTERRUPTED_BY_EXIT = "interrupted: the process ended before this tool finished"
RESULT_LOST = "result lost: the session log line that held this tool's result could not be read"
MESSAGE_LOST = "(a message was lost here: its line in the session log could not be read)"
MESSAGE_EVENTS = ("user", "assistant", "tool_results")
LOG_GAP_TAG = "log-gap"


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
    fd = os.open(torn, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # private, as the log is
    with os.fdopen(fd, "ab") as out:  # earlier fragments stay: nothing is ever thrown away
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


def mend(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The message events with a stand-in wherever a lost line left them unpaired (see the module's
    docstring); (events, how many stand-ins). A last tool_use left open is not touched here: that is
    a process that died while its tool ran (`orphan_results`)."""
    out: list[dict[str, Any]] = []
    open_uses: dict[str, str] = {}  # the tool_uses of the last assistant message still unanswered
    last_role = ""
    added = 0

    def stand_in(message: Message) -> None:
        nonlocal added
        kind = "assistant" if message.role == "assistant" else "tool_results"
        out.append({"type": kind, "message": message.to_json(), "recovered": True, "lost": True})
        added += 1

    for event in events:
        kind = event.get("type")
        if kind == "compaction" and (event.get("compaction") or {}).get("tier") == "clear":
            open_uses, last_role = {}, ""
        elif kind == "compaction" and open_uses:  # compactions come after results: those were lost
            stand_in(_lost_results(open_uses, 0))
            open_uses, last_role = {}, "user"
        if kind not in MESSAGE_EVENTS or "message" not in event:
            out.append(event)
            continue
        message = Message.from_json(event["message"])
        if message.role == "assistant":
            if open_uses:  # its results were on the lost line
                stand_in(_lost_results(open_uses, message.turn))
            elif last_role in ("assistant", ""):  # the prompt before it was (the first message must be one)
                stand_in(Message("user", (Block.text_block(MESSAGE_LOST, _meta("system")),), message.turn))
            open_uses = {b.id: b.name for b in message.tool_uses()}
        else:
            answered = {b.tool_use_id: b.meta.tool_name for b in message.tool_results()}
            strays = {i: n for i, n in answered.items() if i not in open_uses}
            if strays and len(strays) == len(answered):  # the reply they answer was on the lost line
                if open_uses:
                    stand_in(_lost_results(open_uses, message.turn))
                stand_in(_lost_reply(strays, message.turn))
            else:
                missing = {i: n for i, n in open_uses.items() if i not in answered}
                if missing:
                    stand_in(_lost_results(missing, message.turn))
                elif last_role == "user":  # the loop never logs two in a row: the reply between was lost
                    stand_in(_lost_reply({}, message.turn))
                if strays:  # answers to nothing the view holds: left out
                    kept = tuple(b for b in message.blocks if b.tool_use_id not in strays)
                    if not kept:
                        continue
                    event = {**event, "message": replace(message, blocks=kept).to_json()}
            open_uses = {}
        last_role = message.role
        out.append(event)
    return out, added


def _meta(source: str, tool: str = "") -> BlockMeta:
    """What a stand-in carries: no clock (every resume builds the very same one), and a tag on the
    note for a lost prompt so that nothing takes it for the person's words."""
    if source == "system":
        return BlockMeta(Trust.SYSTEM, "system", 0.0, tag=LOG_GAP_TAG)
    trust = Trust.ASSISTANT if source == "assistant" else Trust.TOOL
    return BlockMeta(trust, source, 0.0, tool)  # type: ignore[arg-type]


def _fork_checkpoints(workspace: Path, source: Path, target: Path) -> bool:
    """The fork's checkpoints as one pack of the source's snapshots; False (nothing left behind) when
    that failed, so the caller copies them whole instead."""
    try:
        Checkpoints(workspace, target).fork_from(source)
    except (CheckpointError, OSError):
        shutil.rmtree(target / SHADOW, ignore_errors=True)
        return False
    return True


def _lost_results(uses: dict[str, str], turn: int) -> Message:
    blocks = tuple(
        Block.tool_result(i, RESULT_LOST, is_error=True, meta=_meta("tool", n)) for i, n in uses.items()
    )
    return Message("user", blocks, turn)


def _lost_reply(results: dict[str, str], turn: int) -> Message:
    uses = tuple(Block.tool_use(i, n or "unknown", {}, _meta("assistant", n)) for i, n in results.items())
    return Message("assistant", (Block.text_block(MESSAGE_LOST, _meta("assistant")), *uses), turn)


def fork(
    events: list[dict[str, Any]],
    source: Path,
    target: Path,
    source_id: str,
    new_id: str,
    seal: dict[str, str] | None = None,
    *,
    workspace: Path,
) -> None:
    """A new session from a copy of the conversation: the events (with a new `session_start`
    naming the source) and everything else the session keeps (tool results, the note, checkpoints),
    but not its lock or its running commands. The checkpoints are packed into a store of the fork's
    own (`Checkpoints.fork_from`), copied file by file only when that fails."""
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
    header.pop("seal", None)  # the source's seal names the source: the copy gets its own, or none
    header.update(seal or {})
    lines = [header] + [e for e in events if e.get("type") != "session_start"]
    for entry in source.iterdir():  # tool results, the note, checkpoints: whatever the session keeps
        if entry.name in NOT_COPIED or entry.name.startswith(EVENTS_NAME) or entry.name.startswith("."):
            continue
        if entry.name == SHADOW and entry.is_dir() and _fork_checkpoints(workspace, source, target):
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
