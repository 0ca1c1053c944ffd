"""The seam the front ends (TUI, headless) use to drive an agent session.

`AgentBackend` is implemented by agent/session_runner.py; tests and the TUI's own tests may use any
object with this shape. Every run yields core.events.Event values and ends with TurnFinished.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.core.events import ContextStatus, Event
from agent_cli.core.types import Message


@dataclass(frozen=True)
class SessionInfo:
    id: str
    started_at: str  # ISO 8601
    first_prompt: str
    turns: int
    path: str


@dataclass(frozen=True)
class CommandSpec:
    name: str  # without the slash
    args: str  # e.g. "[focus]"
    help: str
    choices: tuple[str, ...] = ()  # completions of the argument (model names, modes)


class AgentBackend(Protocol):
    session_id: str
    model: str
    permission_mode: str

    def status(self) -> ContextStatus:
        """The context gauge's numbers right now."""
        ...

    def submit(self, text: str) -> AsyncIterator[Event]:
        """Run a prompt (or a slash command when `text` starts with '/'); ends with TurnFinished."""
        ...

    def interrupt(self) -> None:
        """Stop the running turn: the stream is cancelled, open tool calls get an 'interrupted' result."""
        ...

    def commands(self) -> list[CommandSpec]: ...

    def breakdown(self) -> dict[str, int]:
        """Tokens by category: system, tools, user_context, messages, tool_results, summaries,
        attachments, free, reserved."""
        ...

    def sessions(self) -> list[SessionInfo]: ...

    def cost(self) -> dict[str, Any]: ...

    def conversation(self) -> list[Message]:
        """The conversation so far (the full log, not the compacted view), to paint the transcript
        on start-up and after /resume or /clear."""
        ...
