"""How likely the model is to need an item of the view again: the predictor behind every clear.

By code, from the view alone (a replayed view gets the same answer), for each tool call whose output
or input could be cleared:

- **what it is** (its class). A file's picture (context/working_set.py) is `fresh` while the file has
  not been edited since it was read (`whole` or `partial` read: a whole-file read is the material for
  edits to come), `edited` once the picture holds the model's own changes (the read is then needed
  for a few more edits at most), `named` when the file is fresh and named in the person's words, the
  todo list or the last failing command's output (needed whatever its age); what the picture no
  longer holds is `stale` (superseded: never needed), and so is a todo list a later one replaced.
  A search or a shell command that printed lines of one file (`working_set.glimpsed`: a content
  grep of it, `sed -n 10,40p x.go`) is a `glimpse`: aged from the file's last touch, as the edits
  of those lines go on, and stale once the file is read whole or written again. Other calls are
  `output` (bash), `listing` (grep, glob, ls) or `other`;
- **how old it is**: calls since the file (or the call) was last touched. Reuse decays
  exponentially, `p = prior × exp(-age / tau)`;
- **what points at it**: a file read in the same response as a file just edited counts as touched
  with it (a batch of reads is usually the material for a batch of edits); a file read in a run of
  reads whose files the model is editing in the order it read them, and not reached yet, is
  `queued`: waiting its turn, aged from the run's latest edit rather than from its read; and a
  file of such a run the model edited and then moved past (a later file of the run edited since,
  this one not touched again) is `passed`;
- **what this session has taught** (`ReuseStats`, from its misses: context/ghosts.py): when the
  items of a group (files, other output) that were cleared came back more often than predicted,
  every item of that group is worth that much more (`p × (misses + 1) / (expected misses + 1)`).

The priors and half-lives (`HAZARD`) are a maximum-likelihood fit of this shape to when real
sessions' edits used the items they needed (bench/fit_reuse.py, figures in bench/RESULTS.md); the
session's own misses move them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent_cli.context.restore import RESTORED_TAG
from agent_cli.context.working_set import (
    BASH_TOOLS,
    EDIT_TOOLS,
    READ_TOOLS,
    WRITE_TOOLS,
    FilePicture,
    calls_in,
    glimpsed,
    named_files,
    path_of,
    pictures,
    replaced_lists,
)
from agent_cli.core.types import Block, Message


@dataclass(frozen=True)
class Hazard:
    """The chance an item is still to be needed, `age` calls after its last touch:
    `p = prior × exp(-age / tau)`; a `tau` of 0 means no decay (the need may come at any time)."""

    prior: float
    tau: float

    def at(self, age: int) -> float:
        if self.tau <= 0:
            return self.prior
        return self.prior * math.exp(-max(0, age) / self.tau)

    @property
    def decay(self) -> float:
        """What is left of `p` one call later (1.0: no decay)."""
        return math.exp(-1 / self.tau) if self.tau > 0 else 1.0


# Fitted by bench/fit_reuse.py on the shared sessions (maximum likelihood; see its docstring and
# bench/RESULTS.md for the leave-one-out figures), refitted whenever the classes change: the samples
# of one class depend on what the others take. An exponential fits every class better than a
# hyperbolic decay does.
HAZARD: Mapping[str, Hazard] = {
    "named": Hazard(0.63, 0.0),
    "whole": Hazard(0.56, 6.0),
    "partial": Hazard(0.15, 5.0),
    "editing": Hazard(0.17, 0.0),
    "edited": Hazard(0.13, 15.0),
    "patch": Hazard(0.12, 15.0),
    "old-patch": Hazard(0.02, 15.0),
    "old-read": Hazard(0.03, 8.0),
    "queued": Hazard(0.41, 10.0),
    "passed": Hazard(0.01, 0.0),
    "glimpse": Hazard(0.03, 2.0),
    "output": Hazard(0.01, 2.0),
    "listing": Hazard(0.04, 0.5),
    "other": Hazard(0.03, 1.0),
}
FILE_CLASSES = frozenset(
    {"named", "queued", "passed", "whole", "partial", "editing", "edited", "patch", "old-patch", "old-read"}
)
LISTING_TOOLS = frozenset({"grep", "Grep", "glob", "Glob", "ls", "LS"})
CHANGE_TOOLS = EDIT_TOOLS | WRITE_TOOLS


def group_of(cls: str) -> str:
    """Misses are learned per group: what a file held, and everything else."""
    return "file" if cls in FILE_CLASSES or cls == "stale" else "output"


@dataclass(frozen=True)
class ReuseStats:
    """What the session has shown about reuse: per group ("file", "output"), how many misses the
    clears were expected to cause (the sum of their predicted chances) and how many came; per
    class, how much likelier than predicted its items have been used (context/hits.py)."""

    expected: Mapping[str, float] = field(default_factory=dict)
    misses: Mapping[str, int] = field(default_factory=dict)
    classes: Mapping[str, float] = field(default_factory=dict)

    def factor(self, group: str) -> float:
        """How much likelier than predicted items of `group` have proved to be needed again:
        `(misses + 1) / (expected + 1)`, never below 1 (what a replay cannot see, an edit made
        blind, is no evidence that clearing was right; only a miss is evidence)."""
        return max(1.0, (self.misses.get(group, 0) + 1) / (self.expected.get(group, 0.0) + 1))


@dataclass(frozen=True)
class Reuse:
    """The prediction for one tool call (its output and its input together)."""

    p: float
    cls: str
    age: int  # calls since it (or its file) was last touched
    path: str = ""
    decay: float = 1.0  # what is left of `p` one call later (Hazard.decay; 1.0: the need may come any time)


class Predictor(Protocol):
    """tool_use id -> Reuse for every tool call of the view (the default is `predict`; replay's
    `--policy oracle` knows the future instead)."""

    def __call__(self, view: Sequence[Message], stats: ReuseStats) -> dict[str, Reuse]: ...


def tool_name(use: Block) -> str:
    return use.meta.tool_name or use.name


def predict(
    view: Sequence[Message], stats: ReuseStats | None = None, hazard: Mapping[str, Hazard] | None = None
) -> dict[str, Reuse]:
    """tool_use id -> Reuse, for every tool call in the view (`hazard`: HAZARD unless given)."""
    stats = stats or ReuseStats()
    hazard = HAZARD if hazard is None else hazard
    files = pictures(view)
    uses = [u for m in view if m.role == "assistant" for u in m.tool_uses()]
    number: dict[str, int] = {}  # each call's number, counting the folded calls before it too
    restored: set[str] = set()  # edit calls whose result brought a cleared read back: the file's read
    total = 0
    for message in view:
        total += calls_in(message, uses=False)
        for use in message.tool_uses() if message.role == "assistant" else ():
            total += 1
            number[use.id] = total
        restored.update(b.tool_use_id for b in message.tool_results() if b.meta.tag == RESTORED_TAG)
    touched, queue, moved = _groups(view, files, number)
    named = set(named_files(view, list(files), person_texts(view)))
    patches = {u.id for u in uses if tool_name(u) in EDIT_TOOLS} - restored
    streak = path_of(uses[-1]) if uses and tool_name(uses[-1]) in EDIT_TOOLS else ""
    out: dict[str, Reuse] = {}
    for path, picture in files.items():
        age = max(0, total - max(picture.last, touched.get(path, -1)))
        if picture.edited and picture.whole and streak == path:
            cls = "editing"  # the last call edited this file, read whole: the next edit is likely here
        elif picture.edited:
            # moved past in a run edited in read order, not touched since: the model is done with it
            # (a batch's edits touch every file read with it: the edit that moved past it too)
            past = moved.get(path, -1)
            cls = "passed" if past > picture.last and past >= touched.get(path, -1) else "edited"
        elif path in named:
            cls = "named"
        elif queue.get(path, -1) > picture.last:
            cls = "queued"  # read later in a run whose files are being edited in read order: its turn comes
            age = max(0, total - queue[path])
        else:
            cls = "whole" if picture.whole else "partial"
        p = learned(hazard[cls].at(age), stats, cls)
        decay = hazard[cls].decay
        own = [call for call in picture.picture if call in patches]
        recent = set(own[-2:])  # the file's last two edits: the next one most often starts from them
        bases = [call for call in picture.picture if call not in patches]
        current = set(bases[-1:])  # an edited file's latest read: its older reads are rarely needed
        for call in picture.picture:
            if call in patches:
                kind = "patch" if call in recent else "old-patch"
                chance = learned(hazard[kind].at(age), stats, kind)
                out[call] = Reuse(chance, kind, age, path, hazard[kind].decay)
            elif cls in ("edited", "passed") and call not in current:
                chance = learned(hazard["old-read"].at(age), stats, "old-read")
                out[call] = Reuse(chance, "old-read", age, path, hazard["old-read"].decay)
            else:
                out[call] = Reuse(p, cls, age, path, decay)
        for call in picture.stale:
            out[call] = Reuse(0.0, "stale", age, path)
    for call in replaced_lists(view):  # a todo list a later one replaced: never needed
        out[call] = Reuse(0.0, "stale", total - number[call])
    for use in uses:
        if use.id in out:
            continue
        name = tool_name(use)
        if seen := glimpsed(use):
            out[use.id] = _glimpse(use.id, files.get(seen), number, total, stats, hazard)
            continue
        if name in READ_TOOLS | CHANGE_TOOLS:
            cls = "other"  # a failed call on a file: nothing of the file in it
        else:
            cls = "output" if name in BASH_TOOLS else "listing" if name in LISTING_TOOLS else "other"
        age = total - number[use.id]
        out[use.id] = Reuse(learned(hazard[cls].at(age), stats, cls), cls, age, "", hazard[cls].decay)
    return out


def _glimpse(
    call: str,
    picture: FilePicture | None,
    number: Mapping[str, int],
    total: int,
    stats: ReuseStats,
    hazard: Mapping[str, Hazard],
) -> Reuse:
    """A call that showed lines of one file without reading it (working_set.glimpsed): aged from
    the file's last touch (the edits it is the material for keep it young), stale once a whole
    read or write of the file came after it. Output in every other respect (no picture, no path:
    a later read of the file is no re-read of it)."""
    at = number[call]
    if picture is not None and picture.whole and number.get(picture.picture[0], -1) > at:
        return Reuse(0.0, "stale", total - at)
    age = max(0, total - max(at, picture.last if picture is not None else -1))
    return Reuse(
        learned(hazard["glimpse"].at(age), stats, "glimpse"), "glimpse", age, "", hazard["glimpse"].decay
    )


def learned(p: float, stats: ReuseStats, cls: str) -> float:
    """`p` as this session has shown items like it to be used (hits.py), raised by its misses."""
    if cls == "stale":
        return 0.0
    return min(1.0, p * stats.classes.get(cls, 1.0) * stats.factor(group_of(cls)))


class Memo:
    """The predictor's answer for the view it last saw (T1 and the engine ask about the same view
    once per request): keyed by the view's length and last message."""

    def __init__(self, predictor: Predictor | None = None) -> None:
        self.predictor = predictor
        self.key: tuple[int, int] | None = None
        self.value: dict[str, Reuse] = {}

    def __call__(self, view: Sequence[Message], stats: ReuseStats) -> dict[str, Reuse]:
        key = (len(view), id(view[-1]) if view else 0)
        if key != self.key:
            self.value = self.predictor(view, stats) if self.predictor is not None else predict(view, stats)
            self.key = key
        return self.value

    def forget(self) -> None:
        self.key = None


def person_texts(view: Sequence[Message]) -> list[str]:
    """The person's own words (tiers/selection.py's person blocks; no import of the tiers here)."""
    return [
        b.text
        for m in view
        if m.role == "user"
        for b in m.blocks
        if b.type == "text" and b.meta.source == "user" and not b.meta.tag
    ]


def _groups(
    view: Sequence[Message], files: Mapping, number: Mapping[str, int]
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """What a group of reads says of each file, in one walk over the view: (touched, queued, moved).

    - touched: path -> the edit at which it counts as touched. Files read in the same response as a
      file that was later edited: a batch of reads is usually the material for a batch of edits.
    - queued: path -> the call from which it has waited its turn. Its file was read in a run of
      reads (no edit or write between them) whose files are being edited in the order they were
      read, after the last one edited. A run edited out of order is no queue; a file skipped over
      is no longer waiting.
    - moved: path -> the call at which the model moved past it: a file of such a queue edited
      before the latest one edited of it."""
    touched: dict[str, int] = {}
    batches: list[set[str]] = []
    runs: list[_Run] = []
    having: dict[str, list[_Run]] = {}  # path -> the runs that read it
    run: dict[str, int] = {}
    for message in view:
        if message.role != "assistant":
            continue
        uses = message.tool_uses()
        reads = [p for u in uses if tool_name(u) in READ_TOOLS and (p := path_of(u)) in files]
        if len(set(reads)) > 1:
            batches.append(set(reads))
        for p in reads:
            run.setdefault(p, len(run))
        edits = [u for u in uses if tool_name(u) in CHANGE_TOOLS]
        if not edits:
            continue
        if len(run) > 1:
            runs.append(_Run(run))
            for p in run:
                having.setdefault(p, []).append(runs[-1])
        run = {}
        for use in edits:
            path, call = path_of(use), number[use.id]
            for batch in batches:
                if path in batch:
                    for other in batch:
                        touched[other] = max(touched.get(other, -1), call)
            for r in having.get(path, ()):
                r.edited(path, call)
    queued: dict[str, int] = {}
    moved: dict[str, int] = {}
    for r in runs:
        for path in r.waiting():
            queued[path] = max(queued.get(path, -1), r.last)
        for path in r.passed():
            moved[path] = max(moved.get(path, -1), r.last)
    return touched, queued, moved


@dataclass
class _Run:
    """A run of reads (no edit or write between them) and what was edited of it since."""

    order: dict[str, int]  # path -> its place in the run
    done: list[str] = field(default_factory=list)  # its files edited since, in read order
    last: int = -1  # the call of the latest of those edits
    broken: bool = False  # a file of it edited out of read order: not a queue

    def edited(self, path: str, call: int) -> None:
        if self.broken or path in self.done:
            return
        if self.done and self.order[path] < self.order[self.done[-1]]:
            self.broken = True
            return
        self.done.append(path)
        self.last = call

    def passed(self) -> list[str]:
        """Its files edited before the latest one edited of it, when it is a queue."""
        return [] if self.broken else self.done[:-1]

    def waiting(self) -> list[str]:
        """Its files whose turn has not come, when it is a queue."""
        if self.broken or not self.done:
            return []
        turn = self.order[self.done[-1]]
        return [path for path, at in self.order.items() if at > turn]
