"""A conversation as Markdown for a person (`/export`): what they typed, what the model said, and each
tool call with its input and the head of its result. The program's own injections (the `<env>` block,
reminders, hook output, the user context) are left out, and an output or a paste kept in the store
shows as its preview and where the whole is, not as the `<persisted-output>` markup the model reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agent_cli.core.persisted import is_persisted, parse_persisted, readable
from agent_cli.core.types import Block, Message

RESULT_LINES = 12  # a result's first lines in the export; the rest is counted
RESULT_CHARS = 2_000
INPUT_CHARS = 200
_MAIN_KEYS = ("command", "path", "file_path", "pattern", "query", "url", "ref", "name", "description")
_BULKY_KEYS = ("content", "old_string", "new_string", "prompt", "todos")


def conversation_markdown(session_id: str, messages: Sequence[Message]) -> str:
    results = {b.tool_use_id: b for m in messages for b in m.tool_results()}
    parts = [f"# Session {session_id}\n"]
    for message in messages:
        if message.role == "user":
            said = "\n\n".join(_person_text(b) for b in message.blocks if _is_person_text(b))
            if said.strip():
                parts.append(f"## You\n\n{said.strip()}\n")
            continue
        body = []
        for block in message.blocks:
            if block.type == "text" and block.text.strip():
                body.append(block.text.strip())
            elif block.type == "tool_use":
                body.append(_tool_call(block, results.get(block.id)))
        if body:
            parts.append("## Assistant\n\n" + "\n\n".join(body) + "\n")
    return "\n".join(parts)


def _is_person_text(block: Block) -> bool:
    """Typed (or pasted) by the person: not a tagged injection, not the program's or a hook's text."""
    return block.type == "text" and not block.meta.tag and block.meta.source == "user" and bool(block.text)


def _person_text(block: Block) -> str:
    kept = parse_persisted(block.text) if is_persisted(block.text) else None
    if kept is None:
        return block.text
    return f"[Pasted text: {kept.chars:,} chars, {kept.lines:,} lines; kept as ref {kept.ref}]"


def _tool_call(use: Block, result: Block | None) -> str:
    summary = _input_summary(use.input)
    head = f"**Tool call: {use.name}**" + (f" `{summary}`" if summary else "")
    if result is None:
        return head + "\n\n(no result: interrupted)"
    kept = parse_persisted(result.text) if is_persisted(result.text) else None
    text, hidden = _head(kept.preview if kept else readable(result.text))
    label = "Error" if result.is_error else "Result"
    fence = _fence(text)
    more = [f"… {hidden:,} more lines" + (" in the preview" if kept else "")] if hidden else []
    more += [kept.where] if kept else []
    tail = "\n\n" + "\n".join(more) if more else ""
    return f"{head}\n\n{label}:\n\n{fence}\n{text}\n{fence}{tail}"


def _input_summary(input: dict[str, Any]) -> str:
    """The call's main argument, then its other arguments (bulky ones as their size), one line."""
    parts: list[str] = []
    main = next((k for k in _MAIN_KEYS if isinstance(input.get(k), str) and input[k]), None)
    if main is not None:
        parts.append(_one_line(str(input[main])))
    for key, value in input.items():
        if key == main:
            continue
        if key in _BULKY_KEYS:
            size = len(value) if isinstance(value, str | list) else len(json.dumps(value))
            parts.append(f"{key}: {size:,} {'chars' if isinstance(value, str) else 'items'}")
        else:
            parts.append(f"{key}={_one_line(json.dumps(value, ensure_ascii=False))}")
    line = " · ".join(parts)
    return line if len(line) <= INPUT_CHARS else line[: INPUT_CHARS - 1] + "…"


def _one_line(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return lines[0] + (" …" if len(lines) > 1 else "")


def _head(text: str) -> tuple[str, int]:
    lines = text.rstrip("\n").splitlines()
    shown = lines[:RESULT_LINES]
    out = "\n".join(shown)
    if len(out) > RESULT_CHARS:
        out = out[:RESULT_CHARS] + " …"
    return out, len(lines) - len(shown)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
