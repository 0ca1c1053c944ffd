"""The invariants of DESIGN §3, as one checker run after every transformation of the view.

1. every tool_result answers a tool_use of the immediately preceding assistant message, and every
   tool_use is answered before the next assistant message (a tool pair lives and dies together);
2. in a user message: tool_result blocks first, tagged injections next, the person's words last;
3. roles alternate and the first message is from the user;
4. a summary is never summarized as raw material (the tiers check it with `is_summary`);
5. the request fits the budget (window minus reserved output).
Plus what the API refuses outright: empty messages and empty (whitespace-only) text blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.core.types import Block, Message


class InvariantError(AssertionError):
    """The view broke a rule the API (or the engine) depends on."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations = list(violations)
        super().__init__("context invariants violated:\n- " + "\n- ".join(self.violations))


def is_summary(block: Block) -> bool:
    """A block written by a compaction: it is updated, never summarized as raw material (rule 4)."""
    return block.meta.source == "compactor"


def user_rank(block: Block) -> int:
    """Order inside a user message (rule 2): 0 tool results, 1 tagged injections, 2 the person's words."""
    if block.type == "tool_result":
        return 0
    if block.meta.tag:
        return 1
    return 2


def check(messages: Sequence[Message], *, budget: int | None = None, tokens: int | None = None) -> list[str]:
    """Every violation found, in order; an empty list when the view is valid."""
    out: list[str] = []
    if messages and messages[0].role != "user":
        out.append(f"message 0 is from the {messages[0].role}; the first message must be from the user")
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        where = f"message {i} ({message.role})"
        if message.role not in ("user", "assistant"):
            out.append(f"{where}: unknown role")
            continue
        if i > 0 and messages[i - 1].role == message.role:
            out.append(f"{where}: follows another {message.role} message; roles must alternate")
        if not message.blocks:
            out.append(f"{where}: has no content blocks")
        for j, block in enumerate(message.blocks):
            if block.type == "text" and not block.text.strip():
                out.append(f"{where} block {j}: empty text block")
        if message.role == "assistant":
            out += _check_assistant(messages, i, seen_ids)
        else:
            out += _check_user(messages, i)
    if budget is not None and tokens is not None and tokens > budget:
        out.append(f"the request needs {tokens:,} tokens, over the budget of {budget:,}")
    return out


def assert_valid(
    messages: Sequence[Message], *, budget: int | None = None, tokens: int | None = None
) -> None:
    violations = check(messages, budget=budget, tokens=tokens)
    if violations:
        raise InvariantError(violations)


def _check_assistant(messages: Sequence[Message], i: int, seen_ids: set[str]) -> list[str]:
    out: list[str] = []
    message = messages[i]
    where = f"message {i} (assistant)"
    uses: list[str] = []
    for j, block in enumerate(message.blocks):
        if block.type == "tool_result":
            out.append(f"{where} block {j}: a tool_result in an assistant message")
        elif block.type == "tool_use":
            if not block.id:
                out.append(f"{where} block {j}: a tool_use without an id")
            elif block.id in seen_ids:
                out.append(f"{where} block {j}: tool_use id {block.id!r} is used twice")
            seen_ids.add(block.id)
            uses.append(block.id)
    if not uses or i + 1 >= len(messages):
        return out  # the last message may hold calls still running
    answered = {b.tool_use_id for b in messages[i + 1].blocks if b.type == "tool_result"}
    if messages[i + 1].role != "user":
        answered = set()
    for tool_id in uses:
        if tool_id not in answered:
            out.append(f"{where}: tool_use {tool_id!r} has no tool_result in the next message")
    return out


def _check_user(messages: Sequence[Message], i: int) -> list[str]:
    out: list[str] = []
    message = messages[i]
    where = f"message {i} (user)"
    previous = messages[i - 1] if i > 0 and messages[i - 1].role == "assistant" else None
    offered = {b.id for b in previous.blocks if b.type == "tool_use"} if previous else set()
    answered: set[str] = set()
    rank = 0
    for j, block in enumerate(message.blocks):
        if block.type == "tool_use":
            out.append(f"{where} block {j}: a tool_use in a user message")
        if block.type == "tool_result":
            if block.tool_use_id not in offered:
                out.append(
                    f"{where} block {j}: tool_result {block.tool_use_id!r} answers no tool_use "
                    "of the previous assistant message"
                )
            if block.tool_use_id in answered:
                out.append(f"{where} block {j}: a second tool_result for {block.tool_use_id!r}")
            answered.add(block.tool_use_id)
        current = user_rank(block)
        if current < rank:
            out.append(
                f"{where} block {j}: out of order (tool results first, then tagged injections, "
                "then the person's words)"
            )
        rank = max(rank, current)
    return out
