"""The default engine: N worker processes on this machine (processes, not threads: each task is a
whole agent with its own event loop, signals and child processes).

Each worker has a pipe to the driver. The driver hands it a task, and the worker answers with the
task's Outcome; with `--max-concurrency`, the worker asks the driver for a slot before its agent
starts and the driver grants slots as a semaphore would — held by the driver, so a worker that dies
holding one cannot leak it. A worker that dies under a task (its exit is seen on its sentinel) is
reported, and the task runs once more in a new worker; dying twice is the task's error.

On a stop the driver sends no new task, interrupts each running worker with SIGINT (its session's turn
ends as with Esc) and waits for their answers; a second stop kills them.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from agent_cli.batch.engine import Died, Emit, Finished, Started, StopRequest, Waiting, died_row
from agent_cli.batch.tasks import Task
from agent_cli.batch.worker import Interrupt, Open, Outcome, Plan, run_task


class PipeGate:
    """A worker's side of the driver's slots."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def acquire(self, key: str) -> bool:
        try:
            self.conn.send(("want", key))
            answer = self.conn.recv()
        except (EOFError, OSError):
            return False
        return answer[0] == "grant"

    def release(self, key: str) -> None:
        return None  # the driver frees the slot with the task's answer


def worker_main(conn: Connection, plan: Plan, capped: bool) -> None:
    """A worker process: tasks from the pipe until told to stop, or the driver is gone."""
    stop = Interrupt().install()
    gate = PipeGate(conn) if capped else Open()
    while not stop.requested:
        try:
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if message[0] != "task":
            return
        _, task, attempt = message
        outcome = run_task(task, plan, gate, stop, attempt)
        try:
            conn.send(("done", outcome))
        except OSError:
            return


@dataclass
class _Worker:
    process: Any  # multiprocessing's SpawnProcess
    conn: Connection
    task: Task | None = None
    attempt: int = 1
    holding: bool = False  # a slot the driver granted
    waiting: bool = False  # asked for a slot, not granted yet
    answered: bool = False


@dataclass
class LocalEngine:
    plan: Plan
    workers: int
    max_concurrency: int | None = None
    _live: list[_Worker] = field(default_factory=list)

    def start(self) -> None:
        return None

    def describe(self) -> str:
        return f"{self.workers} worker process{'es' if self.workers != 1 else ''}"

    def run(self, tasks: Sequence[Task], emit: Emit, stop: StopRequest) -> None:
        ctx = multiprocessing.get_context("spawn")
        queue: deque[tuple[Task, int]] = deque((task, 1) for task in tasks)
        slots = self.max_concurrency
        waiting: deque[_Worker] = deque()
        stopping = killed = False

        def start_worker() -> None:
            ours, theirs = ctx.Pipe()
            process = ctx.Process(
                target=worker_main, args=(theirs, self.plan, slots is not None), name="agent-batch-worker"
            )
            process.daemon = True  # never outlives the driver
            process.start()
            theirs.close()
            self._live.append(_Worker(process, ours))

        def give_work(worker: _Worker) -> None:
            # `stop.count`, not `stopping` (set only on the next pass): a task's answer read in the
            # same wake-up as Ctrl+C (its worker was interrupted by the same signal) hands out nothing
            if queue and not stop.count:
                task, attempt = queue.popleft()
                worker.task, worker.attempt, worker.answered = task, attempt, False
                worker.conn.send(("task", task, attempt))
                emit(Started(task.id))
            else:
                worker.task = None
                _send(worker.conn, ("stop",))

        def free_slot(worker: _Worker) -> None:
            nonlocal slots
            if worker.holding and slots is not None:
                worker.holding = False
                slots += 1
            if worker in waiting:
                waiting.remove(worker)
            worker.waiting = False
            grant()

        def grant() -> None:
            nonlocal slots
            while slots and waiting and not stopping:
                worker = waiting.popleft()
                worker.waiting, worker.holding = False, True
                slots -= 1
                _send(worker.conn, ("grant",))

        for _ in range(min(self.workers, len(queue))):
            start_worker()
        for worker in list(self._live):
            give_work(worker)
        while self._live:
            if stop.count and not stopping:
                stopping = True
                queue.clear()
                for worker in self._live:
                    if worker.task is None:
                        _send(worker.conn, ("stop",))
                    elif worker.waiting:
                        _send(worker.conn, ("stop",))
                    else:
                        _signal(worker, signal.SIGINT)
            if stop.count > 1 and not killed:
                killed = True
                for worker in self._live:
                    _signal(worker, signal.SIGKILL)
            by_fd: dict[Any, _Worker] = {}
            for worker in self._live:
                by_fd[worker.conn] = worker
                by_fd[worker.process.sentinel] = worker
            ready = wait([*by_fd, stop])
            if stop in ready:
                stop.drain()
            for obj in ready:  # answers first: a worker that answered and left is not a death
                worker = by_fd.get(obj)
                if worker is not None and obj is worker.conn:
                    self._read(worker, emit, waiting, free_slot, give_work)
            for obj in ready:
                worker = by_fd.get(obj)
                if worker is not None and obj is not worker.conn and worker in self._live:
                    while worker.conn.poll():  # what it said before it ended
                        if not self._read(worker, emit, waiting, free_slot, give_work):
                            break
                    self._ended(worker, emit, queue, stopping, free_slot)
                    if queue and not stop.count and len(self._live) < self.workers:
                        start_worker()
                        give_work(self._live[-1])
            grant()

    def _read(self, worker: _Worker, emit: Emit, waiting: deque, free_slot: Any, give_work: Any) -> bool:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            return False
        if message[0] == "want":
            worker.waiting = True
            waiting.append(worker)
            if len(waiting) > (self.max_concurrency or 0) - self._held() and worker.task is not None:
                emit(Waiting(worker.task.id))  # no slot free now: said once, it goes on when one is
        elif message[0] == "done":
            outcome: Outcome = message[1]
            worker.answered = True
            free_slot(worker)
            emit(Finished(outcome))
            give_work(worker)
        return True

    def _held(self) -> int:
        return sum(1 for worker in self._live if worker.holding)

    def _ended(self, worker: _Worker, emit: Emit, queue: deque, stopping: bool, free_slot: Any) -> None:
        worker.process.join()
        self._live.remove(worker)
        free_slot(worker)
        worker.conn.close()
        task = worker.task
        if task is None or worker.answered:
            return
        code = worker.process.exitcode
        why = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        if stopping:
            emit(Finished(Outcome(task.id, None)))  # stopped: interrupted, like the rest
        elif worker.attempt == 1:
            emit(Died(task.id, why, retrying=True))
            queue.appendleft((task, 2))
        else:
            emit(Died(task.id, why, retrying=False))
            emit(Finished(Outcome(task.id, died_row(task, why, worker.attempt))))


def _send(conn: Connection, message: tuple) -> None:
    try:
        conn.send(message)
    except OSError:
        pass  # it is gone: its sentinel says so


def _signal(worker: _Worker, sig: int) -> None:
    pid = worker.process.pid
    if pid is not None and worker.process.is_alive():
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
