"""A prompt as the person made it: their own words and what they pasted, in order.

`Prompt` is a `str` (the whole text, pastes expanded), so everything that handles a prompt as text
— history, queues, slash commands, hooks — goes on doing so; a session that looks at `parts` keeps
the person's typed words apart from a paste (a large paste is offloaded on its own, and the words
typed after it stay theirs), and looks for `@` mentions only in the words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class PromptPart:
    text: str
    pasted: bool = False  # a paste (a chip in the prompt), not typed


class Prompt(str):
    """The whole text; `parts` says which pieces were pasted."""

    parts: tuple[PromptPart, ...]

    def __new__(cls, parts: Iterable[PromptPart]) -> Prompt:
        kept = tuple(p for p in parts if p.text)
        prompt = super().__new__(cls, "".join(p.text for p in kept))
        prompt.parts = kept
        return prompt

    @property
    def words(self) -> str:
        """What the person typed, a paste stood in for by a space."""
        return "".join(" " if p.pasted else p.text for p in self.parts)


def parts_of(text: str) -> tuple[PromptPart, ...]:
    """The parts of any prompt: a plain string is all the person's words."""
    parts = getattr(text, "parts", None)
    if isinstance(text, Prompt) and parts is not None:
        return parts
    return (PromptPart(str(text)),) if text else ()
