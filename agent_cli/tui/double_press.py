"""A key that acts only when pressed twice within a window (Ctrl+C to quit)."""

from __future__ import annotations

import time
from collections.abc import Callable


class DoublePress:
    def __init__(self, window: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.window = window
        self._clock = clock
        self._last: float | None = None

    def press(self) -> bool:
        """True when this press follows another within the window (and starts over)."""
        now = self._clock()
        if self._last is not None and now - self._last <= self.window:
            self._last = None
            return True
        self._last = now
        return False

    def reset(self) -> None:
        """Forget the last press: the next one is a first again."""
        self._last = None
