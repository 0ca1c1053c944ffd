"""The session's background shells: `bash` with `run_in_background` starts one here.

A shell is started as bash starts a command (tools/bash.py: the same sandbox, process group, scrubbed
environment and process record) and runs until it exits, `kill_shell` ends it, or the session ends
(`close`/`aclose`; after a `kill -9` of the agent the sandbox's --die-with-parent or the next start's
reaping does: a confined shell counts as started only once its command runs inside bwrap, when every
bwrap process has armed --die-with-parent). Its output streams into the session store under its id
(output.py), so `recall` has every byte; the model reads what is new with `bash_output` (tools.py).
The front ends see the shells as `core.events.ShellInfo` values and are told of every start and end
by a `ShellsChanged` event.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from agent_cli.core.errors import ToolError
from agent_cli.core.events import ShellInfo, ShellsChanged
from agent_cli.tools.base import ProcessRecorder, ToolContext, ToolResult
from agent_cli.tools.bash import DRAIN_GRACE, TERM_GRACE, Capture, kill_group, signal_name, spawn
from agent_cli.tools.sandbox.bwrap import Launch
from agent_cli.tools.shells.output import ShellOutput

ID_PREFIX = "bash_"
SWEEP_SECONDS = 1.0  # how often a running confined shell's protected paths are looked at
SANDBOX_START_WAIT = 5.0  # seconds a confined shell may take to start its command inside bwrap
_ID = re.compile(rf"^{ID_PREFIX}(\d+)$")
PROC = Path("/proc")
Listener = Callable[[ShellsChanged], None]


@runtime_checkable
class PathStore(Protocol):
    """A store whose refs are files (context/store.py's DirStore): a shell writes straight into one."""

    def path(self, ref: str) -> Path: ...

    def refs(self) -> list[str]: ...


@dataclass
class Shell:
    id: str
    command: str
    description: str
    pgid: int
    output: ShellOutput
    transport: asyncio.SubprocessTransport
    capture: Capture
    processes: ProcessRecorder | None
    settle: Callable[[], str] | None  # the sandbox's look at protected paths, once it has ended
    sweep: Callable[[], str] | None  # the same look while it runs
    started_at: float
    status: str = "running"  # running | exited | killed
    exit_code: int | None = None
    cursor: int = 0  # how far the model has read (bash_output)
    final_read: bool = False  # the model has read it to the end after it ended
    told_end: bool = False  # a reminder (or the model's own read) has said that it ended
    kill_requested: bool = False
    note: str = ""  # what the sandbox set aside while it ran or after it
    note_told: int = 0  # how much of `note` bash_output has said
    watcher: asyncio.Task | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def info(self) -> ShellInfo:
        return ShellInfo(
            self.id,
            self.command,
            self.description,
            self.status,  # type: ignore[arg-type]
            self.exit_code,
            self.output.total,
            self.output.dropped,
            self.started_at,
        )

    def status_text(self) -> str:
        if self.status == "running":
            return "running"
        if self.status == "killed":
            return "killed"
        code = self.exit_code
        return f"exited with code {code}" if code is not None and code >= 0 else signal_name(code)


class ShellManager:
    """Implements tools.base.ShellStarter, and agent.api.BackgroundShells for the front ends."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._shells: dict[str, Shell] = {}
        self._count = 0
        self._listeners: list[Listener] = []

    # -- starting ----------------------------------------------------------------------------------
    async def start(self, command: str, ctx: ToolContext, launch: Launch, description: str) -> ToolResult:
        store = ctx.store
        if not isinstance(store, PathStore):
            raise ToolError("background shells need a session directory to keep their output in")
        shell_id = self._next_id(store)
        try:
            output = ShellOutput(store.path(shell_id), ctx.limits.ceiling_chars)
        except (OSError, ValueError) as exc:
            raise ToolError(f"cannot keep a background shell's output: {exc}") from exc
        capture = Capture(output.feed_bytes)
        try:
            transport, _ = await spawn(command, ctx, capture, launch.prefix, launch.seccomp)
        except OSError as exc:
            output.finish()
            output.path.unlink(missing_ok=True)  # nothing ran: no empty ref is left for recall
            raise ToolError(f"could not start the command: {exc}") from exc
        pgid = transport.get_pid()
        sandbox = ctx.sandbox
        confined = launch.confined and sandbox is not None
        if confined:  # started only once the sandbox is up: then it dies with the agent, even by kill -9
            await _command_running(pgid, capture)
        if ctx.processes is not None:
            ctx.processes.started(pgid, command)
        settle = (lambda: sandbox.settle(launch)) if confined else None
        sweep = (lambda: sandbox.sweep(launch)) if confined else None
        shell = Shell(
            shell_id,
            command,
            description,
            pgid,
            output,
            transport,
            capture,
            ctx.processes,
            settle,
            sweep,
            self.clock(),
        )
        self._shells[shell_id] = shell
        shell.watcher = asyncio.ensure_future(self._watch(shell))
        self._changed()
        meta = {
            "background_shell": shell_id,
            "command": command,
            "exit_code": None,
            "sandboxed": launch.confined,
        }
        return ToolResult(output=started_text(shell_id), meta=meta)

    def _next_id(self, store: PathStore) -> str:
        """bash_N, past every bash_N this session's store already holds (an earlier run's shells)."""
        stored = [int(m.group(1)) for ref in store.refs() if (m := _ID.match(ref))]
        self._count = max([self._count, *stored]) + 1
        return f"{ID_PREFIX}{self._count}"

    async def _watch(self, shell: Shell) -> None:
        exited = asyncio.ensure_future(shell.capture.exited.wait())
        while not exited.done():
            await asyncio.wait({exited}, timeout=SWEEP_SECONDS)
            if not exited.done() and shell.sweep is not None:  # a protected path it made goes now,
                with contextlib.suppress(OSError):  # not when it ends: it may run for hours
                    shell.note = "\n".join(n for n in (shell.note, shell.sweep()) if n)
        with contextlib.suppress(TimeoutError):  # children it left may hold the pipe a moment longer
            await asyncio.wait_for(shell.capture.eof.wait(), DRAIN_GRACE)
        self._ended(shell, shell.transport.get_returncode())

    def _ended(self, shell: Shell, code: int | None) -> None:
        if not shell.running:
            return
        shell.status = "killed" if shell.kill_requested else "exited"
        shell.exit_code = code
        with contextlib.suppress(Exception):  # after the event loop closed (the TUI's quit), too
            shell.transport.close()
        if shell.processes is not None:
            shell.processes.ended(shell.pgid)
        if shell.settle is not None:
            with contextlib.suppress(OSError):
                shell.note = "\n".join(n for n in (shell.note, shell.settle()) if n)
        shell.output.finish()
        self._changed()

    # -- what the tools and the front ends read ------------------------------------------------------
    def get(self, shell_id: str) -> Shell | None:
        return self._shells.get(shell_id.strip())

    def running(self) -> list[Shell]:
        return [s for s in self._shells.values() if s.running]

    def all(self) -> list[Shell]:
        return list(self._shells.values())

    def list(self) -> list[ShellInfo]:
        return [s.info() for s in self._shells.values()]

    def tail(self, shell_id: str, chars: int = 8_000) -> str:
        """The last `chars` of a shell's output (the UI's view: the model's reading is not moved)."""
        shell = self.get(shell_id)
        if shell is None:
            return f"no background shell {shell_id!r}"
        return shell.output.text(max(0, shell.output.total - chars))

    def unknown(self, shell_id: str, store: object) -> str:
        """The line for an id this session has no shell under."""
        known = ", ".join(s.id for s in self._shells.values()) or "none"
        line = f"no background shell {shell_id!r} (this session's shells: {known})"
        if isinstance(store, PathStore) and shell_id in store.refs():
            line += (
                f"; {shell_id} belonged to an earlier run of this session and ended with it: its output "
                f"is kept, recall ref {shell_id}"
            )
        return line

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with a ShellsChanged at every start and end; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self) -> None:
        event = ShellsChanged(tuple(self.list()))
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a front end's trouble never stops a shell's end
                listener(event)

    # -- ending ------------------------------------------------------------------------------------
    async def kill(self, shell_id: str, store: object = None) -> tuple[str, bool]:
        """End a shell's process group (SIGTERM, then SIGKILL): (the line to show, whether it was running)."""
        shell = self.get(shell_id)
        if shell is None:
            return self.unknown(shell_id, store), False
        if not shell.running:
            return f"{shell.id} has already finished ({shell.status_text()}): there is nothing to kill", False
        shell.kill_requested = True
        await kill_group(shell.pgid, shell.capture)
        deadline = time.monotonic() + TERM_GRACE  # SIGKILL was sent: its members are on their way out
        while group_alive(shell.pgid) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if shell.watcher is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(shell.watcher), DRAIN_GRACE + 1)
        self._ended(shell, shell.transport.get_returncode())
        return f"Killed {shell.id} ({one_line(shell.command)}).", True

    async def aclose(self) -> None:
        """The session ends (on its event loop): every running shell is killed."""
        await asyncio.gather(*(self.kill(s.id) for s in self.running()))

    def close(self) -> None:
        """The session ends, perhaps after its event loop has gone (the TUI's quit): every running
        shell's group gets SIGTERM, and SIGKILL if it is still there after the grace period."""
        shells = self.running()
        for shell in shells:
            shell.kill_requested = True
            _signal(shell.pgid, signal.SIGTERM)
        _wait_gone([s.pgid for s in shells])
        for shell in shells:
            _signal(shell.pgid, signal.SIGKILL)  # what is left; then wait until it is gone too
        _wait_gone([s.pgid for s in shells])
        for shell in shells:
            self._ended(shell, None)


def started_text(shell_id: str) -> str:
    return (
        f"Command running in background with ID: {shell_id}\n"
        f'Read its new output with bash_output(bash_id="{shell_id}") (filter= keeps the matching lines), '
        f'stop it with kill_shell(shell_id="{shell_id}"). All it prints is kept: recall ref {shell_id}.'
    )


def one_line(command: str, limit: int = 80) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    return first[: limit - 1] + "…" if len(first) > limit or first != command.strip() else first


def _wait_gone(pgids: list[int]) -> None:
    """Until no process of these groups runs, at most TERM_GRACE (for a caller without an event loop)."""
    deadline = time.monotonic() + TERM_GRACE
    while any(group_alive(pgid) for pgid in pgids) and time.monotonic() < deadline:
        time.sleep(0.02)


def _signal(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int, proc: Path = PROC) -> bool:
    """Whether a process of group `pgid` still runs (a zombie does not)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(True for _ in _members(pgid, proc))


def command_started(pgid: int, proc: Path = PROC) -> bool:
    """Whether a confined command's process group runs a process that is not bwrap. bwrap starts the
    command last, after each of its own processes armed --die-with-parent; each arms it only once it
    is forked, so a kill -9 of the agent before then can leave bwrap's inner process running, adopted
    by init, with the command in it (`start` waits for this before recording a confined shell)."""
    return any(name != "bwrap" for name in _members(pgid, proc))


def _members(pgid: int, proc: Path) -> Iterator[str]:
    """The names (comm) of the live processes of group `pgid` (zombies left out), from /proc."""
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue  # gone meanwhile
        end = raw.rfind(")")
        fields = raw[end + 2 :].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            yield raw[raw.find("(") + 1 : end]


async def _command_running(pgid: int, capture: Capture) -> None:
    """Until a confined shell's command runs inside bwrap (`command_started`),
    it ended, or SANDBOX_START_WAIT passed."""
    deadline = time.monotonic() + SANDBOX_START_WAIT
    while not capture.exited.is_set() and time.monotonic() < deadline:
        if command_started(pgid):
            return
        await asyncio.sleep(0.005)
