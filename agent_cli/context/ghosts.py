"""Ghost entries and misses: what T1 cleared, and when the model came back for it.

When a compaction clears an item (a tool result becomes a placeholder, an input's strings go), its
ghost is kept: the ref, the file it held (for a read), its group (`file` or `output`: reuse.py),
its size, and the request at which it left. A **miss** is the model asking for a ghost again:

- a `recall` of the ghost's ref (or of the ref a digest line names for it), or
- a read of a file whose earlier read was cleared (and not stale: a superseded read cleared is no
  miss — the model would have had to read the file again anyway), or
- an edit of such a file (`how = "edit"`) whose old text the view no longer shows (made from
  memory): the engine brings the read back with the edit's result (context/restore.py), which costs
  the read written again and no extra request. An edit whose text is still shown (by a partial
  read, an earlier edit's result) did not need the read: no miss, nothing brought back.

What a `Write` gave a file counts as a read of it for an edit: its cleared content is a ghost of the
file, brought back by the file's next edit; a read of the file drops it (it was never read: no miss).

A miss is an event for the log (`Miss.to_json`): the item, its age in requests and what getting it
back cost — the extra request reading the context from the cache (0.1 × context) and the item
written again (1.25 × tokens). Misses teach the predictor (`stats()` -> reuse.ReuseStats: a group
whose clears came back is worth more for the rest of the session, ARC's ghost lists' lesson).
A recall of something never cleared is not a miss. Ghosts are rebuilt by replaying the log (the
same appends and compactions), so a resumed session knows what it had learned.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_cli.context.eviction import CACHE_READ, CACHE_WRITE, SOON, Bet
from agent_cli.context.model import Compaction
from agent_cli.context.restore import Restore
from agent_cli.context.reuse import ReuseStats, tool_name
from agent_cli.context.tiers.markers import short_ref
from agent_cli.context.working_set import EDIT_TOOLS, READ_TOOLS, WRITE_TOOLS, path_of, pictures
from agent_cli.core.events import EvictionReport
from agent_cli.core.types import Block, Message

RECALL_TOOLS = frozenset({"recall"})
_REF = re.compile(r"ref ([\w.-]+)")


@dataclass(frozen=True)
class Ghost:
    ref: str
    call: str  # tool_use id of the call it belonged to
    group: str  # "file" | "output"
    path: str  # the file a read held ("" otherwise)
    tokens: int
    at: int  # request number when it was cleared
    stale: bool = False  # superseded when cleared: coming back for the file is no miss
    key: str = ""  # the input key whose text it held ("content" of a Write); "" for a tool result


@dataclass(frozen=True)
class Miss:
    ref: str
    path: str
    group: str
    age: int  # requests between the clear and the miss
    tokens: int
    cost: float  # weighted tokens: the extra request reading the context, the item written again
    how: str  # "recall" | "reread" | "edit"

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "path": self.path,
            "group": self.group,
            "age": self.age,
            "tokens": self.tokens,
            "cost": round(self.cost),
            "how": self.how,
        }


@dataclass
class Ghosts:
    """The session's ghosts, its misses so far, and the counts the predictor learns from."""

    requests: int = 0
    by_ref: dict[str, Ghost] = field(default_factory=dict)
    clears: dict[str, int] = field(default_factory=dict)
    expected: dict[str, float] = field(default_factory=dict)  # misses the clears were expected to cause
    misses: list[Miss] = field(default_factory=list)
    cleared_tokens: int = 0
    restores: dict[str, list[Restore]] = field(default_factory=dict)  # edit call -> reads to bring back
    last: Bet | None = None  # the latest T1 decision

    def stats(self, classes: dict[str, float] | None = None) -> ReuseStats:
        """What the predictor learns: the misses a clear plausibly caused (a recall, or a read or an
        edit of the file within SOON requests of its clear; a file read again much later would have
        been read again anyway), against the misses the clears were expected to cause that soon."""
        counted: dict[str, int] = {}
        for miss in self.misses:
            if miss.how == "recall" or miss.age <= SOON:
                counted[miss.group] = counted.get(miss.group, 0) + 1
        return ReuseStats(dict(self.expected), counted, classes or {})

    @property
    def restored(self) -> int:
        """Misses that were edits: the read came back with the edit's result (restore.py)."""
        return sum(1 for m in self.misses if m.how == "edit")

    @property
    def miss_cost(self) -> float:
        return sum(m.cost for m in self.misses)

    def report(self) -> EvictionReport:
        last = self.last or Bet(0, 0, 0, 0, 0, 0)
        return EvictionReport(
            clears=sum(self.clears.values()),
            cleared_tokens=self.cleared_tokens,
            misses=len(self.misses),
            miss_cost=round(self.miss_cost),
            restored=self.restored,
            forecast=last.forecast,
            saving=round(last.saving),
            risk=round(last.risk),
            rewrite=round(last.rewrite),
        )

    # -- what left --------------------------------------------------------------------------------
    def cleared(
        self, before: Sequence[Message], compaction: Compaction, count: Any, small: int = 120
    ) -> None:
        """Record the items `compaction` cleared from `before` (T1 and masking clears; other tiers
        summarize rather than clear, and their refs are recalled without being priced). An item
        cleared and folded into a digest line at once is found by the ref the compaction stored it
        under; a result of `small` chars or fewer folded whole is no clear."""
        if compaction.tier != "T1":
            return
        self.last = compaction.bet or self.last
        for group, value in compaction.bet.expected if compaction.bet is not None else ():
            self.expected[group] = self.expected.get(group, 0.0) + value
        uses = {u.id: u for m in before if m.role == "assistant" for u in m.tool_uses()}
        stale = {call for f in pictures(before).values() for call in f.stale}
        after = _blocks_by_key(m for span in compaction.replacements for m in span.messages)
        for span in compaction.replacements:
            for message in before[span.start : span.end]:
                for block in message.blocks:
                    key = block.tool_use_id if block.type == "tool_result" else block.id
                    if block.type not in ("tool_result", "tool_use") or not key:
                        continue
                    now = after.get((block.type, key))
                    if now is not None and now == block:
                        continue  # unchanged
                    if now is not None and not now.meta.ref:
                        continue
                    ref = now.meta.ref if now is not None else _folded_ref(block, compaction, small)
                    if not ref or ref in self.by_ref:
                        continue
                    use = uses.get(key)
                    name = tool_name(use) if use is not None else ""
                    group = (
                        "file" if name in READ_TOOLS | EDIT_TOOLS | WRITE_TOOLS and path_of(use) else "output"
                    )
                    path, held = _file_held(use, block)
                    tokens = count(block.text) if block.type == "tool_result" else count(str(block.input))
                    self.by_ref[ref] = Ghost(ref, key, group, path, tokens, self.requests, key in stale, held)
                    self.clears[group] = self.clears.get(group, 0) + 1
                    self.cleared_tokens += tokens

    def texts(self, store: Any) -> list[tuple[str, str]]:
        """(call id, original text) of every ghost, oldest first (for hits.py's blind edits)."""
        out = []
        for ghost in self.by_ref.values():
            text = store.get(ghost.ref) if store is not None else None
            if text:
                out.append((ghost.call, text))
        return out

    # -- what came back ---------------------------------------------------------------------------
    def observe(self, message: Message, context: int, unseen: Collection[str] = ()) -> list[Miss]:
        """The misses in an assistant message's tool calls (each ghost misses once); `unseen`: its
        edit calls made from memory (hits.py; an edit whose old text was in view did not need what
        was cleared)."""
        if message.role != "assistant":
            return []
        self.requests += 1
        found: list[Miss] = []
        for use in message.tool_uses():
            name = tool_name(use)
            if name in RECALL_TOOLS:
                ref = str(use.input.get("ref", ""))
                ghost = self.by_ref.get(ref)
                if ghost is not None:
                    found.append(self._miss(ghost, context, "recall"))
            elif name in READ_TOOLS:
                path = path_of(use)
                ghosts = [g for g in self.by_ref.values() if g.path and g.path == path]
                for ghost in ghosts:
                    if ghost.stale or ghost.key:  # (a read of what the model wrote is no re-read)
                        del self.by_ref[ghost.ref]  # the file is read anew: that ghost is gone
                    else:
                        found.append(self._miss(ghost, context, "reread"))
                        break
            elif name in EDIT_TOOLS and (path := path_of(use)):
                reads = [g for g in self.by_ref.values() if g.path == path and not g.stale]
                if reads and use.id in unseen:
                    self.restores[use.id] = [Restore(use.id, g.ref, path, g.key) for g in reads]
                    found.append(self._miss(reads[0], context, "edit", sum(g.tokens for g in reads)))
        self.misses += found
        return found

    def take_restores(self, calls: Sequence[str]) -> list[Restore]:
        """The reads to bring back with the results of `calls` (each once)."""
        return [r for call in calls for r in self.restores.pop(call, [])]

    def _miss(self, ghost: Ghost, context: int, how: str, tokens: int | None = None) -> Miss:
        del self.by_ref[ghost.ref]
        for other in [g for g in self.by_ref.values() if ghost.path and g.path == ghost.path]:
            del self.by_ref[other.ref]  # one miss per file brought back
        tokens = ghost.tokens if tokens is None else tokens
        extra = 0.0 if how == "edit" else CACHE_READ * context  # a restore rides on the edit's result
        cost = extra + CACHE_WRITE * tokens
        return Miss(ghost.ref, ghost.path, ghost.group, self.requests - ghost.at, tokens, cost, how)


def _file_held(use: Block | None, block: Block) -> tuple[str, str]:
    """(the file whose content a cleared block held, the input key holding it): a read's result, or
    the content a Write's input gave the file (what the model wrote is what it saw of the file);
    ("", "") for anything else."""
    if use is None:
        return "", ""
    name = tool_name(use)
    if name in READ_TOOLS and block.type == "tool_result":
        return path_of(use), ""
    if name in WRITE_TOOLS and block.type == "tool_use" and isinstance(use.input.get("content"), str):
        return path_of(use), "content"
    return "", ""


def _folded_ref(block: Block, compaction: Compaction, small: int) -> str:
    """The ref under which a block folded away by `compaction` can be recalled ("" if none)."""
    if block.meta.ref:
        return block.meta.ref
    if block.type == "tool_result":
        ref = short_ref(block.tool_use_id)
        return ref if ref in compaction.refs and len(block.text) > small else ""
    ref = f"{short_ref(block.id)}-in"
    return ref if ref in compaction.refs else ""


def _blocks_by_key(messages: Any) -> dict[tuple[str, str], Block]:
    out: dict[tuple[str, str], Block] = {}
    for message in messages:
        for block in message.blocks:
            key = block.tool_use_id if block.type == "tool_result" else block.id
            if block.type in ("tool_result", "tool_use") and key:
                out[(block.type, key)] = block
    return out


def ref_in(text: str) -> str:
    """The ref a placeholder or digest line names ("" when none)."""
    found = _REF.search(text)
    return found.group(1) if found else ""
