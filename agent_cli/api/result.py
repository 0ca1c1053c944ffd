"""What one prompt came to: `Result`, the object `agent -p --output-format json` prints and
`api.run` returns.

Its first keys are Claude Code's, with Claude Code's names and types (`type`, `subtype`, `is_error`,
`duration_ms`, `duration_api_ms`, `num_turns`, `result`, `session_id`, `total_cost_usd`, `usage`,
`permission_denials`), so a script written for `claude -p` reads it unchanged; ours follow them
(`stop_reason`, `cache_hit_rate`, `compactions`, `context`, `errors`, `warnings`). `Tally` builds it
from the events of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from agent_cli.core.events import (
    AssistantMessage,
    CommandResult,
    Compacted,
    CompactionMeasured,
    ContextStatus,
    ErrorEvent,
    Event,
    Notice,
    PermissionDenied,
    RequestStarted,
    TurnFinished,
)
from agent_cli.core.types import Totals, Usage
from agent_cli.extensions.hooks.spec import claude_input, claude_name

Subtype = Literal["success", "error_max_turns", "error_during_execution"]


@dataclass(frozen=True)
class PermissionDenial:
    """A tool call the permissions refused. `tool_name` is Claude Code's name of the tool where it
    has one (Bash, Read, Edit, Write …, as hooks see it); `tool_input` is the call's input, plus an
    absolute `file_path` for the file tools. `target` and `reason` are ours."""

    tool_name: str
    tool_use_id: str
    tool_input: dict[str, Any]
    target: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "tool_use_id": self.tool_use_id,
            "tool_input": self.tool_input,
            "target": self.target,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class CompactionRecord:
    """A compaction during the run: tokens before and after (the server's figures once it gave them)."""

    tier: str
    trigger: str
    before: int
    after: int
    measured_by: str = "estimate"  # or "server"
    estimated_after: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tier": self.tier, "trigger": self.trigger}
        out.update(before=self.before, after=self.after)
        if self.measured_by == "server":
            out.update(measured_by="server", estimated_after=self.estimated_after)
        return out


@dataclass(frozen=True)
class Result:
    """One prompt's outcome. `usage` and `total_cost_usd` are the session's so far (a resumed
    session's earlier runs count); `num_turns` is this prompt's model calls."""

    subtype: Subtype
    is_error: bool
    result: str
    session_id: str
    num_turns: int = 0
    duration_ms: int = 0
    duration_api_ms: int = 0
    total_cost_usd: float = 0.0
    usage: Usage = field(default_factory=Usage)
    permission_denials: tuple[PermissionDenial, ...] = ()
    stop_reason: str = ""
    cache_hit_rate: float = 0.0
    compactions: tuple[CompactionRecord, ...] = ()
    context: ContextStatus | None = None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    type: Literal["result"] = "result"

    def to_json(self) -> dict[str, Any]:
        """Claude Code's keys first, in its order, then ours."""
        return {
            "type": self.type,
            "subtype": self.subtype,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "duration_api_ms": self.duration_api_ms,
            "num_turns": self.num_turns,
            "result": self.result,
            "session_id": self.session_id,
            "total_cost_usd": self.total_cost_usd,
            "usage": self.usage.to_json(),
            "permission_denials": [d.to_json() for d in self.permission_denials],
            "stop_reason": self.stop_reason,
            "cache_hit_rate": self.cache_hit_rate,
            "compactions": [c.to_json() for c in self.compactions],
            "context": {"used": self.context.used, "budget": self.context.budget} if self.context else {},
            "errors": list(self.errors),
            "warnings": list(self.warnings),
        }

    def failed(self, message: str, stop_reason: str | None = None) -> Result:
        """This result, failed: `message` joins the errors (and is the result when there was none)."""
        return replace(
            self,
            is_error=True,
            subtype="error_during_execution" if self.subtype == "success" else self.subtype,
            result=self.result or message,
            stop_reason=stop_reason or self.stop_reason,
            errors=(*self.errors, message),
        )


def failure(message: str, session_id: str = "", duration_ms: int = 0) -> Result:
    """The result of a run that could not start (no key, a bad option, no such session)."""
    return Result(
        "error_during_execution", True, message, session_id, duration_ms=duration_ms, errors=(message,)
    )


def subtype_of(stop_reason: str, is_error: bool) -> Subtype:
    if stop_reason == "max_turns":
        return "error_max_turns"
    return "error_during_execution" if is_error else "success"


class Finished(Protocol):
    """What a Tally reads off the session once the run is over (agent/runner.py's AgentSession)."""

    session_id: str
    totals: Totals

    def status(self) -> ContextStatus: ...


class Tally:
    """Watches one run's events and makes its Result. The API time is what passed between each
    request's start and its answer (or its failure)."""

    def __init__(self, workspace: str = "", clock: Callable[[], float] = time.monotonic) -> None:
        self.workspace = workspace
        self.clock = clock
        self.started = clock()
        self.api_seconds = 0.0
        self._request_at: float | None = None
        self.result = ""
        self.stop_reason = ""
        self.num_turns = 0
        self.is_error = False
        self.errors: list[str] = []
        self.denials: list[PermissionDenial] = []
        self.compactions: list[CompactionRecord] = []
        self.warnings: list[str] = []

    def observe(self, event: Event) -> None:
        if isinstance(event, RequestStarted):
            self._request_at = self.clock()
        elif isinstance(event, AssistantMessage | ErrorEvent | TurnFinished):
            self._answered()
        if isinstance(event, TurnFinished):
            self.result = event.result
            self.stop_reason = event.stop_reason
            self.num_turns = event.num_turns
            self.is_error = event.is_error or event.stop_reason in ("error", "interrupted")
        elif isinstance(event, ErrorEvent):
            hint = f" ({event.hint})" if event.hint else ""
            self.errors.append(f"{event.error_kind}: {event.message}{hint}")
        elif isinstance(event, PermissionDenied):
            self.denials.append(self._denial(event))
        elif isinstance(event, Compacted):
            self.compactions.append(CompactionRecord(event.tier, event.trigger, event.before, event.after))
        elif isinstance(event, CompactionMeasured):
            for index in range(len(self.compactions) - 1, -1, -1):
                if self.compactions[index].tier == event.tier:
                    self.compactions[index] = replace(
                        self.compactions[index],
                        before=event.before,
                        after=event.after,
                        measured_by="server",
                        estimated_after=event.estimated_after,
                    )
                    break
        elif isinstance(event, Notice) and event.level != "info":
            self.warnings.append(event.text)
        elif isinstance(event, CommandResult):
            self.result = event.text

    def _answered(self) -> None:
        if self._request_at is not None:
            self.api_seconds += self.clock() - self._request_at
            self._request_at = None

    def _denial(self, event: PermissionDenied) -> PermissionDenial:
        call = event.call
        if call is None:
            return PermissionDenial("", "", {}, event.target, event.reason)
        tool_input = claude_input(call.name, call.input, self.workspace)
        return PermissionDenial(claude_name(call.name), call.id, tool_input, event.target, event.reason)

    def finish(self, session: Finished, failure: Exception | None = None) -> Result:
        """The Result, read off `session` now. `failure` is a failed write of the session log (disk
        full): the run failed, said once."""
        self._answered()
        result, is_error, errors = self.result, self.is_error, list(self.errors)
        if failure is not None:
            result, is_error = str(failure), True
            errors.append(f"session: {failure}")
        if is_error and not result and errors:
            result = errors[-1]
        totals = session.totals
        return Result(
            subtype=subtype_of(self.stop_reason, is_error),
            is_error=is_error,
            result=result,
            session_id=session.session_id,
            num_turns=self.num_turns,
            duration_ms=round((self.clock() - self.started) * 1000),
            duration_api_ms=round(self.api_seconds * 1000),
            total_cost_usd=round(totals.cost_usd, 6),
            usage=totals.usage,
            permission_denials=tuple(self.denials),
            stop_reason=self.stop_reason,
            cache_hit_rate=round(totals.cache_hit_rate(), 4),
            compactions=tuple(self.compactions),
            context=session.status(),
            errors=tuple(errors),
            warnings=tuple(self.warnings),
        )
