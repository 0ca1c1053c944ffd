"""SIGTERM and SIGHUP (and, for `agent -p`, SIGINT) end a run cleanly: the running tool's process group is ended (the bash tool
does that when its turn is cancelled), the interruption is recorded in the log, and the process exits
128 + the signal number (143, 129, 130) — the session is whole and `--continue` goes on from it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from typing import Protocol

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
HEADLESS = (signal.SIGINT, *TERMINATING)  # `agent -p`: Ctrl+C too ends with the result printed (130)


class Interruptible(Protocol):
    def interrupt(self, reason: str = "") -> None: ...

    async def idle(self) -> None: ...


def exit_code(signum: int) -> int:
    return 128 + signum


def reason(signum: int) -> str:
    return f"agent received {signal.Signals(signum).name}"


class SignalStop:
    """Installed on a running event loop: the first SIGTERM/SIGHUP interrupts `target` and calls
    `on_stopped(signum)` once the turn has ended and been logged."""

    def __init__(
        self,
        target: Interruptible,
        on_stopped: Callable[[int], None] | None = None,
        signals: tuple[int, ...] = TERMINATING,
    ):
        self.target = target
        self.on_stopped = on_stopped
        self.signals = signals
        self.signum: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None

    def install(self) -> SignalStop:
        self._loop = asyncio.get_running_loop()
        for sig in self.signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self._loop.add_signal_handler(sig, self._received, sig)
        return self

    def uninstall(self) -> None:
        if self._loop is None:
            return
        for sig in self.signals:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self._loop.remove_signal_handler(sig)
        self._loop = None

    @property
    def code(self) -> int | None:
        return exit_code(self.signum) if self.signum is not None else None

    def _received(self, signum: int) -> None:
        if self.signum is not None:
            if signum == signal.SIGINT:  # Ctrl+C again while stopping: give up waiting
                raise KeyboardInterrupt
            return  # already stopping
        self.signum = signum
        self.target.interrupt(reason(signum))
        self._task = asyncio.ensure_future(self._stop(signum))

    async def _stop(self, signum: int) -> None:
        await self.target.idle()
        if self.on_stopped is not None:
            self.on_stopped(signum)
