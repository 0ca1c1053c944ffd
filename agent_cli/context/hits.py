"""How often this session re-uses items like each one: the predictor's online calibration.

Every edit the model makes shows which item of the view it needed: its old text (every non-empty
line of `old_string`, read-output line numbers ignored) is shown by some tool call's output or
input, and the most recent such call is the one it used — a **hit** for that call's class
(context/reuse.py). An edit whose old text no item still shows, but a cleared one did (a ghost:
context/ghosts.py), is a hit too: the item was needed, only not there (a replayed session makes such
edits anyway; a live model would have recalled or re-read first, which ghosts.py counts as a miss).

Before each response, the predictor says how many hits each class should give over the calls that
response makes (`p` of each item less what is left of it a call later). The ratio of hits to that
expectation, with `prior_weight` pseudo-observations of the prior, is the class's factor: a session
that keeps coming back to its older edits makes them worth more, one that never does makes them
worth less, with no floor or ceiling (a learned `p` is at most 1). How much the prior weighs is
ContextConfig.hits_prior_weight (bench/loo.py can put it in its grid): a lighter prior learns a
session's own habits sooner (sessions differ far more than one fit says), but also punishes a batch
of reads whose edits have not begun yet — bench/RESULTS.md has both sides. Rebuilt by replaying the
log, like everything the engine learns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_cli.context.reuse import EDIT_TOOLS, Reuse, tool_name
from agent_cli.core.types import Message

LINE_NUMBER = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)


def needed_lines(use_input: Mapping) -> tuple[str, ...]:
    edits = use_input.get("edits")
    olds = [e.get("old_string", "") for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
    olds.append(use_input.get("old_string", ""))
    text = "\n".join(o for o in olds if isinstance(o, str))
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def item_texts(view: Sequence[Message]) -> list[tuple[str, str]]:
    """(call id, text it shows) for every tool call's input and output, in view order."""
    outputs = {b.tool_use_id: b.text for m in view if m.role == "user" for b in m.tool_results()}
    out: list[tuple[str, str]] = []
    for message in view:
        for use in message.tool_uses() if message.role == "assistant" else ():
            out.append((use.id, " ".join(str(v) for v in use.input.values() if isinstance(v, str))))
            out.append((use.id, LINE_NUMBER.sub("", outputs.get(use.id, ""))))
    return out


@dataclass
class Hits:
    prior_weight: float = 2.0  # the fitted prior counts as this many hits (ContextConfig.hits_prior_weight)
    expected: dict[str, float] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    def factor(self, cls: str) -> float:
        """(hits + w) / (expected + w): 1 with no evidence, and the session's own rate as it grows."""
        seen, due = self.hits.get(cls, 0), self.expected.get(cls, 0.0)
        return (seen + self.prior_weight) / (due + self.prior_weight)

    def factors(self) -> dict[str, float]:
        return {cls: self.factor(cls) for cls in set(self.expected) | set(self.hits)}

    def observe(
        self,
        view: Sequence[Message],
        message: Message,
        guesses: Mapping[str, Reuse],
        ghost_texts: Callable[[], Sequence[tuple[str, str]]] = list,
    ) -> frozenset[str]:
        """`message` (an assistant response) answers `view`, where the predictor said `guesses`:
        add what its calls should have used to `expected`, and what its edits did use to `hits`.
        A need that may come any time (no decay) is spread over as many calls as the view has made.
        Returns the edit calls made from memory: no item of `view` shows their old text (replay's
        definition of a blind edit; context/restore.py answers them)."""
        calls = len(message.tool_uses())
        if not calls:
            return frozenset()
        made = max(calls, sum(len(m.tool_uses()) for m in view if m.role == "assistant"))
        for guess in guesses.values():
            if guess.cls == "stale" or guess.p <= 0:
                continue
            share = 1 - guess.decay**calls if guess.decay < 1.0 else calls / made
            self.expected[guess.cls] = self.expected.get(guess.cls, 0.0) + guess.p * share
        edits = [u for u in message.tool_uses() if tool_name(u) in EDIT_TOOLS]
        if not edits:
            return frozenset()
        texts = item_texts(view)
        unseen: set[str] = set()
        for use in edits:
            needed = needed_lines(use.input)
            if not needed:
                continue
            source = next((call for call, text in reversed(texts) if all(n in text for n in needed)), None)
            if source is None:
                unseen.add(use.id)
                gone = [(call, LINE_NUMBER.sub("", text)) for call, text in ghost_texts()]
                source = next((call for call, text in reversed(gone) if all(n in text for n in needed)), None)
            if source is not None and source in guesses:
                cls = guesses[source].cls
                self.hits[cls] = self.hits.get(cls, 0) + 1
        return frozenset(unseen)
