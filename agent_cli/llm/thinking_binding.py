"""Thinking blocks a model with preserved thinking can still use, and no others (a wire-level guard).

Newer Claude models (models.toml: `thinking_binding = true`) think by default and bind each thinking
block to its prefix: the tools, the system prompt and every message and block before it, as they were
when the block was produced. When a request sends a block back whose prefix has changed since — or
with a thinking block before it left out — the API refuses the request (400, "The block is bound to
a different conversation"; by default on accounts created from 2026-08-31) or drops the block.

The context engine changes old messages by design: every T1 clear, fold and summary does. So before
each request the provider asks this guard which thinking blocks are still bound to what the request
carries, and leaves the others out. The view and the log keep them; the provider notes them on the
request (`Request.UNSENT`), and the engine stops counting them (context/requests.py). A change
invalidates only the thinking after it: blocks before it, and blocks produced after it, stay.

How: a running SHA-256 over the request in order (tools, system, then each message's blocks;
`cache_control` is not content and is left out). When a response arrives, each of its thinking blocks
is recorded (by its signature, which is unique) with the digest of everything before it. A block is
sent back only when the digest before it in the new request is the recorded one; a block this guard
never saw produced (a session resumed in a new process) cannot be vouched for and is left out too.
Should the API refuse a block all the same, the provider sends the request again asking it to drop,
not refuse, such blocks (`REQUEST_FIELD`, beta `BETA`), and keeps asking for the rest of the session
(`drop_misbound`): the history still holds whatever the API saw changed. Requests otherwise go out as
the engine built them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from agent_cli.core.types import Message

BETA = "thinking-binding-controls-2026-08-01"
REQUEST_FIELD = {"block_binding": {"prefix_mismatch_behavior": "drop_block"}}
THINKING_TYPES = ("thinking", "redacted_thinking")
EMPTY = {"type": "text", "text": "(no content)"}  # the API refuses an empty message


def refused_as_misbound(err: Exception) -> bool:
    """Whether the API refused a request for a thinking block whose prefix changed."""
    return getattr(err, "status", None) == 400 and "bound to a different conversation" in str(err)


def asked_to_drop(body: dict[str, Any]) -> dict[str, Any]:
    """`body` asking the API to drop (not refuse) a thinking block whose prefix changed. Such models
    think adaptively by default, so naming the mode changes nothing else."""
    thinking = dict(body.get("thinking") or {"type": "adaptive"})
    return {**body, "thinking": {**thinking, **REQUEST_FIELD}}


class ThinkingBinding:
    """What each thinking block was bound to when it was produced (one per provider: signatures are
    unique, so sub-agents and side requests sharing the provider do not mix)."""

    def __init__(self) -> None:
        self._bound: dict[str, str] = {}  # signature -> digest of everything before the block
        self.drop_misbound = False  # the API refused a block this guard let through: ask it to drop

    def outgoing(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """`body` without the thinking blocks whose prefix changed since they were produced, and the
        blocks left out (a message that held nothing else keeps a placeholder text)."""
        running = _start(body)
        messages: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        for message in body.get("messages", []):
            running.update(_role(message))
            content, kept = _content(message), []
            for block in content:
                if _is_thinking(block) and self._bound.get(_signature(block)) != running.hexdigest():
                    dropped.append(block)
                    continue
                running.update(_canonical(block))
                kept.append(block)
            if len(kept) != len(content):
                message = {**message, "content": kept or [dict(EMPTY)]}
            messages.append(message)
        return ({**body, "messages": messages} if dropped else body), dropped

    def produced(self, body: dict[str, Any], reply: Message) -> None:
        """Record the thinking blocks of `reply`, the answer to the request `body` (as sent)."""
        running = _start(body)
        for message in body.get("messages", []):
            running.update(_role(message))
            for block in _content(message):
                running.update(_canonical(block))
        running.update(_role({"role": "assistant"}))
        for block in (b.to_api() for b in reply.blocks):
            if _is_thinking(block) and _signature(block):
                self._bound[_signature(block)] = running.hexdigest()
            running.update(_canonical(block))


def _start(body: dict[str, Any]) -> Any:
    running = hashlib.sha256()
    for part in ("tools", "system"):
        running.update(_canonical({part: body.get(part) or []}))
    return running


def _role(message: dict[str, Any]) -> bytes:
    return b"\x00" + str(message.get("role", "")).encode() + b"\x00"


def _content(message: dict[str, Any]) -> Sequence[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content or []


def _is_thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in THINKING_TYPES


def _signature(block: dict[str, Any]) -> str:
    return str(block.get("signature") or block.get("data") or "")


def _canonical(value: Any) -> bytes:
    return json.dumps(_without_markers(value), sort_keys=True, ensure_ascii=False).encode() + b"\x01"


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value
