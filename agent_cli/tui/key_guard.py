"""When a modal question may take a key as its answer: never from typing that was in progress.

A key counts as an answer only when the question has been on screen for `arm_delay` seconds and no
key was typed in the last `typing_gap` seconds (counting keys typed into the prompt before the
question appeared, and keys the question passed on to the prompt since). Until then keys are typing
and go to the prompt.

Once armed, a letter that answers (`a` always, `y`, `d`, `n`, `t`) is also the likeliest first key of
a new message typed while the question sat unnoticed. So a letter is *held*: it answers only if no
other key follows within `settle` seconds; a key that does follow shows it was typing, and both go
to the prompt. Enter and the buttons answer at once (a message does not start with Enter), Esc
always denies. The clock is injected so tests advance it instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

ARM_DELAY = 0.5
TYPING_GAP = 1.0
SETTLE = 0.4  # well above the gap between two keys of a word, short enough not to feel slow


class KeyGuard:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        last_key_at: float | None = None,
        arm_delay: float = ARM_DELAY,
        typing_gap: float = TYPING_GAP,
        settle: float = SETTLE,
    ) -> None:
        self.clock = clock
        self.arm_delay = arm_delay
        self.typing_gap = typing_gap
        self.settle = settle
        self.shown_at = clock()
        self.last_key_at = last_key_at
        self.held_at: float | None = None

    @property
    def armed(self) -> bool:
        now = self.clock()
        if now - self.shown_at < self.arm_delay:
            return False
        return self.last_key_at is None or now - self.last_key_at >= self.typing_gap

    def shown(self) -> None:
        """The question is on screen now (the half second counts from here)."""
        self.shown_at = self.clock()

    def typed(self) -> None:
        """A key went to the prompt: typing goes on, the question waits for a pause."""
        self.last_key_at = self.clock()
        self.held_at = None

    def hold(self) -> None:
        """An answering letter was pressed: it answers once `settled`, unless a key follows."""
        self.held_at = self.clock()

    @property
    def settled(self) -> bool:
        return self.held_at is not None and self.clock() - self.held_at >= self.settle
