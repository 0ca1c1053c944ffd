"""Claude Code's stream-json shapes: what `agent -p --output-format stream-json` prints, and the user
messages `--input-format stream-json` reads.

A run prints a `system`/`init` message first, then an `assistant` message per response (the API's
message: id, role, model, content blocks, stop_reason, usage) and a `user` message per tool result,
and ends with the `result` (api/result.py). Tools are named as Claude Code names them, in `init`,
in the `tool_use` blocks and in `permission_denials` alike, and a `tool_use` block's input is the
one hooks get (`file_path` for the file tools: extensions/hooks/spec.py `claude_input`); the `user`
line's `tool_use_id` pairs it with its block. Every line carries the `session_id`. Our own events —
compaction, the context gauge, retries, notices, tool starts — are lines of their own types beside
these, never in their place.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from agent_cli.core.events import (
    AssistantMessage,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    TurnFinished,
)
from agent_cli.core.surrogates import scrub
from agent_cli.extensions.hooks.runner import PERMISSION_MODES
from agent_cli.extensions.hooks.spec import claude_input, claude_name


@dataclass(frozen=True)
class SessionFacts:
    """What `system`/`init` tells: the session, where it runs, with what."""

    session_id: str
    cwd: str
    model: str
    permission_mode: str  # ours: ask | auto-edit | plan | yolo
    tools: tuple[str, ...]  # our names, in the order the model sees them
    mcp_servers: tuple[tuple[str, str], ...] = ()  # (name, state)
    slash_commands: tuple[str, ...] = ()
    version: str = ""


def init_message(facts: SessionFacts) -> dict[str, Any]:
    """Claude Code's `system`/`init`: tool names as Claude Code names them where it has the tool,
    its permission mode names (`default`, `acceptEdits`, `plan`, `bypassPermissions`); ours after."""
    return {
        "type": "system",
        "subtype": "init",
        "uuid": str(uuid.uuid4()),
        "session_id": facts.session_id,
        "cwd": facts.cwd,
        "tools": [claude_name(name) for name in facts.tools],
        "mcp_servers": [{"name": name, "status": state} for name, state in facts.mcp_servers],
        "model": facts.model,
        "permissionMode": PERMISSION_MODES.get(facts.permission_mode, facts.permission_mode),
        "slash_commands": list(facts.slash_commands),
        "output_style": "default",
        "agent_version": facts.version,
        "permission_mode": facts.permission_mode,
    }


def stream_message(event: Event, session_id: str, model: str, cwd: str = ".") -> dict[str, Any] | None:
    """The line for `event`, or None when it has none: text and thinking deltas (the whole response
    comes as its `assistant` message) and the turn's end (the `result` line says it). `cwd` is the
    session's workspace, which a file tool's relative path is read from."""
    if isinstance(event, AssistantMessage):
        return assistant_message(event, session_id, model, cwd)
    if isinstance(event, ToolFinished):
        return tool_result_message(event, session_id)
    if isinstance(event, TextDelta | ThinkingDelta | TurnFinished):
        return None
    return {**event.to_json(), "session_id": session_id}


def assistant_message(event: AssistantMessage, session_id: str, model: str, cwd: str = ".") -> dict[str, Any]:
    blocks = event.message.blocks if event.message is not None else ()
    return {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "session_id": session_id,
        "parent_tool_use_id": None,
        "message": {
            "id": event.message_id or f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": event.model or model,
            "content": [_claude_block(block.to_api(), cwd) for block in blocks],
            "stop_reason": event.stop_reason or None,
            "stop_sequence": None,
            "usage": event.usage.to_json(),
        },
    }


def _claude_block(block: dict[str, Any], cwd: str) -> dict[str, Any]:
    """A content block as Claude Code's stream shows it: a tool_use with its tool's name and input."""
    if block.get("type") != "tool_use":
        return block
    name = str(block.get("name", ""))
    return {**block, "name": claude_name(name), "input": claude_input(name, block.get("input") or {}, cwd)}


def tool_result_message(event: ToolFinished, session_id: str) -> dict[str, Any]:
    """A tool's result as the user message that carries it to the model."""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": event.call.id if event.call else "",
        "content": event.output,
        "is_error": event.is_error,
    }
    return {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "session_id": session_id,
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": [block]},
    }


class BadInput(ValueError):
    """A stream-json input line that is not a user message we can send."""


def user_prompt(line: str) -> str:
    """The text of one `--input-format stream-json` line, Claude Code's user message:
    `{"type":"user","message":{"role":"user","content":"…" or [{"type":"text","text":"…"}, …]}}`.
    Raises BadInput, saying what is wrong, for anything else."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadInput(f"not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("type") != "user":
        raise BadInput('expected {"type": "user", "message": {...}}')
    message = data.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        raise BadInput('"message" must be {"role": "user", "content": ...}')
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "text":
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise BadInput(f"content blocks of type {kind!r} are not supported here (text only)")
            texts.append(str(block.get("text", "")))
    else:
        raise BadInput('"content" must be a string or a list of text blocks')
    text = scrub("\n\n".join(t for t in texts if t))  # a JSON escape of a lone surrogate ("\\udcff")
    if not text.strip():
        raise BadInput("the message has no text")
    return text
