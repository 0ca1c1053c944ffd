"""The second step of T1: old tool pairs whose outputs are already cleared become digest lines.

A cleared pair still costs its tool_use (name, id, input) and its placeholder in every request.
Outside the recent window, a run of such pairs — assistant(tool_use...) · user(results) · assistant
... — is folded into the next assistant message: the assistant's own text verbatim, then one line
per call `- <tool> <target> → ok|error (N chars, ref R)`. Nothing is lost: every output and every
input stays recallable by its ref. The last `keep_calls` calls keep their full structure, so the
model always sees how it calls tools, and the person's words are never touched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_cli.context.tiers.digest import _pure_results
from agent_cli.context.tiers.markers import short_ref
from agent_cli.context.tiers.selection import is_compacted_result, tool_target
from agent_cli.core.types import Block, BlockMeta, Message, Trust

_LINES = re.compile(r"lines \d+-\d+")
KEEP_CALLS = 10  # the most recent tool calls always keep their tool_use/tool_result structure


@dataclass
class Collapsed:
    view: list[Message]
    originals: dict[str, str] = field(default_factory=dict)
    refs: list[str] = field(default_factory=list)


def protect_from(view: Sequence[Message], keep_calls: int = KEEP_CALLS) -> int:
    """Index of the first message that must keep its structure: the one holding the keep_calls-th
    most recent tool_use (everything when there are fewer calls)."""
    seen = 0
    for index in range(len(view) - 1, -1, -1):
        seen += len(view[index].tool_uses()) if view[index].role == "assistant" else 0
        if seen >= keep_calls:
            return index
    return 0


def _collapsible(view: Sequence[Message], i: int, limit: int, small: int, keep: frozenset[str]) -> bool:
    if i < 1 or i + 2 >= limit or view[i].role != "assistant" or not view[i].tool_uses():
        return False
    if any(use.id in keep for use in view[i].tool_uses()):
        return False  # the working set: its calls keep their inputs and results
    results, following = view[i + 1], view[i + 2]
    if following.role != "assistant" or not _pure_results(results):
        return False
    answered = {b.tool_use_id for b in results.tool_results()}
    if answered != {b.id for b in view[i].tool_uses()}:
        return False
    return all(is_compacted_result(b) or len(b.text) <= small for b in results.tool_results())


def collapse(
    view: Sequence[Message],
    *,
    small: int,
    now: float = 0.0,
    keep_calls: int = KEEP_CALLS,
    keep: frozenset[str] = frozenset(),
) -> Collapsed:
    limit = protect_from(view, keep_calls)
    out = Collapsed([])
    pending: list[Block] = []
    i = 0
    while i < len(view):
        message = view[i]
        if _collapsible(view, i, limit, small, keep):
            results = {b.tool_use_id: b for b in view[i + 1].tool_results()}
            pending += [b for b in message.blocks if b.type == "text" and b.text]
            lines = []
            for use in message.tool_uses():
                result = results.get(use.id)
                lines.append(digest_line(use, result))
                _keep_originals(out, use, result, lines[-1])
            meta = BlockMeta(Trust.ASSISTANT, "assistant", now, tag="tool-digest")
            pending.append(Block.text_block("\n".join(lines), meta))
            i += 2
            continue
        if pending:  # the run ends in this assistant message (guaranteed by _collapsible)
            rest = [b for b in message.blocks if b.type != "thinking"]
            message = Message("assistant", tuple(pending + rest), message.turn)
            pending = []
        out.view.append(message)
        i += 1
    return out


def digest_line(use: Block, result: Block | None) -> str:
    what = f"{use.name} {tool_target(use.input)}".strip()
    if result is None:
        return f"- {what} → no result"
    outcome = "error" if result.is_error else "ok"
    if not result.text:
        return f"- {what} → {outcome} (no output)"
    ref = result.meta.ref or short_ref(result.tool_use_id)
    size = "output cleared" if is_compacted_result(result) else f"{len(result.text)} chars"
    lines = _LINES.search(result.text[:300]) if is_compacted_result(result) else None
    if lines:  # a cleared read names its line range: one recall of the ref brings those lines back
        what += f" {lines.group(0)}"
    return f"- {what} → {outcome} ({size}, ref {ref})"


def _keep_originals(out: Collapsed, use: Block, result: Block | None, line: str) -> None:
    """Whatever the digest line does not show stays recallable: the input (any string of it the line
    does not hold verbatim, a grep pattern beside its path say), and an uncleared output."""
    if any(isinstance(v, str) and v not in line for v in use.input.values()) and not use.meta.ref:
        ref = f"{short_ref(use.id)}-in"
        out.originals[ref] = json.dumps(use.input, ensure_ascii=False, indent=1)
        out.refs.append(ref)
    if result is not None and result.text and not is_compacted_result(result):
        ref = result.meta.ref or short_ref(result.tool_use_id)
        if not result.meta.ref:
            out.originals[ref] = result.text
        out.refs.append(ref)
