"""A model for the fake Messages API that reacts to what it is sent: closed-loop tests of a context policy.

A scripted queue answers blindly: the model edits whatever the engine hid from it. `ReactiveModel`
follows a scenario instead, and before each edit it looks at the request the way a model would: when
the edit's old text is not in it, it first fetches it back — `recall` of the ref a placeholder names
for that file, else `read_file` of the file again — and counts that forced re-read. So a policy that
clears what is about to be needed pays for it in requests and cache writes, measured by the server.

    from tests.fakeapi.reactive import Answer, Bash, Edit, Read, ReactiveModel
    model = ReactiveModel([Read("a.py"), Edit("a.py", "x = 1", "x = 2"), Bash("seq 1 10"), Answer("Done.")])
    server = FakeAnthropic(responder=model).start()   # summarizer requests get the server's fake summary
    ... run the agent against server.url (tests/fakeapi/scenarios.py runs the real CLI) ...
    model.forced          # the forced re-reads, each a `Fetch` (step, "recall" | "read_file", path, ref)
    model.forced_edits    # how many edits needed at least one
    model.blind           # steps of edits made without their old text in view after `max_fetches` tries
    model.errors          # tool results the agent marked as errors (the step that got one, its text)
    model.requests        # requests the model answered (the server's summarizer requests not counted)
    model.usages          # `Usage` of every answered request, as the server reported it (side flagged)
    model.weighted_input  # uncached + 1.25 x cache write + 0.1 x cache read, over all of them
    model.done            # the scenario ran to its end (its answer was sent)

Steps: `Read(path, offset=None, limit=None)` · `Edit(path, old, new, line=None)` (`line`, when
known, picks the placeholder whose line range holds it) · `Bash(command)` · `Answer(text)` (the
final text; a scenario without one ends with `final`). One tool call per response, no narration.
`ReactiveModel(steps, final="Done.", max_fetches=4, grep_spans=False)`; one model per run.

What the model sees (`sees`): the request's text blocks (system too), tool_result contents and
tool_use input strings, read-tool line-number prefixes removed; an edit's old text is visible when
every non-empty line of it is — the definition `agent replay` uses for blind edits
(agent_cli/replay/fidelity.py). Where it looks for the file (`pointers`, both in pointers.py), most
precise first:
- a read's result that was cleared (`[cleared: read_file PATH lines A-B, N chars; recall ref R]`),
  offloaded (`<persisted-output ref="R" …>`) or region-summarized with its own output's ref, and the
  digest lines a folded run leaves (`- read_file PATH lines A-B → ok (output cleared, ref R)`):
  `recall(R)`: the whole original, the item itself;
- a region summary or a summary `<summary ref="R">` holding the read among others: by default the
  file is read again (the item whole, which is what a miss costs); with `grep_spans=True`,
  `recall(R, pattern=<the old line>)` instead, and a recall that says it holds more than was
  shown is searched the same way from the next offset (a model that greps spans: cheaper misses);
- an edit's input T1 cleared (`[cleared: N chars; recall ref R-in]`): `recall(R)`, first when the
  old text is what an earlier edit wrote, last otherwise;
- a coarse digest line naming the file (`- 14 earlier calls (read_file x6, …) on a.py, …; list:
  recall ref R`): `recall(R)` for the list, whose digest lines name the read's own ref next;
- none of those, or none brought the text back: `read_file(path)`.
Each of those calls is one forced re-read; after `max_fetches` of them for one edit the edit is
made anyway and counted in `blind`.

Usage comes from the server's own accounting (tests/fakeapi/cache.py: chars/4 of the request, the
prompt-cache simulation), passed to `observe` for every answered request, summaries included.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.replay.fidelity import needed_lines
from tests.fakeapi.cache import CacheUsage
from tests.fakeapi.pointers import Pointer, last_results, pointers, result_text, same_path, sees
from tests.fakeapi.replies import Reply, text, tool_call

CACHE_WRITE = 1.25
CACHE_READ = 0.1
MAX_FETCHES = 4  # forced fetches for one edit before it is made blind


# -- the scenario -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Read:
    path: str
    offset: int | None = None
    limit: int | None = None


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str
    line: int | None = None  # the old text's first line in the file, when the scenario knows it


@dataclass(frozen=True)
class Bash:
    command: str


@dataclass(frozen=True)
class Answer:
    text: str


Step = Read | Edit | Bash | Answer


# -- what the model records ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Fetch:
    """A forced re-read: before edit `step`, a `recall` of `ref` (from `offset`, or its lines matching
    `pattern`) or a `read_file` of `path`."""

    step: int
    tool: str
    path: str
    ref: str = ""
    offset: int = 0  # the next page of a recall that said there was more
    pattern: str = ""  # a recall of a span of many results asks for the needed line only

    def input(self) -> dict[str, Any]:
        if self.tool == "read_file":
            return {"path": self.path}
        found: dict[str, Any] = {"ref": self.ref}
        if self.offset:
            found["offset"] = self.offset
        if self.pattern:
            found["pattern"] = self.pattern
        return found


@dataclass(frozen=True)
class Usage:
    side: bool  # a summarizer's request, answered by the server, not by the model
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    @property
    def weighted(self) -> float:
        return (
            self.input_tokens
            + CACHE_WRITE * self.cache_creation_input_tokens
            + CACHE_READ * self.cache_read_input_tokens
        )


# -- the model ----------------------------------------------------------------------------------------

_MORE = re.compile(r"call again with offset=(\d+)\]")
_RANK = {"file": 0, "region": 1, "list": 2, "input": 3}
_RANK_OWN = {"input": 0, "file": 1, "region": 2, "list": 3}


class ReactiveModel:
    """Answers each request with the scenario's next step, fetching an edit's old text back first
    when the request does not show it. Thread-safe; one model per run."""

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        final: str = "Done.",
        max_fetches: int = MAX_FETCHES,
        grep_spans: bool = False,
    ) -> None:
        self.steps = tuple(steps)
        self.grep_spans = grep_spans
        self.final = final
        self.max_fetches = max_fetches
        self.forced: list[Fetch] = []
        self.blind: list[int] = []
        self.errors: list[tuple[int, str]] = []
        self.usages: list[Usage] = []
        self.requests = 0
        self.done = False
        self._next = 0
        self._answered = 0  # the step the last answer's call was made for
        self._tried: list[Fetch] = []  # fetches made for the current edit
        self._lock = threading.Lock()

    # -- the server's hooks -------------------------------------------------------------------------
    def respond(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests += 1
            self.errors += [(self._answered, result_text(b)) for b in last_results(body) if b.get("is_error")]
            self._answered = self._next  # the step this answer's call is made for
            return self._respond(body)

    def observe(self, body: dict[str, Any], usage: CacheUsage, *, side: bool) -> None:
        with self._lock:
            self.usages.append(
                Usage(
                    side,
                    usage.input_tokens,
                    usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens,
                )
            )

    # -- figures ----------------------------------------------------------------------------------
    @property
    def weighted_input(self) -> float:
        return sum(u.weighted for u in self.usages)

    @property
    def forced_edits(self) -> int:
        """Edits that needed at least one forced re-read."""
        return len({f.step for f in self.forced})

    @property
    def side_requests(self) -> int:
        return sum(1 for u in self.usages if u.side)

    # -- deciding -----------------------------------------------------------------------------------
    def _respond(self, body: dict[str, Any]) -> Reply:
        if self._next >= len(self.steps):
            return self._finish(self.final)
        step = self.steps[self._next]
        if isinstance(step, Answer):
            return self._finish(step.text)
        if isinstance(step, Edit) and not sees(body, step.old):
            fetch = self._fetch(body, step) if len(self._tried) < self.max_fetches else None
            if fetch is not None:
                self._tried.append(fetch)
                self.forced.append(fetch)
                return tool_call(fetch.tool, fetch.input())
            self.blind.append(self._next)
        self._next += 1
        self._tried = []
        return _call(step)

    def _finish(self, answer: str) -> Reply:
        self._next = len(self.steps)
        self.done = True
        return text(answer)

    def _fetch(self, body: dict[str, Any], step: Edit) -> Fetch | None:
        """The next way to get `step`'s old text back: a ref not tried yet for this edit (with
        `grep_spans`, also the needed lines from the rest of a recall that held more than the
        file), else the file read again (once)."""
        last = self._tried[-1] if self._tried else None
        if self.grep_spans and last is not None and last.tool == "recall" and not last.pattern:
            more = next((_MORE.search(result_text(b)) for b in last_results(body)), None)
            if more:  # it holds more than this file: the rest, only the lines needed
                pattern = re.escape(needed_lines(step.old)[0])
                return Fetch(self._next, "recall", step.path, last.ref, int(more.group(1)), pattern)
        tried = {f.ref for f in self._tried if f.ref}
        found = [
            p
            for p in pointers(body)
            if same_path(p.path, step.path)
            and p.ref not in tried
            and _covers(p, step.line)
            and (p.kind != "region" or self.grep_spans)
        ]
        if found:
            # the most precise kind first (text the model wrote itself, when the old text is text
            # an earlier step wrote); among those, the latest (the freshest picture of the file)
            ranks = _RANK_OWN if self._wrote(step) else _RANK
            rank = {id(p): (ranks[p.kind], -i) for i, p in enumerate(found)}
            best = min(found, key=lambda p: rank[id(p)])
            # a span of many results: only the lines needed (recall's pattern), not pages of others
            pattern = re.escape(needed_lines(step.old)[0]) if best.kind == "region" else ""
            return Fetch(self._next, "recall", step.path, best.ref, pattern=pattern)
        if any(f.tool == "read_file" for f in self._tried):
            return None
        return Fetch(self._next, "read_file", step.path)

    def _wrote(self, step: Edit) -> bool:
        """Whether `step`'s old text is text an earlier edit of the scenario wrote into its file."""
        needed = needed_lines(step.old)
        return any(
            isinstance(s, Edit) and s.path == step.path and all(line in s.new for line in needed)
            for s in self.steps[: self._next]
        )


def _covers(pointer: Pointer, line: int | None) -> bool:
    return line is None or pointer.lines is None or pointer.lines[0] <= line <= pointer.lines[1]


def _call(step: Step) -> Reply:
    if isinstance(step, Read):
        args: dict[str, Any] = {"path": step.path}
        if step.offset is not None:
            args["offset"] = step.offset
        if step.limit is not None:
            args["limit"] = step.limit
        return tool_call("read_file", args)
    if isinstance(step, Edit):
        return tool_call("edit_file", {"path": step.path, "old_string": step.old, "new_string": step.new})
    if isinstance(step, Bash):
        return tool_call("bash", {"command": step.command})
    return text(step.text)
