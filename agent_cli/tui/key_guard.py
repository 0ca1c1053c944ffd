"""When a modal question may take a key as its answer: never from typing that was in progress.

A key counts as an answer only when the question has been on screen for `arm_delay` seconds and no
key was typed in the last `typing_gap` seconds (counting keys typed into the prompt before the
question appeared, and keys the question passed on to the prompt since). Until then keys are typing
and go to the prompt. The clock is injected so tests advance it instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

ARM_DELAY = 0.5
TYPING_GAP = 1.0


class KeyGuard:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        last_key_at: float | None = None,
        arm_delay: float = ARM_DELAY,
        typing_gap: float = TYPING_GAP,
    ) -> None:
        self.clock = clock
        self.arm_delay = arm_delay
        self.typing_gap = typing_gap
        self.shown_at = clock()
        self.last_key_at = last_key_at

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
