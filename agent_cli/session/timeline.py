"""Rewind: back to before a prompt, in code (checkpoints), in conversation (the log), or both.

The log stays append-only. A rewind is an event `{"type": "rewind", "prompt": N}`; every projection of
the log (the LLM view, the ledger, the todo list, the conversation a person scrolls) is built from the
*effective* events, where a rewind cuts away everything from the N-th prompt on — compactions and
session-memory updates included. What was spent stays spent: usage is counted over every event.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

RewindMode = Literal["both", "conversation", "code"]
MODES: tuple[str, ...] = ("both", "conversation", "code")


def is_prompt(event: dict[str, Any]) -> bool:
    return event.get("type") == "user" and "prompt" in event


def effective_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with every rewind applied in order (a rewind to N drops prompt N and all after)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") != "rewind":
            out.append(event)
            continue
        cut = _prompt_index(out, int(event.get("prompt", 0)))
        if cut is not None:
            del out[cut:]
    return out


def _prompt_index(events: Sequence[dict[str, Any]], number: int) -> int | None:
    seen = 0
    for index, event in enumerate(events):
        if is_prompt(event):
            seen += 1
            if seen == number:
                return index
    return None


@dataclass(frozen=True)
class PromptPoint:
    number: int  # 1 = the session's first prompt (in the effective history)
    text: str
    ts: float
    checkpoint: str  # the snapshot before this prompt's changes ("" when none was needed or taken)
    not_taken: str = ""  # why the checkpoint that was needed could not be taken: the code cannot go back
    skipped: tuple[str, ...] = ()  # large files that snapshot left out (shown names)

    def code_note(self) -> str:
        """What a rewind of the code to before this prompt can do, when it cannot restore anything."""
        if self.not_taken:
            return f"no checkpoint was taken ({self.not_taken}): its code cannot be restored"
        return "" if self.checkpoint else "no code changes from here"


def prompt_points(events: Sequence[dict[str, Any]]) -> list[PromptPoint]:
    """The prompts one can rewind to, each with the snapshot that holds the code as it was before it:
    the first checkpoint taken at or after that prompt (no checkpoint in between means no change). A
    checkpoint that failed first (`checkpoint_failed`) means the code then is in no snapshot."""
    prompts: list[tuple[int, str, float]] = []
    checkpoints: list[tuple[int, str, str, tuple[str, ...]]] = []  # prompt, commit, failure, skipped
    for event in events:
        if is_prompt(event):
            prompts.append((len(prompts) + 1, str(event.get("prompt", "")), float(event.get("ts", 0.0))))
        elif event.get("type") == "checkpoint" and event.get("commit"):
            skipped = tuple(str(s) for s in event.get("skipped") or ())
            checkpoints.append((int(event.get("prompt", 0)), str(event["commit"]), "", skipped))
        elif event.get("type") == "checkpoint_failed":
            reason = str(event.get("reason") or "unknown reason")
            checkpoints.append((int(event.get("prompt", 0)), "", reason, ()))
    points = []
    for number, text, ts in prompts:
        _, commit, failed, skipped = next((c for c in checkpoints if c[0] >= number), (0, "", "", ()))
        points.append(PromptPoint(number, text, ts, commit, failed, skipped))
    return points


def memory_rewound(events: Sequence[dict[str, Any]], number: int) -> bool:
    """Whether a session-memory update happened at or after prompt `number` (the note then holds
    turns that a rewind removes, so it has to be dropped)."""
    cut = _prompt_index(events, number)
    return cut is not None and any(e.get("type") == "memory" for e in events[cut:])


def parse_args(arg: str) -> tuple[int, RewindMode]:
    """`N [both|conversation|code]`; raises ValueError with a message for people."""
    words = arg.split()
    if not words or not words[0].isdigit() or int(words[0]) < 1:
        raise ValueError("usage: /rewind N [both|conversation|code] — N is the prompt to go back to before")
    mode = words[1].lower() if len(words) > 1 else "both"
    if mode not in MODES:
        raise ValueError(f"unknown rewind mode {mode!r}: use both, conversation or code")
    return int(words[0]), mode  # type: ignore[return-value]
