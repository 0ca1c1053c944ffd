"""Opening a session's log for writing, and restoring from it what the log alone knows.

A session opens new (on disk at its first prompt), resumed (locked, its torn tail set aside, the
processes a dead run left behind reaped) or forked (a copy of an earlier one, under a new id). What
was spent, the ledger, the todo list and the gauge's starting point are read back from the events;
a tool the last process was running when it died gets its "interrupted" result.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.core.errors import SessionError
from agent_cli.core.types import Usage
from agent_cli.session.lock import SessionLock
from agent_cli.session.log import EVENTS, EventLog, SessionStore, new_session_id, read_events
from agent_cli.session.processes import ProcessRecords, has_records, reap_abandoned
from agent_cli.session.recovery import fork as fork_session
from agent_cli.session.recovery import orphan_results

if TYPE_CHECKING:
    from agent_cli.context.engine import ContextEngine
    from agent_cli.core.types import Totals

Event = dict[str, Any]


@dataclass(frozen=True)
class OpenedLog:
    """A session's log, open for writing, and what reading it found."""

    session_id: str
    session_dir: Path
    log: EventLog
    events: list[Event]  # every event, rewinds not applied
    model: str  # the model the log last switched to (or the configured one)
    processes: ProcessRecords
    warnings: tuple[str, ...]


def open_log(
    store: SessionStore,
    workspace: Path,
    model: str,
    now: float,
    resume_id: str | None,
    *,
    fork: bool = False,
    lock: SessionLock | None = None,
) -> OpenedLog:
    """A new session's log (deferred: written at the first prompt), an earlier one's, or a fork's."""
    events: list[Event] = []
    warnings: list[str] = []
    yours = True  # a new session is the person's own
    if resume_id:
        source_id = store.resolve(resume_id)
        refuse_links(store.path(source_id), source_id)
        session_id = source_id
        yours = store.sealed(source_id)
        if fork:
            session_id = new_session_id(now)
            source = read_events(store.path(source_id) / EVENTS)
            warnings += source.warnings
            fork_session(
                source.events,
                store.path(source_id),
                store.path(session_id),
                source_id,
                session_id,
                store.seal_of(session_id) if yours else {},  # a copy of someone else's is still theirs
                workspace=workspace,
            )
            warnings.append(f"forked session {source_id} into {session_id}")
        if not yours:
            warnings.append(
                f"session {source_id} was not recorded by you on this machine (no valid seal): a "
                "repository can ship a session, so read its history as someone else's words"
            )
        session_dir = store.path(session_id)
        lock = lock or SessionLock(session_dir, session_id)
        log = EventLog(session_dir, lock)  # locks, then sets a torn last line aside
        if not fork:
            store.touch(session_id)  # the session used last is the one `--continue` goes on in
        loaded = read_events(log.path)
        events = loaded.events
        warnings += log.warnings + loaded.warnings
        for event in events if yours else ():  # someone else's log does not pick your model
            if event.get("type") == "config" and event.get("model"):
                model = event["model"]
    else:
        session_id = new_session_id(now)
        session_dir = store.path(session_id)
        log = EventLog(session_dir, SessionLock(session_dir, session_id), deferred=True)
        log.append(
            "session_start", id=session_id, cwd=str(workspace), model=model, **store.seal_of(session_id)
        )
        if store.seal is not None and store.seal.problem:
            warnings.append(
                f"{store.seal.problem}; --continue and agent sessions will not offer this session "
                f"(agent --resume {session_id} opens it)"
            )
    processes = ProcessRecords(session_dir)
    if resume_id and not fork and yours:
        for note in processes.reap():
            warnings.append(note)
            log.append("reaped", message=note)
    # what a `kill -9` left, whichever session started it: only the person's own sessions (a
    # repository can ship a record naming any process group of theirs, to have it killed)
    others = (store.path(o) for o in store.ids() if o != session_id and has_records(store.path(o)))
    warnings += reap_abandoned(o for o in others if store.sealed(o.name))
    return OpenedLog(session_id, session_dir, log, events, model, processes, tuple(warnings))


def refuse_links(session_dir: Path, session_id: str) -> None:
    """SessionError when the session's folder is, or holds, a symbolic link or a file that is not a
    regular one. We never make either; a session a repository ships could link its log, stored
    outputs (`recall`), note or checkpoint repository to a file or repository outside the workspace,
    to be read into the context or written without a question, or make its log a FIFO that hangs
    the resume."""
    found, what = (session_dir, "a symbolic link") if session_dir.is_symlink() else (None, "")
    for top, dirs, files in os.walk(session_dir) if found is None else ():
        for name in (*dirs, *files):
            path = Path(top, name)
            if path.is_symlink():
                found, what = path, "a symbolic link"
            elif name in files and not stat.S_ISREG(path.lstat().st_mode):
                found, what = path, "a special file (not a regular one)"
            if found is not None:
                break
        if found is not None:
            break
    if found is not None:
        raise SessionError(
            f"session {session_id} holds {what} ({found}): a session's files are the agent's own, "
            "so it is not opened"
        )


def restore_totals(
    events: list[Event], totals: Totals, cost: Callable[[str, Usage], float], model: str
) -> None:
    """Add up what the log says was spent (`cost(model, usage)` prices a request)."""
    for event in events:
        kind = event.get("type")
        if kind == "assistant" and event.get("usage"):
            usage = Usage.from_json(event["usage"])
            totals.usage = totals.usage + usage
            totals.cost_usd += cost(event.get("model") or model, usage)
            totals.requests += 1 if usage.total_input else 0
        elif kind == "subagent_usage":  # a child's spending (agent/subagents.py)
            totals.usage = totals.usage + Usage.from_json(event.get("usage"))
            totals.cost_usd += float(event.get("cost_usd") or 0.0)
            totals.subagent_requests += int(event.get("requests") or 0)
        elif kind == "summarizer_usage":
            usage = Usage.from_json(event.get("usage"))
            totals.usage = totals.usage + usage
            totals.cost_usd += cost(event.get("model") or model, usage)
            totals.side_requests += 1


def restore_state(events: list[Event], engine: ContextEngine, todo: list[dict[str, Any]]) -> None:
    """The ledger's tool facts (since the last /clear) and the latest todo list."""
    cleared = max((i for i, e in enumerate(events) if _is_clear(e)), default=-1)
    for index, event in enumerate(events):
        if event.get("type") == "tool_meta" and index > cleared:  # /clear emptied the ledger
            engine.ledger.record_result(event.get("tool_use_id", ""), event.get("meta") or {})
        elif event.get("type") == "todo":
            todo[:] = event.get("todos", [])


def close_orphans(engine: ContextEngine, log: EventLog, turn: int) -> str | None:
    """A tool the last process was running when it died gets its 'interrupted' result, logged;
    returns the warning that says so (None: nothing was left open)."""
    closing = orphan_results(engine.messages, turn)
    if closing is None:
        return None
    appended = engine.append(closing, ingest=False)
    log.message("tool_results", appended.message, interrupted=True, recovered=True)
    log.append("turn_end", stop_reason="interrupted")
    names = ", ".join(sorted({b.meta.tool_name or "tool" for b in closing.blocks}))
    return f"the last run ended while {names} was running; it is recorded as interrupted"


def last_billed_input(events: list[Event], model: str) -> int:
    """The input tokens the log's last request was billed, when nothing changed the view since it
    but its answer (0 otherwise): a resumed session's gauge starts from that, not from an estimate."""
    billed = 0
    for event in events:
        kind = event.get("type")
        if kind == "assistant":
            usage = Usage.from_json(event.get("usage")) if event.get("usage") else Usage()
            billed = usage.total_input if (event.get("model") or model) == model else 0
        elif kind in ("user", "tool_results", "compaction") or (kind == "config" and event.get("model")):
            billed = 0
    return billed


def _is_clear(event: Event) -> bool:
    return event.get("type") == "compaction" and (event.get("compaction") or {}).get("tier") == "clear"
