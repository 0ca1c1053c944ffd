"""Helpers for the TUI tests: a bounded wait and typing keys."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot


async def wait_until(pilot: Pilot, condition: Callable[[], bool], *, steps: int = 400) -> None:
    """Let the app run until `condition()` holds (a bounded number of event-loop turns, no clock)."""
    for _ in range(steps):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the condition never became true")


async def type_text(pilot: Pilot, text: str) -> None:
    await pilot.press(*("space" if char == " " else char for char in text))
