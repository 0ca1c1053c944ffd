"""One task, start to end, in whichever process runs it (a local worker process or a Ray worker):
its checkout, a headless session on the Python API (`api.Session`) under the batch's options and the
task's own, then the commit of what changed. It returns an `Outcome`; it never raises for what went
wrong in the task — that is the row's error.

A SIGINT or SIGTERM (Ctrl+C, or the driver stopping the batch) interrupts the running turn as Esc
does, so the session stays whole: the task has no row then, and the next run of the batch goes on in
the same checkout and session.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_cli.batch.checkout import Checkout, CheckoutError, commit, prepare
from agent_cli.batch.results import Row
from agent_cli.batch.tasks import Task

if TYPE_CHECKING:
    from agent_cli.api import Options, Result, Session

SESSIONS = ".agent/sessions"  # where a checkout's sessions are unless the config moves them


@dataclass(frozen=True)
class Plan:
    """What every task of the batch shares: the options from the flags, and where checkouts go."""

    options: Options
    workdir: Path


@dataclass(frozen=True)
class Outcome:
    """A task's end: its row, or (row None) it was interrupted and has none yet."""

    task_id: str
    row: Row | None
    session_dir: str = ""


class Gate(Protocol):
    """The slots for running agents (`--max-concurrency`), shared by every worker."""

    def acquire(self, key: str) -> bool:
        """Wait for a slot; False when the batch is stopping instead."""
        ...

    def release(self, key: str) -> None: ...


class Open:
    """No cap: every worker runs its agent at once."""

    def acquire(self, key: str) -> bool:
        return True

    def release(self, key: str) -> None:
        return None


class Interrupt:
    """SIGINT and SIGTERM while a task runs: the first one interrupts the session's turn (a later
    one changes nothing more); `requested` tells the rest of the task to stop.

    While the session runs, the signals are the event loop's own (`add_signal_handler`), so one
    wakes the loop even when it waits on a silent stream — and so does Ray's cancel, which raises
    no signal but trips SIGINT's handler (`_thread.interrupt_main`)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self._session: Session | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> Interrupt:
        for sig in self.SIGNALS:
            with contextlib.suppress(ValueError):  # not the main thread: the engine cancels instead
                self._previous[sig] = signal.signal(sig, self._received)
        return self

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
        self._previous.clear()

    def _received(self, signum: int, frame: object = None) -> None:
        if self.requested:
            return
        self.requested = True
        if self._session is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._session.interrupt)

    def watch(self, session: Session | None) -> None:
        """From the running loop: `session` is the one to interrupt (None: the session is over)."""
        loop = asyncio.get_running_loop()
        if session is not None:
            self._session, self._loop = session, loop
            for sig in self._previous:  # only where the process's handlers are ours
                with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                    loop.add_signal_handler(sig, self._received, sig)
            return
        self._session = self._loop = None
        for sig in self._previous:
            with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
                loop.remove_signal_handler(sig)
                signal.signal(sig, self._received)  # back to ours for the commit


def run_task(task: Task, plan: Plan, gate: Gate, stop: Interrupt, attempt: int = 1) -> Outcome:
    """Run `task` to its end (or until `stop`): its Outcome."""
    started = time.monotonic()

    def failed(message: str, checkout: Checkout | None = None) -> Outcome:
        row = Row(
            task.id,
            True,
            message,
            duration_ms=_ms(started),
            branch=checkout.branch if checkout else "",
            repo=task.repo,
            base=checkout.base if checkout else "",
            worktree=str(checkout.path) if checkout else "",
            attempts=attempt,
            errors=(message,),
        )
        return Outcome(task.id, row)

    try:
        checkout = prepare(task, plan.workdir)
    except (CheckoutError, OSError) as exc:  # OSError: the work folder cannot be made, say
        return Outcome(task.id, None) if stop.requested else failed(str(exc))
    key = slot_key(task.id, attempt)
    if stop.requested or not gate.acquire(key):
        return Outcome(task.id, None)
    try:
        result, session_dir = asyncio.run(_agent(task, plan, checkout, stop))
    except Exception as exc:  # noqa: BLE001 - a bug of ours is this task's error, not the worker's end
        return failed(f"internal error: {type(exc).__name__}: {exc}", checkout)
    finally:
        gate.release(key)
    if stop.requested and result.stop_reason in ("interrupted", ""):
        return Outcome(task.id, None, session_dir)
    try:
        head, stat = commit(checkout, task, exclude=_excluded(checkout.path, session_dir))
    except (CheckoutError, OSError) as exc:
        result = result.failed(f"the changes could not be committed: {exc}")
        head, stat = "", ""
    row = Row(
        id=task.id,
        is_error=result.is_error,
        result=result.result,
        num_turns=result.num_turns,
        usage=result.usage,
        total_cost_usd=result.total_cost_usd,
        duration_ms=_ms(started),
        branch=checkout.branch,
        diff_stat=stat,
        session_dir=session_dir,
        session_id=result.session_id,
        subtype=result.subtype,
        stop_reason=result.stop_reason,
        cache_hit_rate=result.cache_hit_rate,
        repo=task.repo,
        base=checkout.base,
        commit=head,
        worktree=str(checkout.path),
        attempts=attempt,
        permission_denials=tuple(denial.to_json() for denial in result.permission_denials),
        errors=result.errors,
        warnings=result.warnings,
    )
    return Outcome(task.id, row, session_dir)


async def _agent(task: Task, plan: Plan, checkout: Checkout, stop: Interrupt) -> tuple[Result, str]:
    """The task's prompt in a headless session on the checkout (going on in the session an
    earlier run left there); its Result and the session's folder."""
    from agent_cli.api import Session
    from agent_cli.api.result import failure
    from agent_cli.core.errors import AgentError, SessionError

    warnings: list[str] = []
    options = replace(plan.options, cwd=checkout.path, continue_session=checkout.reused, **dict(task.options))
    session = Session(options=options, report=_collect(warnings))
    try:
        await session.open()
    except SessionError:  # reused, but no session there yet: a new one
        session = Session(options=replace(options, continue_session=False), report=_collect(warnings))
        try:
            await session.open()
        except AgentError as exc:
            return failure(str(exc)), ""
    except AgentError as exc:
        return failure(str(exc)), ""
    session_dir = str(session.backend.session_dir)
    stop.watch(session)
    try:
        if stop.requested:
            return failure("interrupted before it started", session.session_id), session_dir
        result = await session.run(task.prompt)
    finally:
        stop.watch(None)
        with contextlib.suppress(AgentError):
            await session.close()
    if warnings:
        result = replace(result, warnings=(*warnings, *result.warnings))
    return result, session_dir


def slot_key(task_id: str, attempt: int) -> str:
    """A task's attempt, as the slots know it (a slot given up on for a dead attempt stays free of
    the next one)."""
    return f"{task_id}#{attempt}"


def _collect(into: list[str]) -> Callable[[str, str], None]:
    def report(text: str, level: str) -> None:
        into.append(text)

    return report


def _excluded(checkout: Path, session_dir: str) -> list[str]:
    """The sessions folder, when it is inside the checkout: never committed."""
    if session_dir:
        root = Path(session_dir).parent
        with contextlib.suppress(ValueError):
            return [root.resolve().relative_to(checkout.resolve()).as_posix()]
        return []
    return [SESSIONS]


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def execute(task: Task, plan: Plan, gate: Gate | None = None, attempt: int = 1) -> Outcome:
    """`run_task` in a process of its own choosing (a Ray task): the signals that stop it are
    watched only while it runs."""
    stop = Interrupt().install()
    try:
        return run_task(task, plan, gate or Open(), stop, attempt)
    finally:
        stop.uninstall()
