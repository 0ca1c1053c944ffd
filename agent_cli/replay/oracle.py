"""`--policy oracle`: the default tiers with a predictor that knows the future.

It reads the whole recorded session first: for each later edit, the text it needed (fidelity.py's
`needed` lines) is shown by some earlier tool call's output or input; the most recent such call is
the one the edit needs. At each decision, a call still needed by an edit to come gets `p = 1` (its
need may come any time before then), every other call `p = 0`; the tiers, the pricing and the
rewrite arithmetic are the default policy's own. So the oracle keeps exactly what later edits use
and clears the rest as cheaply as the default can: how much of the saving needs foresight, and how
far the predictor is from it. Given `classes`, it knows the future only for the calls the predictor
puts in those classes (context/reuse.py) and leaves the rest to the predictor: where that distance
lies (bench/oracle_classes.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from agent_cli.context.reuse import Reuse, ReuseStats, predict
from agent_cli.core.types import Message
from agent_cli.replay.claude_code import Transcript
from agent_cli.replay.fidelity import LINE_PREFIX, edit_probes, shows


def needs(transcript: Transcript) -> dict[str, list[int]]:
    """call id -> the transcript positions of the edits that need its text (it is their latest source)."""
    probes = {p.tool_use_id: p for p in edit_probes(transcript)}
    outputs = {
        b.tool_use_id: LINE_PREFIX.sub("", b.text) for m in transcript.messages for b in m.tool_results()
    }
    texts: list[tuple[str, str]] = []
    out: dict[str, list[int]] = defaultdict(list)
    for position, message in enumerate(transcript.messages):
        if message.role != "assistant":
            continue
        for use in message.tool_uses():
            probe = probes.get(use.id)
            if probe is not None:
                for call, text in reversed(texts):
                    if shows(probe.needed, text):
                        out[call].append(position)
                        break
            texts.append((use.id, " ".join(str(v) for v in use.input.values() if isinstance(v, str))))
            texts.append((use.id, outputs.get(use.id, "")))
    return dict(out)


class Oracle:
    """A `context.reuse.Predictor` that reads the recorded future."""

    def __init__(self, transcript: Transcript, classes: frozenset[str] | None = None) -> None:
        self.classes = classes  # None: every call
        self.needs = needs(transcript)
        self.position = {
            use.id: position
            for position, message in enumerate(transcript.messages)
            if message.role == "assistant"
            for use in message.tool_uses()
        }

    def __call__(self, view: Sequence[Message], stats: ReuseStats) -> dict[str, Reuse]:
        calls = [u.id for m in view if m.role == "assistant" for u in m.tool_uses()]
        now = max((self.position.get(c, -1) for c in calls), default=-1)
        out: dict[str, Reuse] = {}
        for age, call in enumerate(reversed(calls)):
            needed = any(p > now for p in self.needs.get(call, ()))
            out[call] = Reuse(1.0 if needed else 0.0, "needed" if needed else "done", age)
        if self.classes is None:
            return out
        guessed = predict(view, stats)
        return {
            call: replace(r, p=out[call].p, decay=out[call].decay) if r.cls in self.classes else r
            for call, r in guessed.items()
        }
