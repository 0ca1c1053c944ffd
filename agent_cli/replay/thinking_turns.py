"""The thinking a request carries: what our provider sends of it, and what the API reads.

A model that binds each thinking block to its prefix (models.toml `thinking_binding`: the 5.5
family) gets back only the blocks no change before them invalidated: the live provider's guard
(llm/thinking_binding.py) leaves the others out, and so does the replay (`Wire`), so a session on
such a model is priced as our agent would send it, not with the thinking every clear invalidated.

What the API reads: with thinking on, Claude Sonnet 4.5, Haiku 4.5 and the earlier models keep the thinking blocks of
the last assistant turn only (models.toml `thinking_turns = 1`; the API's default when
`clear_thinking_20251015` is not configured): the API leaves older ones out, so they are not
billed, and the prefix cached while they were still in it is read all the same (for such a model
the cache simulator leaves thinking out of its keys). Newer models keep every block
(`thinking_turns` 0). A turn begins at a user message that answers no tool call.

The replay counts and caches each request as the API reads it. Checked on the shared sessions
(bench/residuals.py): at each new turn of entire-08940314 (Sonnet 4.5) the recorded input shrinks
though a prompt was added, and so does only our count without the older thinking (request 274:
-4,941 recorded; +755 counted, -3,873 left out), while on entire-375d5d79 (Opus 4.5) it grows with
the count that keeps everything; a new turn on a warm cache wrote ~100 tokens (bench/RESULTS.md,
stop 34).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agent_cli.core.types import Message, Request
from agent_cli.llm.models import builtin_registry
from agent_cli.llm.thinking_binding import THINKING_TYPES, ThinkingBinding


class Wire:
    """Each request as our provider sends it: for a model that binds its thinking to its prefix
    (models.toml `thinking_binding`), without the thinking blocks a change before them invalidated,
    noted on the request as built (`Request.UNSENT`), as llm/anthropic.py does; and as the API then
    reads it (`as_read`)."""

    def __init__(self) -> None:
        self.binding = ThinkingBinding()
        self.guarded = False  # the last request's model binds its thinking

    def read(self, built: Request, model: str, turns: int) -> tuple[Request, Request]:
        """(the request as sent, as read)."""
        sent = built
        self.guarded = builtin_registry().lookup(model).binds_thinking
        if self.guarded:
            body, left_out = self.binding.outgoing(built.to_api())
            built.metadata[Request.UNSENT] = tuple(left_out)
            if left_out:
                sent = replace(built, messages=body["messages"])
        return sent, as_read(sent, turns)

    def answered(self, sent: Request, reply: Message) -> None:
        """`reply` answered `sent`: its thinking is bound to what `sent` carried."""
        if self.guarded:
            self.binding.produced(sent.to_api(), reply)


def turns_kept(model: str) -> int:
    """Turns whose thinking the API keeps for `model` (0: all)."""
    return builtin_registry().lookup(model).thinking_turns


def _turn_start(prompts: Sequence[bool], turns: int) -> int:
    """Index of the first message whose thinking is kept: the start of the `turns`-th last turn
    (`prompts[i]`: message i begins a turn)."""
    starts = [i for i, begins in enumerate(prompts) if begins]
    return starts[-turns] if len(starts) >= turns else 0


def as_read(request: Request, turns: int) -> Request:
    """`request` without the thinking blocks the API leaves out (itself when it keeps them all)."""
    if turns <= 0:
        return request
    messages = request.messages
    first = _turn_start([_begins_turn(m) for m in messages], turns)
    out: list[dict[str, Any]] = []
    changed = False
    for i, message in enumerate(messages):
        content = message.get("content")
        if i < first and message.get("role") == "assistant" and isinstance(content, list):
            kept = [b for b in content if not (isinstance(b, dict) and b.get("type") in THINKING_TYPES)]
            if kept and len(kept) != len(content):
                message, changed = {**message, "content": kept}, True
        out.append(message)
    return replace(request, messages=out) if changed else request


def first_kept(messages: Sequence[Message], turns: int) -> int:
    """Index of the first message of a context whose thinking the API keeps (0: all of it)."""
    if turns <= 0:
        return 0
    return _turn_start([m.role == "user" and not m.tool_results() for m in messages], turns)


def without_thinking(message: Message) -> Message:
    """`message` as the API reads it before the kept turns (an all-thinking message stays)."""
    kept = tuple(b for b in message.blocks if b.type != "thinking")
    return replace(message, blocks=kept) if kept and len(kept) != len(message.blocks) else message


def _begins_turn(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if message.get("role") != "user":
        return False
    return not (isinstance(content, list) and any(b.get("type") == "tool_result" for b in content))
