"""Whose change is it: the agent's turns, or the person's own edits between them (for a code rewind).

The log marks each prompt that changed the workspace with two snapshots: `checkpoint`, before its first
change, and `checkpoint_end`, when its turn ended. A code rewind logs `restore` with a snapshot taken
just before it (`undo`) and one just after it (`after`). Walked from the snapshot a rewind goes back to,
the log cuts the time since into spans between consecutive snapshots: the agent's (a turn, a rewind),
or the person's (between turns and after the last one: their editor, another session, a background
command left running). What changes DURING a turn cannot be told apart from the agent's work and counts
as the agent's, the person's own edits made meanwhile too. A turn whose end snapshot is missing (a
crash, a log written before end snapshots existed, a checkpoint that failed, a mark that is not a
commit's name) counts as the agent's up to the next snapshot: such a log rewinds as it always did.

Each path the agent's spans changed goes back to how it was just before their first change to it —
so a file the person made or edited before the agent touched it comes back as the person left it, not
removed. A path the person changed after the agent did is put back all the same (the agent's change is
in it) and is named (`yours`): `/rewind undo` brings the person's version back. Paths only the person
changed are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

NOW = ""  # the end of the last span: the workspace as the rewind finds it (snapshotted then)
ABSENT = "000000"  # git's mode for "no such path" in a diff
OBJECT_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a commit's full name (SHA-1 or SHA-256)


def is_commit(name: object) -> bool:
    """A commit's full name, nothing else: a name the log holds goes to git as an argument."""
    return isinstance(name, str) and OBJECT_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class Span:
    start: str  # snapshot
    end: str  # snapshot, or NOW
    agent: bool  # the agent's (a turn, a rewind) or the person's


@dataclass(frozen=True)
class Change:
    """One path that differs between two snapshots, as it was in the first (`git diff-tree --raw`)."""

    path: str
    old_mode: str  # ABSENT: it did not exist
    old_sha: str
    new_mode: str


@dataclass(frozen=True)
class Then:
    """A path as it was just before the agent's first change to it."""

    commit: str  # the snapshot that holds it
    mode: str  # ABSENT: it did not exist then
    sha: str


@dataclass(frozen=True)
class Attribution:
    then: dict[str, Then]  # every path the agent's spans changed
    yours: frozenset[str]  # of those, the ones the person changed after the agent did


def checkpoint_index(events: Sequence[dict[str, Any]], commit: str) -> int | None:
    """Where the log took the checkpoint `commit`."""
    found = (i for i, e in enumerate(events) if e.get("type") == "checkpoint" and e.get("commit") == commit)
    return next(found, None)


def last_restore(events: Sequence[dict[str, Any]]) -> int | None:
    """Where the log holds its last code rewind (the one `/rewind undo` undoes)."""
    found = (
        i
        for i in reversed(range(len(events)))
        if events[i].get("type") == "restore" and events[i].get("undo")
    )
    return next(found, None)


def spans_from(events: Sequence[dict[str, Any]], start: int | None) -> list[Span]:
    """The spans from the snapshot `events[start]` names (a `checkpoint`, or a `restore`: the state
    it undid) to now. `events` are the log's raw events: what a conversation rewind cut still
    happened to the files. None when there is no such event: no spans (the rewind takes every
    change since its snapshot as the agent's)."""
    walk = _Walk()
    if start is None:
        return []
    for event in events[start:]:
        kind = event.get("type")
        if kind == "checkpoint":
            walk.mark(event.get("commit"), agent_next=True)
        elif kind == "checkpoint_end":
            walk.mark(event.get("commit"), agent_next=False)
        elif kind == "checkpoint_failed":
            walk.agent = True  # a turn with no snapshot before it: everything until the next is its
        elif kind == "restore":
            walk.mark(event.get("undo"), agent_next=True)
            if event.get("after"):  # the rewind's own change; after it, the person's time
                walk.mark(event.get("after"), agent_next=False)
    if walk.previous:
        walk.spans.append(Span(walk.previous, NOW, walk.agent))
    return walk.spans


class _Walk:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.previous = ""
        self.agent = True

    def mark(self, commit: object, *, agent_next: bool) -> None:
        if not is_commit(commit):  # unreadable: what follows is the agent's until a good mark
            self.agent = True
            return
        assert isinstance(commit, str)
        if self.previous and commit != self.previous:
            self.spans.append(Span(self.previous, commit, self.agent))
        self.previous = commit
        self.agent = agent_next


def attribute(spans: Iterable[Span], changes: Callable[[str, str], Iterable[Change]]) -> Attribution:
    """Which paths the agent's spans changed, each as it was before the first of them did, and which
    of those the person's spans changed afterwards. `changes(a, b)`: the paths that differ."""
    then: dict[str, Then] = {}
    yours: set[str] = set()
    for span in spans:
        if span.start == span.end:
            continue
        for change in changes(span.start, span.end):
            if span.agent:
                then.setdefault(change.path, Then(span.start, change.old_mode, change.old_sha))
            elif change.path in then:
                yours.add(change.path)
    return Attribution(then, frozenset(yours))
