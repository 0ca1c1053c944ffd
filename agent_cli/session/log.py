"""The session event log: the source of truth. Append-only, one JSON object per line, fsync'd.

Layout: `<root>/<id>/events.jsonl`, `<root>/<id>/tool-results/`, `<root>/<id>/session_memory.md`.
The LLM view is a projection of the log (see `replay_into`); so is the conversation view.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from agent_cli.context.model import Compaction
from agent_cli.core.errors import SessionError
from agent_cli.core.files import open_private, private_dir
from agent_cli.core.surrogates import scrub_json
from agent_cli.core.types import Message, Usage
from agent_cli.session.lock import SessionLock
from agent_cli.session.recovery import MESSAGE_EVENTS, mend, set_aside_torn_tail
from agent_cli.session.seal import NOT_YOURS, UNREADABLE, SessionSeal, first_line, passed_over
from agent_cli.session.shapes import check_event
from agent_cli.session.timeline import effective_events, is_prompt

EVENTS = "events.jsonl"


@dataclass(frozen=True)
class SessionInfo:
    id: str
    started_at: str  # ISO 8601
    first_prompt: str
    turns: int
    path: str


def new_session_id(now: float | None = None) -> str:
    stamp = datetime.fromtimestamp(now or time.time(), UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


class EventLog:
    """Appends events to `events.jsonl`, flushing and fsyncing after each one.

    A new session's log is deferred: events wait in memory until the first prompt (a `user` event)
    creates the directory and takes the session's lock, so a session nobody used leaves nothing on
    disk. A write that fails (disk full) raises SessionError with one line that says so and names
    the file (kept in `failure`), and is cut back off the file: nothing half-written is left for
    the next run, or the next event, to trip over."""

    def __init__(self, session_dir: Path, lock: SessionLock | None = None, *, deferred: bool = False):
        self.dir = session_dir
        self.path = session_dir / EVENTS
        self.lock = lock
        self.warnings: list[str] = []
        self._held: list[bytes] = []
        self._fh: BinaryIO | None = None
        self._closed = False
        self._opened = False
        self.failure: SessionError | None = None  # the first write that failed, for a front end to say
        if not deferred:
            self._open()

    @property
    def started(self) -> bool:
        """The session exists on disk (its first prompt was written)."""
        return self._opened

    def _open(self) -> None:
        try:
            if self.lock is not None:
                self.lock.acquire()
            private_dir(self.dir)
            torn = set_aside_torn_tail(self.path)
            if torn:
                self.warnings.append(torn)
            self._fh = os.fdopen(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab")  # 0600
            self._opened = True
        except OSError as exc:
            if self.lock is not None:
                self.lock.release()  # nobody writes it: another process may
            raise self._failed(exc) from exc
        held, self._held = self._held, []
        for line in held:
            self._write(line)

    def _write(self, line: bytes) -> None:
        assert self._fh is not None
        size = None
        try:
            size = os.fstat(self._fh.fileno()).st_size
            self._fh.write(line)
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None  # the next append opens it again (and sets aside a fragment left behind)
            if size is not None:
                with contextlib.suppress(OSError):
                    os.truncate(self.path, size)  # what part of the line was written goes: it frees room
            raise self._failed(exc) from exc

    def _failed(self, exc: OSError) -> SessionError:
        error = SessionError(f"cannot write the session log: {exc.strerror or exc} ({self.path})")
        error.hint = "free some space (or fix the permissions), then agent --continue goes on"
        self.failure = self.failure or error
        return error

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        event = {"type": type_, "ts": time.time(), **fields}
        try:
            line = (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        except UnicodeEncodeError:
            # a lone surrogate (bytes that are not UTF-8, from a name or an argument) is written as
            # U+FFFD: kept (escaped), every read of the log would hand it back to fail a request
            event = scrub_json(event)
            line = (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if self._closed:
            return event  # a late background task after close: nothing more is written
        if self._fh is not None:
            self._write(line)
        elif self._opened or type_ == "user":
            self._held.append(line)
            self._open()
        else:
            self._held.append(line)
        return event

    # typed helpers, so the shape of each event lives in one place
    def message(self, type_: str, message: Message, **extra: Any) -> None:
        self.append(type_, message=message.to_json(), **extra)

    def assistant(self, message: Message, usage: Usage, model: str, stop_reason: str) -> None:
        self.append(
            "assistant",
            message=message.to_json(),
            usage=usage.to_json(),
            model=model,
            stop_reason=stop_reason,
        )

    def compaction(self, compaction: Compaction) -> None:
        self.append("compaction", compaction=compaction.to_json())

    def close(self) -> None:
        self._closed = True
        self._held.clear()
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
        if self.lock is not None:
            self.lock.release()


@dataclass
class LoadedLog:
    events: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_events(path: Path) -> LoadedLog:
    """Read a log; a torn last line (crash mid-write) or a corrupt line anywhere — not JSON, not an
    event, or an event not of the shape it was written in (session/shapes.py) — is skipped with a
    one-line warning that names it. What a lost message leaves unpaired is mended when the log is replayed (`replay_into`)."""
    out = LoadedLog()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SessionError(f"cannot read session log {path}: {exc.strerror or exc}") from exc
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = False
        try:
            event = json.loads(line.decode("utf-8"))
            parsed = True
            check_event(event)
        except (ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
            last = number == len(lines) or (number == len(lines) - 1 and not lines[-1].strip())
            torn = last and not parsed  # whole JSON is no interrupted write, even on the last line
            what = "torn last line (an interrupted write)" if torn else f"corrupt line {number}"
            out.warnings.append(f"{path.name}: skipped {what}: {str(exc)[:80]}")
            continue
        out.events.append(event)
    return out


class ViewSink(Protocol):
    """What a log is replayed into (the context engine)."""

    def append(self, message: Message, *, ingest: bool = True) -> Any: ...

    def apply(self, compaction: Compaction) -> None: ...


def replay_into(events: list[dict[str, Any]], sink: ViewSink) -> list[str]:
    """Rebuild the LLM view: every message appended as logged, every compaction applied in order.
    Messages a lost line left unpaired get their stand-ins first (recovery.mend); returns what
    was mended, to tell the person."""
    events, added = mend(events)
    for event in events:
        kind = event.get("type")
        if kind in MESSAGE_EVENTS and "message" in event:
            sink.append(Message.from_json(event["message"]), ingest=False)
        elif kind == "compaction":
            sink.apply(Compaction.from_json(event["compaction"]))
    if not added:
        return []
    return [
        f'{EVENTS}: {added} message(s) lost with unreadable lines were replaced by stand-ins ("result lost")'
    ]


def compaction_history(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every compaction of the log (tier, trigger, before, after), with the server's figures where a
    later `compaction_measured` event gave them (`measured_by: "server"`, `estimated_after`)."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == "compaction" and isinstance(event.get("compaction"), dict):
            c = event["compaction"]
            out.append({k: c.get(k) for k in ("tier", "trigger", "before", "after")})
        elif event.get("type") == "compaction_measured":
            for entry in reversed(out):
                if entry["tier"] == event.get("tier"):
                    entry["estimated_after"] = entry["after"]
                    entry.update(before=event.get("before"), after=event.get("after"), measured_by="server")
                    break
    return out


def conversation(events: list[dict[str, Any]]) -> list[Message]:
    """Every message as it happened (no compaction applied): the transcript a person scrolls through."""
    messages: list[Message] = []
    for event in events:
        if event.get("type") in MESSAGE_EVENTS:
            messages.append(Message.from_json(event["message"]))
        elif event.get("type") == "compaction" and event["compaction"].get("tier") == "clear":
            messages.clear()
    return messages


def first_prompt(events: list[dict[str, Any]]) -> str:
    for event in events:
        if event.get("type") == "user" and event.get("prompt"):
            return str(event["prompt"])
    return ""


class SessionStore:
    """The sessions of one workspace: `<workspace>/.agent/sessions` unless configured otherwise.

    With a `seal` (session/seal.py), `latest` and `list` — what is chosen or offered to the person —
    pass by a session this person did not record here (one a repository shipped)."""

    def __init__(self, root: Path, seal: SessionSeal | None = None, workspace: Path | None = None):
        self.root = root
        self.seal = seal
        self.workspace = workspace or root

    def seal_of(self, session_id: str) -> dict[str, str]:
        """The `seal` field of a session we start now (none without a seal)."""
        return {"seal": self.seal.seal(session_id, self.workspace)} if self.seal is not None else {}

    def sealed(self, session_id: str) -> bool:
        """Whether this person recorded the session here (always, without a seal to check)."""
        return not self.passed_by(session_id)

    def passed_by(self, session_id: str) -> str:
        """Why the session is not offered as the person's own ('' when it is): its first line, which
        holds the seal, is unreadable (UNREADABLE), or the seal is not theirs (NOT_YOURS)."""
        if self.seal is None:
            return ""
        try:
            start = json.loads(first_line(self.path(session_id) / EVENTS))
            check_event(start)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return UNREADABLE
        if start.get("type") != "session_start":
            return UNREADABLE
        return "" if self.seal.verify(session_id, self.workspace, start.get("seal")) else NOT_YOURS

    def path(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise SessionError(f"bad session id {session_id!r}")
        return self.root / session_id

    def check_writable(self) -> None:
        """Fail now, with one clear line, when sessions cannot be written here (not at the first prompt)."""
        try:
            private_dir(self.root)  # 0700 when we make it (with .agent/ above it)
            probe = self.root / f".write-probe-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise SessionError(
                f"cannot write sessions to {self.root}: {reason}; fix its permissions, or set "
                "sessions_dir in the config (or AGENT_SESSIONS_DIR) to a writable directory"
            ) from exc

    def exists(self, session_id: str) -> bool:
        return (self.path(session_id) / EVENTS).exists()

    def ids(self) -> list[str]:
        """Session ids, oldest first (ids start with their UTC start time)."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / EVENTS).exists())

    def by_use(self) -> list[str]:
        """Session ids, the most recently used first: by when their log was last written or opened to
        go on (`touch`), so `--resume S1` makes S1 the one `--continue` picks next; ties by start."""

        def used(session_id: str) -> tuple[float, str]:
            try:
                return (self.path(session_id) / EVENTS).stat().st_mtime, session_id
            except OSError:
                return 0.0, session_id

        return sorted(self.ids(), key=used, reverse=True)

    def touch(self, session_id: str) -> None:
        """Mark a session used now (it was opened to go on, whether or not a prompt follows)."""
        with contextlib.suppress(OSError):
            os.utime(self.path(session_id) / EVENTS)

    def latest(self) -> str | None:
        """The most recently used session that has had a prompt (one opened and left before its first
        prompt is not; one rewound to before its first prompt still is: it was used)."""
        return self.pick()[0]

    def pick(self) -> tuple[str | None, str]:
        """`latest`, and a line on the newer sessions passed by on the way ('' when none was)."""
        passed = []
        for session_id in self.by_use():
            if reason := self.passed_by(session_id):
                passed.append((session_id, reason))
                continue
            with contextlib.suppress(SessionError):
                if any(map(is_prompt, read_events(self.path(session_id) / EVENTS).events)):
                    return session_id, passed_over(passed, self.seal)
        return None, passed_over(passed, self.seal)

    def passed_over(self) -> str:
        """A line on the sessions `list` passes by, and why ('' when none)."""
        return passed_over([(i, r) for i in self.by_use() if (r := self.passed_by(i))], self.seal)

    def resolve(self, session_id: str) -> str:
        """An exact id, or a unique prefix of one."""
        if self.exists(session_id):
            return session_id
        matches = [i for i in self.ids() if i.startswith(session_id)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionError(
                f"no session {session_id!r} in {self.root}",
            )
        raise SessionError(f"session id {session_id!r} is ambiguous: {', '.join(matches[:5])}")

    def info(self, session_id: str) -> SessionInfo:
        """The session as `--resume` shows it: its prompts after its rewinds (a rewound prompt is gone
        from the transcript, so it is not counted, and the first prompt is the first one left)."""
        loaded = read_events(self.path(session_id) / EVENTS)
        started = next((e.get("ts") for e in loaded.events), None)
        when = datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds") if started else ""
        events = effective_events(loaded.events)
        turns = sum(1 for e in events if is_prompt(e))
        return SessionInfo(session_id, when, first_prompt(events), turns, str(self.path(session_id)))

    def list(self) -> Iterator[SessionInfo]:
        """This person's sessions, the most recently used first."""
        for session_id in self.by_use():
            try:
                if self.sealed(session_id):
                    yield self.info(session_id)
            except SessionError:
                continue
