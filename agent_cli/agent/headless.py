"""`agent -p`: run one prompt without a UI and print text, one JSON object, or a stream of events."""

from __future__ import annotations

import json
import signal
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TextIO

from agent_cli.core.events import (
    CommandResult,
    Compacted,
    CompactionMeasured,
    ContextStatus,
    ContextUpdate,
    ErrorEvent,
    Event,
    Notice,
    PermissionDenied,
    Retrying,
    TextDelta,
    ThinkingDelta,
    TurnFinished,
)
from agent_cli.session.signals import SignalStop, exit_code

if TYPE_CHECKING:
    from agent_cli.agent.runner import AgentSession

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass
class HeadlessRun:
    result: str = ""
    is_error: bool = False
    stop_reason: str = ""
    num_turns: int = 0  # model calls of this run (the session's totals are in `usage`)
    errors: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    compactions: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


async def run_headless(
    session: AgentSession,
    prompt: str,
    fmt: OutputFormat = "text",
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """Run `prompt`; returns the process exit code (0 ok, 1 the run failed)."""
    run = HeadlessRun()
    stop = SignalStop(session).install()
    try:
        await _run(session, prompt, fmt, out, err, run)
    finally:
        stop.uninstall()
    failure = _log_failure(session)
    if failure is not None:  # one line that says what and where; the rest of what failed is its echo
        print(f"agent: {failure}", file=err)
        run.is_error, run.result = True, str(failure)
        run.errors.append(f"session: {failure}")
    if stop.signum is not None:
        name = signal.Signals(stop.signum).name
        print(f"agent: stopped by {name}; the session is saved (agent --continue goes on)", file=err)
        run.is_error, run.stop_reason = True, "interrupted"
        run.errors.append(f"interrupted: agent received {name}")
    if fmt == "json":
        out.write(json.dumps(summary(session, run), indent=2) + "\n")
    elif fmt == "stream-json":
        out.write(json.dumps({"type": "result", **summary(session, run)}) + "\n")
    elif stop.signum is None and failure is None:
        out.write(run.result.rstrip() + "\n" if run.result else "")
    out.flush()
    if stop.signum is not None:
        return exit_code(stop.signum)
    return 1 if run.is_error else 0


def _log_failure(session: AgentSession) -> Exception | None:
    """The session log's failed write (disk full), if one happened during the run."""
    return getattr(session.log, "failure", None)


async def _run(
    session: AgentSession, prompt: str, fmt: OutputFormat, out: TextIO, err: TextIO, run: HeadlessRun
) -> None:
    last_context: ContextStatus | None = None
    async for event in session.submit(prompt):
        if _echoes_failure(session, event):
            continue  # said once, as the run ends
        _observe(run, event)
        if isinstance(event, ContextUpdate):
            if event.status == last_context:
                continue  # the loop refreshes the gauge often; a stream reports each change once
            last_context = event.status
        if fmt == "stream-json" and not isinstance(event, TextDelta | ThinkingDelta):
            out.write(json.dumps({**event.to_json(), "session_id": session.session_id}, default=str) + "\n")
            out.flush()
        elif fmt == "stream-json":
            out.write(json.dumps(event.to_json()) + "\n")
        # stdout carries the answer (or JSON); what goes wrong, and any warning, goes to stderr in
        # every format, so a script reading JSON still sees it; progress notes only in text mode
        warning = isinstance(event, Notice) and event.level != "info"
        if (
            isinstance(event, ErrorEvent | PermissionDenied)
            or warning
            or (fmt == "text" and isinstance(event, Notice | Retrying))
        ):
            print(_describe(event), file=err)
    if run.stop_reason != "interrupted":
        await session.wait_background()


def _echoes_failure(session: AgentSession, event: Event) -> bool:
    failure = _log_failure(session)
    said = getattr(event, "text", "") or getattr(event, "message", "")
    return failure is not None and isinstance(said, str) and str(failure) in said


def _observe(run: HeadlessRun, event: Event) -> None:
    if isinstance(event, TurnFinished):
        run.result = event.result
        run.stop_reason = event.stop_reason
        run.num_turns = event.num_turns
        run.is_error = event.is_error or event.stop_reason in ("error", "interrupted")
    elif isinstance(event, ErrorEvent):
        run.errors.append(f"{event.error_kind}: {event.message}" + (f" ({event.hint})" if event.hint else ""))
    elif isinstance(event, PermissionDenied):
        run.denied.append(f"{event.call.name if event.call else '?'} {event.target}: {event.reason}")
    elif isinstance(event, Compacted):
        run.compactions.append(
            {"tier": event.tier, "trigger": event.trigger, "before": event.before, "after": event.after}
        )
    elif isinstance(event, CompactionMeasured):
        for entry in reversed(run.compactions):
            if entry["tier"] == event.tier:
                entry.update(before=event.before, after=event.after, measured_by="server")
                entry["estimated_after"] = event.estimated_after
                break
    elif isinstance(event, Notice) and event.level != "info":
        run.warnings.append(event.text)
    elif isinstance(event, CommandResult):
        run.result = event.text


def _describe(event: Event) -> str:
    if isinstance(event, ErrorEvent):
        return f"error ({event.error_kind}): {event.message}" + (f"\n  {event.hint}" if event.hint else "")
    if isinstance(event, PermissionDenied):
        return f"denied: {event.call.name if event.call else '?'} {event.target} — {event.reason}"
    if isinstance(event, Notice):
        return f"{event.level}: {event.text}"
    if isinstance(event, Retrying):
        return f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.reason}"
    return str(event)


def summary(session: AgentSession, run: HeadlessRun) -> dict[str, object]:
    status = session.status()
    totals = session.totals
    result = run.result
    if run.is_error and not result and run.errors:
        result = run.errors[-1]
    return {
        "result": result,
        "session_id": session.session_id,
        "num_turns": run.num_turns,
        "is_error": run.is_error,
        "stop_reason": run.stop_reason,
        "total_cost_usd": round(totals.cost_usd, 6),
        "usage": totals.usage.to_json(),
        "cache_hit_rate": round(totals.cache_hit_rate(), 4),
        "compactions": run.compactions,
        "context": {"used": status.used, "budget": status.budget},
        "permission_denials": run.denied,
        "errors": run.errors,
        "warnings": run.warnings,
    }
