"""What each event of the log must look like to be read back.

A line that is JSON but has a field of the wrong type (a list where a count was, a number where a
tool's name was) is as corrupt as a line that is not JSON: `read_events` skips it with the same
warning, and the projections of the log (the view, the totals, the ledger, the todo list, the list
of sessions) only ever see events of the shape they were written in. A field that is absent is
fine (each projection has its default); one that is there must have its type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from agent_cli.context.model import Compaction
from agent_cli.core.types import BlockMeta, Message
from agent_cli.session.recovery import MESSAGE_EVENTS

Check = Callable[[Any], bool]
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cache_creation_1h_input_tokens",
)
META_TYPES = {name: type(getattr(BlockMeta(), name)) for name in BlockMeta.__dataclass_fields__} | {
    "trust": int
}


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _time(value: Any) -> bool:
    return _number(value) and 0 <= value < 1e11  # seconds since 1970: a date a clock can show


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _usage(value: Any) -> bool:
    return isinstance(value, dict) and all(value.get(k) is None or _count(value[k]) for k in USAGE_KEYS)


def _opt(check: Check) -> Check:
    """`check`, or null: what its reader takes for absent (`event.get(name) or default`)."""
    return lambda value: value is None or check(value)


def _todos(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _tool_meta(value: Any) -> bool:
    """What the ledger reads of a tool's facts (context/ledger.py `record_result`)."""
    if not isinstance(value, dict):
        return False
    lines, exit_code, path = value.get("lines"), value.get("exit_code"), value.get("path")
    return (
        (lines is None or (isinstance(lines, list) and len(lines) == 2 and all(map(_count, lines))))
        and (exit_code is None or type(exit_code) is int)
        and (path is None or isinstance(path, str))
    )


# the fields each kind of event is read back by, and what each must be when it is there
TEXT, USAGE = _opt(_text), _opt(_usage)
FIELDS: dict[str, dict[str, Check]] = {
    "session_start": {"id": TEXT, "cwd": TEXT, "model": TEXT, "seal": TEXT, "forked_from": TEXT},
    "user": {"prompt": TEXT},
    "assistant": {"usage": USAGE, "model": TEXT, "stop_reason": TEXT},
    "tool_meta": {"tool_use_id": TEXT, "meta": _opt(_tool_meta)},
    "todo": {"todos": _todos},
    "config": {"model": TEXT, "permission_mode": TEXT},
    "subagent_usage": {"usage": USAGE, "cost_usd": _opt(_number), "requests": _opt(_count)},
    "summarizer_usage": {"usage": USAGE, "model": TEXT},
    "compaction": {"compaction": lambda value: isinstance(value, dict)},
    "compaction_measured": {"tier": TEXT, "before": _opt(_count), "after": _opt(_count)},
    "rewind": {"prompt": _count},
    "checkpoint": {"prompt": _count, "commit": _text, "skipped": _texts},
    "checkpoint_end": {"prompt": _count, "commit": _text},
    "checkpoint_failed": {"prompt": _count, "reason": _text},
    "restore": {"prompt": _count, "commit": _text, "undo": _text, "after": _text},
}
COMPACTION_FIELDS: dict[str, Check] = {
    "tier": _text,
    "trigger": _text,
    "before": _count,
    "after": _count,
    "refs": _texts,
    "summary": _text,
    "replacements": lambda value: isinstance(value, list) and all(isinstance(r, dict) for r in value),
}


def check_event(event: Any) -> None:
    """Raise ValueError, naming the field, unless `event` has the shape its kind is read back by."""
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise ValueError("not an event object")
    kind = event["type"]
    if "ts" in event and not _time(event["ts"]):
        raise ValueError("bad field 'ts'")
    _fields(event, FIELDS.get(kind, {}), "")
    if kind in MESSAGE_EVENTS and "message" in event:
        _blocks(event["message"])
        Message.from_json(event["message"])
    elif kind == "compaction":
        _fields(event["compaction"], COMPACTION_FIELDS, "compaction.")
        for span in event["compaction"].get("replacements", []):
            for message in span.get("messages") or []:
                _blocks(message)
        Compaction.from_json(event["compaction"])


def _fields(data: dict[str, Any], checks: dict[str, Check], prefix: str) -> None:
    for name, ok in checks.items():
        if name in data and not ok(data[name]):
            raise ValueError(f"bad field '{prefix}{name}'")


def _blocks(message: Any) -> None:
    """The metas of a message's blocks (the rest of it `Message.from_json` checks as it reads)."""
    if not isinstance(message, dict):
        raise ValueError("bad field 'message'")
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        _meta(block.get("meta") if isinstance(block, dict) else None)


def _meta(meta: Any) -> None:
    """A block's meta: our own, each field of BlockMeta's type (a bool is not a number here)."""
    if meta is None:
        return
    if not isinstance(meta, dict):
        raise ValueError("bad field 'meta'")
    for name, value in meta.items():
        want = META_TYPES.get(name)
        if want is None:
            raise ValueError(f"bad field 'meta.{name}'")
        if want is float and type(value) in (int, float) and math.isfinite(value):
            continue
        if want is not float and isinstance(value, want) and (want is bool or not isinstance(value, bool)):
            continue
        raise ValueError(f"bad field 'meta.{name}'")
