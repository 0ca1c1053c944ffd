"""`--ray`: each task a Ray task, on a local Ray started here (`--workers` CPUs) or on the cluster at
`--ray-address` (`ray://head:10001` for Ray Client, or a cluster's `host:6379`).

One Ray task per agent task, declaring `num_cpus`; at most as many in flight as the cluster has
CPUs for them (so a stop leaves the rest unstarted), their results streamed back with `ray.wait` as
each ends. Ray's own retries are off: a task whose worker dies is reported, then submitted once
more; dying twice is the task's error. Nothing is shared but what the driver writes (the results
file). `--max-concurrency` is a small async actor holding the slots, keyed by task, so the driver can
free the slot of a task that died or was cancelled.

Ray is imported only here, and only when the batch asks for it. The workers must have `agent`
installed and the provider's key in their environment: a local Ray's workers inherit this process's.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent_cli.batch.engine import BatchError, Died, Emit, Finished, Started, StopRequest, died_row
from agent_cli.batch.tasks import Task
from agent_cli.batch.worker import Outcome, Plan, execute, slot_key

POLL_SECONDS = 0.5  # how often a wait for results looks at Ctrl+C (Ray's wait cannot be woken)
SETTLE_SECONDS = 120.0  # after a stop: how long interrupted tasks may take to hand back


class RayUnavailable(BatchError):
    """Ray is not installed, or the cluster does not answer: one line to the person."""


class Slots:
    """The `--max-concurrency` slots, as a Ray actor (async: a waiting acquire does not block the
    others). A key the driver gave up on (its task died or was cancelled) is never held again."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.holders: set[str] = set()
        self.abandoned: set[str] = set()
        self.changed = asyncio.Condition()

    async def acquire(self, key: str) -> bool:
        async with self.changed:
            await self.changed.wait_for(lambda: key in self.abandoned or len(self.holders) < self.count)
            if key in self.abandoned:
                return False
            self.holders.add(key)
            return True

    async def release(self, key: str) -> None:
        async with self.changed:
            self.holders.discard(key)
            self.changed.notify_all()

    async def abandon(self, key: str) -> None:
        async with self.changed:
            self.abandoned.add(key)
            self.holders.discard(key)
            self.changed.notify_all()


class ActorGate:
    """A task's side of the Slots actor (runs inside the Ray task)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    def acquire(self, key: str) -> bool:
        import ray

        return bool(ray.get(self.actor.acquire.remote(key)))

    def release(self, key: str) -> None:
        import ray

        ray.get(self.actor.release.remote(key))


def check_address(address: str, timeout: float = 5.0) -> None:
    """RayUnavailable when nothing answers at `address` (checked before Ray's own connect, which
    retries for a long while)."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    host, port = parts.hostname, parts.port
    if not host:
        raise RayUnavailable(f"--ray-address {address!r}: give ray://HOST:PORT or HOST:PORT")
    port = port or (10001 if address.startswith("ray://") else 6379)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayUnavailable(f"the Ray cluster at {address} does not answer ({reason})") from None


@dataclass
class RayEngine:
    plan: Plan
    cpus: int  # a local Ray's CPUs (and the tasks in flight unless the cluster says otherwise)
    address: str | None = None
    max_concurrency: int | None = None
    cap: int | None = None  # --workers given: at most this many in flight on a cluster too
    cpus_per_task: float = 1.0
    _ray: Any = None

    def connect(self) -> Any:
        """Ray, connected: to the cluster at `address`, else a local Ray started now."""
        try:
            import ray
        except ImportError:
            raise RayUnavailable(
                "--ray needs Ray: pip install 'agent-cli[ray]' (from a checkout: pip install -e '.[ray]')"
            ) from None
        if self.address:
            check_address(self.address)
        kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
        try:
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:
                ray.init(address="local", num_cpus=self.cpus, include_dashboard=False, **kwargs)
        except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; the person gets one line
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise RayUnavailable(f"could not start or reach {where}: {first}") from None
        return ray

    def window(self, ray: Any) -> int:
        """How many tasks are in flight at once: as many as the cluster has CPUs for (a local
        Ray's are --workers), or --workers on a cluster when it is given."""
        cluster_cpus = float(ray.cluster_resources().get("CPU", 1))
        fits = max(1, int(cluster_cpus // self.cpus_per_task))
        return min(fits, self.cap) if self.cap else fits

    def start(self) -> None:
        self._ray = self.connect()

    def describe(self) -> str:
        where = f"the Ray cluster at {self.address}" if self.address else f"a local Ray ({self.cpus} CPUs)"
        return f"Ray tasks on {where}"

    def run(self, tasks: Sequence[Task], emit: Emit, stop: StopRequest) -> None:
        ray = self._ray or self.connect()
        try:
            self._run(ray, tasks, emit, stop)
        finally:
            ray.shutdown()
            self._ray = None

    def _run(self, ray: Any, tasks: Sequence[Task], emit: Emit, stop: StopRequest) -> None:
        from ray.exceptions import RayError, TaskCancelledError

        remote = ray.remote(execute).options(num_cpus=self.cpus_per_task, max_retries=0)
        slots = None
        if self.max_concurrency:
            slots = ray.remote(num_cpus=0)(Slots).remote(self.max_concurrency)
        gate = ActorGate(slots) if slots is not None else None
        window = self.window(ray)
        queue: deque[tuple[Task, int]] = deque((task, 1) for task in tasks)
        flight: dict[Any, tuple[Task, int]] = {}
        stopping = forced = False
        settle_left = SETTLE_SECONDS
        while (queue and not stopping) or flight:
            if stop.count and not stopping:
                stopping = True
                queue.clear()
                for ref in flight:
                    ray.cancel(ref, force=False)  # SIGINT in the task: its turn ends, session kept
            if stop.count > 1 and not forced:
                forced = True
                for ref in flight:
                    ray.cancel(ref, force=True)
            while queue and not stopping and len(flight) < window:
                task, attempt = queue.popleft()
                flight[remote.remote(task, self.plan, gate, attempt)] = (task, attempt)
                emit(Started(task.id))
            ready, _ = ray.wait(list(flight), num_returns=1, timeout=POLL_SECONDS)
            stop.drain()
            if stopping and not ready:
                settle_left -= POLL_SECONDS
                if settle_left <= 0:  # they do not hand back: no longer waited for
                    for task, _ in flight.values():
                        emit(Finished(Outcome(task.id, None)))
                    return
            for ref in ready:
                task, attempt = flight.pop(ref)
                try:
                    outcome: Outcome = ray.get(ref)
                except TaskCancelledError:
                    outcome = Outcome(task.id, None)
                except RayError as exc:
                    why = _first_line(exc)
                    if slots is not None:
                        slots.abandon.remote(slot_key(task.id, attempt))
                    if stopping:
                        outcome = Outcome(task.id, None)
                    elif attempt == 1:
                        emit(Died(task.id, why, retrying=True))
                        queue.appendleft((task, 2))
                        continue
                    else:
                        emit(Died(task.id, why, retrying=False))
                        outcome = Outcome(task.id, died_row(task, why, attempt))
                emit(Finished(outcome))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
