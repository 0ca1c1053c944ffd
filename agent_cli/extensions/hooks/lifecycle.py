"""A session's hook lifecycle, as Claude Code runs it: SessionStart before the first prompt of a
session (`startup`, `resume`, or `clear` after /clear; its output is context for the model),
SessionEnd once when the session ends (from async code, or from sync code on a loop of its own),
and Notification hooks in the background while a permission question waits for the person.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from agent_cli.core.events import Event, PermissionRequest
from agent_cli.core.types import Block
from agent_cli.extensions.hooks.api import Emit, HookRunner, NoHooks, hook_block


class SessionHooks:
    def __init__(self, hooks: HookRunner, source: str) -> None:
        self.hooks = hooks
        self.source: str | None = source  # what the next SessionStart reports (None: it ran)
        self.ended = False
        self.background: set[asyncio.Task] = set()  # Notification hooks under way

    async def start(self, emit: Emit, inject: Callable[[Block], None]) -> None:
        """SessionStart, if this session has not had it yet; its output goes to `inject`."""
        source, self.source = self.source, None
        if source is not None:
            for text in await self.hooks.session_start(source, emit):
                inject(hook_block(text, "session-start-hook"))

    def reopened(self, source: str) -> None:
        """Another session was opened in this process: SessionStart runs again, saying `source`."""
        self.source = source

    async def restart(self, reason: str) -> None:
        """/clear: SessionEnd now, SessionStart before the next prompt."""
        await self.hooks.session_end(reason)
        self.source = reason

    async def end(self, reason: str) -> None:
        if not self.ended:
            await self.hooks.session_end(reason)
        self._ended()

    def end_sync(self, reason: str) -> None:
        """`end` from sync code: the hooks run on a loop of their own (bounded by their timeouts)."""
        if not self.ended and not isinstance(self.hooks, NoHooks):
            run_detached(self.hooks.session_end(reason))
        self._ended()

    def notifying(self, emit: Emit) -> Emit:
        """`emit`, plus Notification hooks (in the background) when a permission question opens:
        the agent is waiting for the person."""
        if isinstance(self.hooks, NoHooks):
            return emit
        hooks, tasks = self.hooks, self.background

        def notify(event: Event) -> None:
            emit(event)
            if isinstance(event, PermissionRequest):
                name = event.call.name if event.call else "a tool"
                task = asyncio.ensure_future(
                    hooks.notification(f"agent needs your permission to use {name}", emit)
                )
                tasks.add(task)
                task.add_done_callback(tasks.discard)

        return notify

    def _ended(self) -> None:
        self.ended = True  # SessionEnd runs once, whichever way the session ends first
        for task in list(self.background):
            task.cancel()


def run_detached(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` to the end on an event loop of its own (from sync code, even inside a running loop)."""
    thread = threading.Thread(target=asyncio.run, args=(work,), name="session-end-hooks", daemon=True)
    thread.start()
    thread.join()
