"""Read our own session log (`events.jsonl`, see session/log.py) into a replay `Transcript`.

Message events (`user`, `assistant`, `tool_results`) carry `message` (Message.to_json()) and `ts`;
assistant events also `usage` and `model`. Compaction events are not replayed (the policy under
test makes its own), but they give the view the agent really sent, which the token estimator is
checked against. A torn or corrupt line is skipped with a warning, never fatal.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.context.model import Compaction, apply_compaction
from agent_cli.core.types import Message, Usage
from agent_cli.replay.claude_code import (
    Entry,
    Transcript,
    normalize,
    parse_timestamp,
    read_jsonl,
    recorded_requests,
    tool_compactable,
)

MESSAGE_EVENTS = ("user", "assistant", "tool_results")


def looks_like_our_log(path: str | Path) -> bool:
    """True when the file's first readable line is one of our events (not a Claude Code line)."""
    try:
        with Path(path).open("rb") as handle:
            for raw in handle:
                if raw.strip():
                    try:
                        first = json.loads(raw)
                    except ValueError:
                        return False
                    return isinstance(first, dict) and "ts" in first and "uuid" not in first
    except OSError:
        return False
    return False


def load_our_log(path: str | Path) -> Transcript:
    path = Path(path)
    if path.is_dir():
        path = path / "events.jsonl"
    warnings: list[str] = []
    entries: list[Entry] = []
    views: list[tuple[Message, ...]] = []
    view: list[Message] = []
    skipped: dict[str, int] = {}
    bad = 0
    views_ok = True
    for number, event in read_jsonl(path, warnings):
        kind = event.get("type")
        try:
            if kind in MESSAGE_EVENTS:
                message = Message.from_json(event["message"])
                if kind == "assistant" and event.get("stop_reason") != "stand_in":
                    views.append(tuple(view))
                if view and view[-1].role == message.role:  # the engine merges these too
                    view[-1] = Message(message.role, view[-1].blocks + message.blocks, view[-1].turn)
                else:
                    view.append(message)
                entries.append(_entry(kind, message, event, number))
            elif kind == "compaction":
                compaction = Compaction.from_json(event["compaction"])
                if compaction.tier == "clear":
                    view = []
                else:
                    view = apply_compaction(view, compaction)
            else:
                skipped[str(kind)] = skipped.get(str(kind), 0) + 1
        except (KeyError, TypeError, ValueError) as exc:
            bad += 1
            views_ok = views_ok and kind != "compaction"
            warnings.append(f"{path.name}:{number}: unreadable {kind} event skipped ({exc})")
    messages, positions, repairs = normalize(entries)
    if repairs:
        warnings.append(f"{repairs} repair(s) to make the logged messages API-valid")
    requests = recorded_requests(positions)
    if not views_ok or len(views) != len(requests):  # no trustworthy record of what was sent
        views = []
    torn = sum(1 for w in warnings if "torn or corrupt" in w or "not a JSON object" in w)
    return Transcript(
        path=str(path),
        source="agent",
        messages=tuple(m for m, _ in messages),
        requests=requests,
        warnings=tuple(warnings),
        torn_lines=torn + bad,
        repairs=repairs,
        skipped=skipped,
        recorded_views=tuple(views),
    )


def _entry(kind: str, message: Message, event: dict[str, Any], number: int) -> Entry:
    ts = parse_timestamp(event.get("ts"))
    if message.role == "assistant":
        usage = Usage.from_json(event.get("usage"))
        entry = Entry(
            "assistant", list(message.blocks), number, f"event-{number}", str(event.get("model", "")), ts
        )
        entry.usage = usage if usage.total_input > 0 else None  # zero: not billed (interrupted, stand-in)
        entry.request = event.get("stop_reason") != "stand_in"  # a stand-in was never sent to a model
        return entry
    blocks = []  # the user context and environment stay as logged: the replayed engine adds none
    for block in message.blocks:
        if block.type == "tool_result" and block.meta.tool_name:
            block = replace(
                block, meta=replace(block.meta, compactable=tool_compactable(block.meta.tool_name))
            )
        blocks.append(block)
    return Entry("user", blocks, number, timestamp=ts)
