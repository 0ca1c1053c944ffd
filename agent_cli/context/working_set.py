"""The working set: tool traffic the model is still working with, which T1, T3 and digest leave alone.

Computed from the view alone, by code (no model), so a replayed view gets the same answer:

- each file has a *picture*: its reads since it was last written or read whole (a later read covering
  the same lines supersedes an earlier one), then the written content, then the edits since (their old
  and new text). An edit patches the picture; it does not make the read stale — the next edit of the
  same file needs the rest of it. A read of the whole file shows it as it is now, so everything before
  it in the picture (the written content, the edits, partial reads) is superseded. What the picture no
  longer holds is *stale*: superseded reads, text written over, edits before the last whole write or
  whole read.
- the working files: files named in the todo list or in the last failing command's output (a bash
  result with a non-zero exit) first, then the files touched (read, edited, written) within the last
  `working_set_calls` tool calls, most recent first. Their pictures are kept in that order while they
  fit in `working_set_fraction` of the budget; a picture larger than what is left is skipped, the
  next one may still fit.

Why bounded: every kept token is read again by every later request (0.1x each), so keeping a file
costs about what re-reading it once costs (the context read from the cache plus the file) after a
few dozen requests. On real sessions nearly every edit follows the last touch of its file within a
dozen calls; the bounds keep what is likely needed and let the rest go, recallable.

Everything outside the working set may be cleared; stale outputs may be cleared even among the most
recent results T1 otherwise keeps. Every cleared result stays recallable by its ref.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_cli.context.model import TierContext, TokenCount
from agent_cli.core.types import Block, Message

READ_TOOLS = frozenset({"read_file", "Read"})
EDIT_TOOLS = frozenset({"edit_file", "Edit", "MultiEdit"})
WRITE_TOOLS = frozenset({"write_file", "Write"})
TODO_TOOLS = frozenset({"todo_write", "todo", "TodoWrite"})
BASH_TOOLS = frozenset({"bash", "Bash"})
SUPERSEDED_KEYS = frozenset({"old_string"})  # an applied edit's old text is no longer in the file
UNCHANGED_PREFIX = "unchanged since "  # read_file's answer to a re-read still in view (tools/read.py)
WHOLE = 10**9  # a read without a limit covers the file (as far as the tool shows it)
_EXIT = re.compile(r"(?:exit(?:ed)?(?: with)?(?: code| status)?[:= ]+|\[exit )(-?\d+)", re.IGNORECASE)
_PATHISH = re.compile(r"[\w./-]*\w\.\w{1,8}")


@dataclass(frozen=True)
class WorkingSet:
    keep: frozenset[str] = frozenset()  # tool_use ids whose result and input stay
    stale: frozenset[str] = frozenset()  # tool_use ids whose output is superseded
    files: tuple[str, ...] = ()  # the working files, most important first

    def keeps(self, tool_use_id: str) -> bool:
        return tool_use_id in self.keep


@dataclass
class _File:
    path: str
    last: int = -1  # number of the last call that touched it (calls counted from the start of the view)
    picture: list[str] = field(default_factory=list)  # tool_use ids, oldest first
    reads: list[tuple[str, int, int]] = field(default_factory=list)  # (id, first line, last line)
    stale: list[str] = field(default_factory=list)


def _name(block: Block) -> str:
    return block.meta.tool_name or block.name


def _path(block: Block) -> str:
    value = block.input.get("file_path") or block.input.get("path") or ""
    return str(value) if isinstance(value, str) else ""


def _int(value: object, default: int) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _range(block: Block) -> tuple[int, int]:
    first = max(1, _int(block.input.get("offset"), 1))
    limit = _int(block.input.get("limit"), 0)
    return first, (first + limit - 1 if limit > 0 else WHOLE)


def _files(view: Sequence[Message]) -> dict[str, _File]:
    files: dict[str, _File] = {}
    outputs = {b.tool_use_id: b for m in view if m.role == "user" for b in m.tool_results()}
    failed = {i for i, b in outputs.items() if b.is_error}
    calls = 0
    for message in view:
        if message.role != "assistant":
            continue
        for use in message.tool_uses():
            calls += 1
            name, path = _name(use), _path(use)
            if not path or use.id in failed or name not in READ_TOOLS | EDIT_TOOLS | WRITE_TOOLS:
                continue
            entry = files.setdefault(path, _File(path))
            entry.last = calls
            if name in WRITE_TOOLS:
                entry.stale += entry.picture
                entry.picture, entry.reads = [use.id], []
            elif name in EDIT_TOOLS:
                entry.picture.append(use.id)
            elif use.id in outputs and outputs[use.id].text.startswith(UNCHANGED_PREFIX):
                entry.picture.append(use.id)  # "unchanged since": the earlier read still holds the text
            else:
                first, last = _range(use)
                if (first, last) == (1, WHOLE):  # the whole file as it is now: all before is superseded
                    entry.stale += entry.picture
                    entry.picture, entry.reads = [use.id], [(use.id, first, last)]
                    continue
                covered = [r for r in entry.reads if first <= r[1] and r[2] <= last]
                for old in covered:
                    entry.reads.remove(old)
                    entry.picture.remove(old[0])
                    entry.stale.append(old[0])
                entry.reads.append((use.id, first, last))
                entry.picture.append(use.id)
    return files


def _named_files(view: Sequence[Message], paths: Sequence[str]) -> list[str]:
    """Paths named in the latest todo list or the last failing command's output."""
    texts: list[str] = []
    uses = {b.id: b for m in view if m.role == "assistant" for b in m.tool_uses()}
    todo = next(
        (b for m in reversed(view) if m.role == "assistant" for b in m.tool_uses() if _name(b) in TODO_TOOLS),
        None,
    )
    if todo is not None:
        texts.append(str(todo.input))
    for message in reversed(view):
        results = [
            b
            for b in message.tool_results()
            if b.tool_use_id in uses and _name(uses[b.tool_use_id]) in BASH_TOOLS
        ]
        if results:
            last = results[-1]
            found = _EXIT.search(last.text[-400:])
            if last.is_error or (found and found.group(1) != "0"):
                texts.append(last.text)
            break
    mentioned = {m.group(0).lstrip("./") for text in texts for m in _PATHISH.finditer(text)}
    return [p for p in paths if any(len(m) > 3 and _same_file(p, m) for m in mentioned)]


def _same_file(path: str, mentioned: str) -> bool:
    """`/repo/tests/x.py` and `tests/x.py` (or `x.py` and `tests/x.py`) name the same file."""
    path = path.lstrip("./")
    return path == mentioned or path.endswith("/" + mentioned) or mentioned.endswith("/" + path)


def working_set(
    view: Sequence[Message], counter: TokenCount, budget_tokens: int, recent_calls: int = 10**9
) -> WorkingSet:
    """The tool calls whose results and inputs the model is still working with (see the module doc):
    files named in the todo list or a failing command's output, then files touched in the last
    `recent_calls` tool calls, most recent first, while their pictures fit in `budget_tokens`."""
    files = _files(view)
    if not files:
        return WorkingSet()
    by_recency = sorted(files, key=lambda p: files[p].last, reverse=True)
    named = _named_files(view, by_recency)
    calls = sum(len(m.tool_uses()) for m in view if m.role == "assistant")
    recent = [p for p in by_recency if p not in named and calls - files[p].last < recent_calls]
    ranked = named + recent
    blocks: dict[str, list[Block]] = {}
    for message in view:
        for block in message.blocks:
            key = block.id if block.type == "tool_use" else block.tool_use_id
            if key:
                blocks.setdefault(key, []).append(block)
    keep: set[str] = set()
    chosen: list[str] = []
    left = budget_tokens
    for path in ranked:
        cost = sum(_tokens(b, counter) for call in files[path].picture for b in blocks.get(call, ()))
        if cost <= left:
            left -= cost
            keep.update(files[path].picture)
            chosen.append(path)
    stale = frozenset(call for f in files.values() for call in f.stale)
    return WorkingSet(frozenset(keep), stale, tuple(chosen))


def _tokens(block: Block, counter: TokenCount) -> int:
    if block.type == "tool_result":
        return counter.text(block.text)
    if block.type == "tool_use":  # an edit's old text is not kept (T1 clears it): not counted
        return sum(
            counter.text(v) for k, v in block.input.items() if isinstance(v, str) and k not in SUPERSEDED_KEYS
        )
    return 0


def for_context(view: Sequence[Message], ctx: TierContext) -> WorkingSet:
    """The working set under the tier context's budget (`working_set_fraction` of it)."""
    if ctx.config.working_set_fraction <= 0:
        return WorkingSet()
    budget = int(ctx.config.working_set_fraction * ctx.budget)
    return working_set(view, ctx.counter, budget, ctx.config.working_set_calls)
