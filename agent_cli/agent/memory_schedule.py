"""When the session-memory note is updated: after a turn, in the background, when §7's thresholds
say so and the update pays its way; one update at a time. The note itself is agent/memory.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from agent_cli.agent.memory import SessionMemory, weighted_input
from agent_cli.context.engine import ContextEngine
from agent_cli.context.model import ContextConfig, Summarizer
from agent_cli.core.events import Event, Notice
from agent_cli.core.types import Usage
from agent_cli.llm.base import Request
from agent_cli.session.log import EventLog


def open_memory(
    session_dir: Path, workspace: Path, summarizer: Summarizer, config: ContextConfig, engine: ContextEngine
) -> SessionMemory:
    """The session's note as last written, handed to the engine (T2 uses it)."""
    memory = SessionMemory(session_dir, workspace, summarizer, config, engine.counter)
    memory.load()
    engine.memory_note, engine.memory_covers = memory.note, memory.covers
    return memory


class MemorySchedule:
    """Schedules note updates for one opened session. `spent()` is the session's usage so far,
    `complete(request)` sends a note request (and accounts for it)."""

    def __init__(
        self,
        memory: SessionMemory,
        engine: ContextEngine,
        log: EventLog,
        *,
        spent: Callable[[], Usage],
        complete: Callable[[Request], Awaitable[str]],
        max_tokens: int,
        running: asyncio.Task | None = None,  # an update still under way from before a reopening
    ) -> None:
        self.memory = memory
        self.engine = engine
        self.log = log
        self.spent = spent
        self.complete = complete
        self.max_tokens = max_tokens
        self.task = running
        self.spent_mark = 0.0  # weighted input spent when the note was last updated

    def schedule(self, emit: Callable[[Event], None], force: bool = False) -> asyncio.Task | None:
        """Start an update when it is due (always with `force`); the running one if one runs."""
        if self.task and not self.task.done():
            return self.task
        engine, memory = self.engine, self.memory
        memory.covers = engine.memory_covers  # compactions move it; the engine keeps it aligned
        counts = [engine.counter.message(m) for m in engine.messages]
        total = sum(counts)
        since = sum(counts[memory.covers :]) if memory.covers <= len(counts) else total
        calls = sum(len(m.tool_uses()) for m in engine.messages[memory.covers :])
        if not force and not memory.should_update(since, calls, total):
            return None
        instruction = memory.instruction()
        spent = weighted_input(self.spent()) - self.spent_mark
        if not force and not memory.pays_its_way(
            spent, engine.status().used, engine.counter.text(instruction)
        ):
            return None
        covers = len(engine.messages)
        # the conversation itself is the request's prefix (read from the prompt cache), the note
        # instruction its last message; built now, so it is the view the note will cover
        request = engine.prefix_request(instruction, max_tokens=self.max_tokens)

        async def update() -> str:
            note = await memory.update_with(lambda: self.complete(request), covers)
            self.spent_mark = weighted_input(self.spent())
            engine.memory_note, engine.memory_covers = memory.note, memory.covers
            self.log.append("memory", covers=covers, tokens=engine.counter.text(note))
            return note

        self.task = asyncio.ensure_future(update())
        self.task.add_done_callback(lambda t: _failed(t, emit, self.log))
        return self.task

    async def wait(self) -> None:
        if self.task:
            with contextlib.suppress(Exception):
                await self.task


def _failed(task: asyncio.Task, emit: Callable[[Event], None], log: EventLog) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        log.append("error", kind="memory", message=str(exc))
        emit(Notice(f"session memory update failed: {exc}", "warning"))
