"""Helpers for the TUI tests: a bounded wait, typing keys, a clock, a loader held back by a gate."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from textual import events
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


class FakeClock:
    """A clock the tests move by hand (the app's and the modals' timing reads it)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


T = TypeVar("T")


def gated_loader(backend: T) -> tuple[asyncio.Event, Callable[[], Awaitable[T]]]:
    """A backend loader that returns `backend` only once the gate is set: the app's state while the
    model provider is still loading can be looked at."""
    gate = asyncio.Event()

    async def loader() -> T:
        await gate.wait()
        return backend

    return gate, loader


async def burst(pilot: Pilot, *keys: str) -> None:
    """Keys that arrive in one read of the terminal: all posted at once, none waiting for the one
    before it to be handled (`pilot.press` waits after each), then the app left to handle them."""
    app = pilot.app
    assert app._driver is not None
    for key in keys:
        character = " " if key == "space" else key if len(key) == 1 else None
        event = events.Key(key, character)
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause()
