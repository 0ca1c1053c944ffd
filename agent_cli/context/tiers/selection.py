"""Reading a view: which blocks and messages are whose, what a tool call acted on, the groups that live
and die together, and where the kept tail begins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.model import ContextConfig, TokenCount
from agent_cli.context.tiers.markers import COMPACTED_PREFIXES, NOT_MATERIAL_TAGS
from agent_cli.core.types import Block, Message

TARGET_KEYS = ("path", "file_path", "command", "pattern", "url", "query", "ref")
PATH_KEYS = frozenset({"path", "file_path"})


# -- classifying blocks and messages -----------------------------------------------------------------


def is_person_block(block: Block) -> bool:
    return block.type == "text" and block.meta.source == "user" and not block.meta.tag


def is_person_message(message: Message) -> bool:
    """A user message carrying the person's own words (not only tool results or injections)."""
    return message.role == "user" and any(is_person_block(b) for b in message.blocks)


def is_summary_block(block: Block) -> bool:
    """A block that is itself a summary or engine scaffolding: never raw material for a summarizer."""
    return block.meta.source in ("compactor", "memory") or block.meta.tag in NOT_MATERIAL_TAGS


def is_compacted_result(block: Block) -> bool:
    return block.type == "tool_result" and block.text.startswith(COMPACTED_PREFIXES)


def last_person_index(view: Sequence[Message]) -> int | None:
    for i in range(len(view) - 1, -1, -1):
        if is_person_message(view[i]):
            return i
    return None


def tool_uses_by_id(view: Sequence[Message]) -> dict[str, Block]:
    return {b.id: b for m in view if m.role == "assistant" for b in m.blocks if b.type == "tool_use"}


def tool_target(tool_input: dict) -> str:
    """A short label of what a call acted on: its path, command or pattern."""
    for key in TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            if len(line) <= 80:
                return line
            return "..." + line[-77:] if key in PATH_KEYS else line[:77] + "..."  # a path: keep its file name
    return ""


_NUMBERED = re.compile(r"^ *(\d+)(?:\t|→)", re.MULTILINE)


def read_range(text: str) -> tuple[int, int] | None:
    """(first, last) line number a file read's output shows (`    12\t…` or `    12→…`), None if none."""
    first = _NUMBERED.search(text)
    if first is None:
        return None
    *_, last = _NUMBERED.finditer(text, first.start())
    return int(first.group(1)), int(last.group(1))


def result_tool_name(block: Block, uses: dict[str, Block]) -> str:
    if block.meta.tool_name:
        return block.meta.tool_name
    use = uses.get(block.tool_use_id)
    return use.name if use else "tool"


# -- grouping and the tail ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """view[start:end]: one message, or an assistant message with tool_use plus the user message
    answering it — a unit that lives and dies together."""

    start: int
    end: int


def group_view(view: Sequence[Message]) -> list[Group]:
    groups: list[Group] = []
    i = 0
    while i < len(view):
        message = view[i]
        if (
            message.role == "assistant"
            and message.tool_uses()
            and i + 1 < len(view)
            and view[i + 1].role == "user"
        ):
            groups.append(Group(i, i + 2))
            i += 2
        else:
            groups.append(Group(i, i + 1))
            i += 1
    return groups


def is_valid_tail_start(view: Sequence[Message], index: int) -> bool:
    """Can the kept tail begin at `index` after a bridge message without splitting a pair?"""
    if index >= len(view):
        return True
    message = view[index]
    return message.role == "assistant" or not message.tool_results()


def find_tail_start(
    view: Sequence[Message], counter: TokenCount, tail_tokens: int, *, keep_last_person: bool = True
) -> int:
    """Where the kept tail begins: the latest valid start whose tail holds >= `tail_tokens` (or the
    earliest valid start after the head when the view is smaller). Never splits a tool pair, never
    returns 0 (the head is kept separately). With `keep_last_person` the tail always holds the last
    person's message."""
    if len(view) <= 1:
        return len(view)
    starts = [i for i in range(1, len(view)) if is_valid_tail_start(view, i)]
    if not starts:
        return len(view)
    chosen = starts[0]
    acc = 0
    position = len(view)
    for start in reversed(starts):
        acc += sum(counter.message(view[j]) for j in range(start, position))
        position = start
        chosen = start
        if acc >= tail_tokens:
            break
    if keep_last_person:
        person = last_person_index(view)
        if person is not None and person >= 1 and person < chosen:
            chosen = max((s for s in starts if s <= person), default=chosen)
    return chosen


def plan_tail(view: Sequence[Message], counter: TokenCount, tail_tokens: int) -> tuple[int, Message | None]:
    """(tail start, lifted person's message) for T2/T4/T5.

    The tail holds about `tail_tokens` and never splits a pair. When the last person's message lies
    before it (a long autonomous run), it is not allowed to drag the whole run into the tail: its
    words are lifted verbatim to the end of the bridge message instead, so the person's latest request
    is still read right before the recent turns — and the tail then begins with an assistant message."""
    start = find_tail_start(view, counter, tail_tokens, keep_last_person=False)
    person = last_person_index(view)
    if person is None or person < 1 or person >= start:
        return start, None
    if start < len(view) and view[start].role == "user":
        earlier = [i for i in range(person + 1, start) if view[i].role == "assistant"]
        if not earlier:
            return find_tail_start(view, counter, tail_tokens), None
        start = earlier[-1]
    return start, view[person]


def tail_tokens_for(config: ContextConfig, budget: int, used: int | None = None) -> int:
    """The kept tail's budget: tail_fraction of the auto threshold — or of the usage when it is lower
    (a manual /compact early in a session still has a middle to summarize)."""
    threshold = config.auto_fraction * budget
    if used is not None:
        threshold = min(threshold, used)
    return int(config.tail_fraction * threshold)
