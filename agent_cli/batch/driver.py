"""`agent batch TASKS.jsonl -o RESULTS.jsonl`: read the tasks, leave out those with a result already,
run the rest on an engine (local worker processes, or Ray), append each result as it ends, and
print the summary — also after Ctrl+C, with what was done so far."""

from __future__ import annotations

import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agent_cli.batch.engine import (
    BatchError,
    Died,
    Engine,
    EngineEvent,
    Finished,
    Started,
    StopRequest,
    Waiting,
)
from agent_cli.batch.progress import Progress
from agent_cli.batch.results import ResultsFile, Row, read_results
from agent_cli.batch.summary import print_summary, summarize
from agent_cli.batch.tasks import read_tasks
from agent_cli.batch.worker import Plan
from agent_cli.core.errors import AgentError
from agent_cli.session.signals import exit_code

if TYPE_CHECKING:
    from agent_cli.api import Options

DEFAULT_WORKERS = 4


@dataclass(frozen=True)
class BatchArgs:
    tasks: Path
    results: Path
    options: Options
    workers: int | None = None
    max_concurrency: int | None = None
    ray: bool = False
    ray_address: str | None = None
    workdir: Path | None = None
    retry_failed: bool = False
    live: bool | None = None  # the live line: on a terminal unless said


def default_workdir(results: Path) -> Path:
    """Beside the results file: RESULTS.jsonl -> RESULTS.work/ (a checkout per task)."""
    return results.with_name(results.stem + ".work")


def run_batch(args: BatchArgs, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the batch; the exit code (0 all done, 1 a task failed or a line was bad, 2 it could not
    start, 128 + N stopped by signal N: 130 Ctrl+C, 143 SIGTERM)."""
    out, err = out or sys.stdout, err or sys.stderr
    started = time.monotonic()
    try:
        tasks = read_tasks(args.tasks)
        earlier = read_results(args.results)
        _check_options(args.options, args.tasks.resolve().parent)
        engine = _engine(args)
        for problem in (*tasks.problems, *earlier.problems):
            print(f"agent: {problem}", file=err)
        todo = [t for t in tasks.tasks if not earlier.skip(t.id, retry_failed=args.retry_failed)]
        skipped = len(tasks.tasks) - len(todo)
        if todo:
            engine.start()
    except OSError as exc:
        print(f"agent: {getattr(exc, 'filename', '') or args.tasks}: {exc.strerror or exc}", file=err)
        return 2
    except (BatchError, AgentError) as exc:  # Ray unavailable, a bad option, no key: one line
        print(f"agent: {exc}", file=err)
        return 2
    print(
        f"agent batch: {len(todo)} task{'s' if len(todo) != 1 else ''} to run"
        f" ({skipped} with a result already) on {engine.describe()}",
        file=out,
        flush=True,
    )
    rows: list[Row] = []
    interrupted = 0
    stop = StopRequest().install()
    results = ResultsFile(args.results) if todo else None
    try:
        with Progress(len(todo), out, live=args.live) as progress:

            def emit(event: EngineEvent) -> None:
                nonlocal interrupted
                if isinstance(event, Started):
                    progress.started(event.task_id)
                elif isinstance(event, Waiting):
                    progress.waiting(event.task_id)
                elif isinstance(event, Died):
                    progress.died(event.task_id, event.why, event.retrying)
                elif isinstance(event, Finished):
                    row = event.outcome.row
                    if row is None:
                        interrupted += 1
                    else:
                        assert results is not None
                        results.append(row)
                        rows.append(row)
                    progress.finished(event.outcome.task_id, row)

            if todo:
                engine.run(todo, emit, stop)
    finally:
        stop.uninstall()
        if results is not None:
            results.close()
    summary = summarize(
        rows,
        skipped=skipped,
        interrupted=interrupted,
        not_started=len(todo) - len(rows) - interrupted,
        bad_lines=len(tasks.problems),
        wall_ms=round((time.monotonic() - started) * 1000),
    )
    print_summary(summary, out)
    print(f"results: {args.results}", file=out, flush=True)
    if stop.count:
        print(
            "agent: batch stopped; run it again to go on (interrupted tasks resume their sessions)", file=err
        )
        return exit_code(stop.signum or signal.SIGINT)  # as `agent -p` and a shell report it
    return 1 if summary.failed or tasks.problems else 0


def _check_options(options: Options, where: Path) -> None:
    """The batch's own options, checked once before any task (a bad mode, no key)."""
    from agent_cli.api.options import has_key, prepare

    prepared = prepare(replace(options, cwd=where))
    if not has_key(prepared.config):
        raise BatchError(
            "no API key found: export ANTHROPIC_API_KEY=sk-ant-... (or ANTHROPIC_BASE_URL for a "
            "compatible server) before the batch; every task would fail"
        )


def _engine(args: BatchArgs) -> Engine:
    plan = Plan(args.options, (args.workdir or default_workdir(args.results)).resolve())
    if args.workers is not None and args.workers < 1:
        raise BatchError("--workers must be at least 1")
    if args.max_concurrency is not None and args.max_concurrency < 1:
        raise BatchError("--max-concurrency must be at least 1")
    if args.ray or args.ray_address:
        from agent_cli.batch.ray_engine import RayEngine

        return RayEngine(
            plan,
            cpus=args.workers or DEFAULT_WORKERS,
            address=args.ray_address,
            max_concurrency=args.max_concurrency,
            cap=args.workers,
        )
    from agent_cli.batch.local import LocalEngine

    return LocalEngine(plan, args.workers or DEFAULT_WORKERS, args.max_concurrency)
