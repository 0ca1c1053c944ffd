"""What the engines (local worker processes, Ray) tell the driver, and how the driver tells them to
stop. The driver alone writes the results file; an engine only reports."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.batch.results import Row
from agent_cli.batch.tasks import Task
from agent_cli.batch.worker import Outcome


class BatchError(Exception):
    """The batch cannot start: one line to the person."""


@dataclass(frozen=True)
class Started:
    task_id: str


@dataclass(frozen=True)
class Finished:
    outcome: Outcome


@dataclass(frozen=True)
class Died:
    """The process running a task ended under it (killed, out of memory, its node lost)."""

    task_id: str
    why: str
    retrying: bool


@dataclass(frozen=True)
class Waiting:
    """The task's agent waits for a free slot (`--max-concurrency`)."""

    task_id: str


EngineEvent = Started | Finished | Died | Waiting
Emit = Callable[[EngineEvent], None]


class Engine(Protocol):
    def start(self) -> None:
        """Get ready (Ray: connect, or start a local one); raises what the person must be told."""
        ...

    def describe(self) -> str: ...

    def run(self, tasks: Sequence[Task], emit: Emit, stop: StopRequest) -> None:
        """Run the tasks, each once (a task whose process died is run once more), reporting as
        they go; on `stop`, start no new task and interrupt the running ones."""
        ...


class StopRequest:
    """Ctrl+C (SIGINT) and SIGTERM, counted: the first stops the batch gently (running tasks are
    interrupted, their sessions kept), a second at once. Each signal also writes a byte to a socket
    the engines wait on, so a wait ends when one comes. `signum` is the first signal's (the batch
    exits 128 + it)."""

    def __init__(self) -> None:
        self.count = 0
        self.signum: int | None = None
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._previous: dict[int, Any] = {}

    def install(self) -> StopRequest:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):
                self._previous[sig] = signal.signal(sig, self._received)
        return self

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
        self._previous.clear()
        self._read.close()
        self._write.close()

    def _received(self, signum: int, frame: object) -> None:
        if self.signum is None:
            self.signum = signum
        self.request()

    def request(self) -> None:
        self.count += 1
        with contextlib.suppress(OSError):
            self._write.send(b"x")

    def fileno(self) -> int:
        return self._read.fileno()

    def drain(self) -> None:
        with contextlib.suppress(OSError):
            while self._read.recv(64):
                pass


def died_row(task: Task, why: str, attempts: int) -> Row:
    message = f"the process running it died twice ({why})" if attempts > 1 else f"its process died ({why})"
    return Row(
        task.id, True, message, repo=task.repo, branch=task.branch, attempts=attempts, errors=(message,)
    )
