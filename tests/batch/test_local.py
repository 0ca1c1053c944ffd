"""The local engine's driver loop, with real worker processes: a stop that comes while a task's answer
is being read hands out no further task (the answer of a worker interrupted by the same Ctrl+C used
to start the next task, which then counted as interrupted instead of not started)."""

from __future__ import annotations

from agent_cli.api import Options
from agent_cli.batch.engine import Finished, Started, StopRequest
from agent_cli.batch.local import LocalEngine
from agent_cli.batch.tasks import Task
from agent_cli.batch.worker import Plan


def test_a_stop_that_comes_with_a_tasks_answer_starts_nothing_more(tmp_path):
    (tmp_path / "work").write_text("a file where the folder would be: every task ends at once\n")
    engine = LocalEngine(Plan(Options(), tmp_path / "work"), workers=1)
    tasks = [Task(name, "x", str(tmp_path / "repo")) for name in ("a", "b", "c")]
    stop = StopRequest()
    started: list[str] = []
    finished: list[str] = []

    def emit(event: object) -> None:
        if isinstance(event, Started):
            started.append(event.task_id)
        elif isinstance(event, Finished):
            finished.append(event.outcome.task_id)
            stop.request()  # Ctrl+C lands while this answer is being read

    try:
        engine.run(tasks, emit, stop)
    finally:
        stop.uninstall()

    assert started == ["a"] and finished == ["a"]
