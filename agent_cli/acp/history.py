"""A session's conversation, replayed to an ACP client as the updates it would have seen live
(`session/load`): the person's words, the answers and thoughts, each tool call with its outcome.

It reads `AgentBackend.conversation()`, the full log (nothing compacted away), as the TUI paints
its transcript on resume. What the program injected into a user message (reminders, attachments)
is not the person's and is not replayed.
"""

from __future__ import annotations

from typing import Any

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)

from agent_cli.acp.updates import KINDS, SHOWN_CHARS, Updates, _text, title
from agent_cli.core.types import Block, Message, ToolCall


def replay(messages: list[Message], updates: Updates) -> list[Any]:
    """The updates that show `messages`, in order, ending with the todo list when there is one."""
    results = {b.tool_use_id: b for m in messages for b in m.blocks if b.type == "tool_result"}
    out: list[Any] = []
    for message in messages:
        for block in message.blocks:
            out += _block(message.role, block, results, updates)
    if updates.todo():
        out.append(updates.plan())
    return out


def _block(role: str, block: Block, results: dict[str, Block], updates: Updates) -> list[Any]:
    if block.type == "text" and block.text.strip():
        if role == "user":
            return (
                []
                if block.meta.tag or block.meta.source != "user"
                else [update_user_message_text(block.text)]
            )
        return [update_agent_message_text(block.text)]
    if block.type == "thinking" and block.text.strip():
        return [update_agent_thought_text(block.text)]
    if block.type == "tool_use":
        call = ToolCall(block.id, block.name, dict(block.input))
        result = results.get(block.id)
        target = _target(call)
        start = start_tool_call(
            call.id,
            title(call, target),
            kind=KINDS.get(call.name, "other"),
            status="pending",
            content=updates.diff(call),
            locations=updates.locations(call),
            raw_input=call.input,
        )
        updates.announced.add(call.id)
        if result is None:
            return [start]
        status = "failed" if result.is_error else "completed"
        content = [*(updates.diff(call) or []), _text(result.text[:SHOWN_CHARS])] if result.text else None
        return [start, update_tool_call(call.id, status=status, content=content)]
    return []


def _target(call: ToolCall) -> str:
    """A short label of what a logged call acted on (the tool objects are not needed to read it)."""
    for key in ("path", "command", "pattern", "url", "query", "description"):
        value = call.input.get(key)
        if isinstance(value, str) and value:
            first = value.strip().splitlines()[0] if value.strip() else value
            return first if len(first) <= 80 else first[:79] + "…"
    return ""
