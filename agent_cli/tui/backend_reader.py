"""Safe reads of the backend's state for the UI: a read that fails is reported and yields a default,
so a misbehaving backend never takes the screen down."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agent_cli.agent.api import AgentBackend, CommandSpec, SessionInfo
from agent_cli.core.events import ContextStatus, EvictionReport
from agent_cli.core.types import Message
from agent_cli.tui.commands import merged_commands
from agent_cli.tui.completion import argument_choices

T = TypeVar("T")


class BackendReader:
    def __init__(self, backend: AgentBackend, on_error: Callable[[str], None]) -> None:
        self.backend = backend
        self._on_error = on_error

    def _read(self, get: Callable[[], T], default: T) -> T:
        try:
            return get()
        except Exception as exc:
            self._on_error(f"{type(exc).__name__}: {exc}")
            return default

    @property
    def model(self) -> str:
        return str(getattr(self.backend, "model", ""))

    @property
    def permission_mode(self) -> str:
        return str(getattr(self.backend, "permission_mode", ""))

    @property
    def session_id(self) -> str:
        return str(getattr(self.backend, "session_id", ""))

    def status(self) -> ContextStatus | None:
        return self._read(self.backend.status, None)

    def breakdown(self) -> dict[str, int] | None:
        return self._read(self.backend.breakdown, None)

    def eviction(self) -> EvictionReport | None:
        return self._read(getattr(self.backend, "eviction", lambda: None), None)

    def sessions(self) -> list[SessionInfo]:
        return self._read(self.backend.sessions, [])

    def sessions_passed_over(self) -> str:
        return self._read(getattr(self.backend, "sessions_passed_over", lambda: ""), "")

    def conversation(self) -> list[Message]:
        return self._read(self.backend.conversation, [])

    def commands(self) -> tuple[list[CommandSpec], dict[str, tuple[str, ...]]]:
        """The commands to complete and their argument values (session ids for /resume)."""
        specs = self._read(self.backend.commands, [])
        extra = {"resume": [s.id for s in self.sessions()]}
        return merged_commands(specs), argument_choices(specs, extra)

    def cost(self) -> tuple[float, float | None] | None:
        """(session cost in USD, cache hit rate) from `backend.cost()`, when it says."""
        cost: dict[str, Any] = self._read(self.backend.cost, {})
        usd = cost.get("cost_usd", cost.get("total_cost_usd"))
        rate = cost.get("cache_hit_rate")
        if not isinstance(usd, int | float):
            return None
        return float(usd), float(rate) if isinstance(rate, int | float) else None
