"""The batch's driver before and after any task runs: what stops it at once (one line, exit 2),
what a batch with nothing left to do prints, a task whose work folder cannot be made, the exit code
of a batch a signal stopped, and what a task's row says of the calls it refused."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from agent_cli.api import Options
from agent_cli.batch import driver
from agent_cli.batch.driver import BatchArgs, run_batch
from agent_cli.batch.results import Row
from agent_cli.batch.tasks import Task
from agent_cli.batch.worker import Interrupt, Open, Plan, run_task
from tests.fakeapi.replies import text, tool_call


def _run(args: BatchArgs) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_batch(args, out, err)
    return code, out.getvalue(), err.getvalue()


def _tasks(tmp_path: Path, *ids: str) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"id": i, "prompt": "x", "repo": "repo"}) + "\n" for i in ids))
    return path


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


def test_no_key_stops_the_batch_before_any_task(tmp_path):
    code, out, err = _run(BatchArgs(_tasks(tmp_path, "a"), tmp_path / "out.jsonl", Options()))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "agent: no API key found: export ANTHROPIC_API_KEY=sk-ant-... (or ANTHROPIC_BASE_URL for a "
        "compatible server) before the batch; every task would fail"
    ]
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.usefixtures("key")
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tasks": Path("missing.jsonl")}, "missing.jsonl: No such file or directory"),
        ({"workers": 0}, "--workers must be at least 1"),
        ({"max_concurrency": 0}, "--max-concurrency must be at least 1"),
        ({"options": Options(permission_mode="sometimes")}, "permission mode 'sometimes'"),
        ({"options": Options(max_turns=0)}, "--max-turns (max_turns) must be at least 1, not 0"),
    ],
)
def test_what_stops_a_batch_at_once_is_one_line(tmp_path, change, message):
    args = BatchArgs(_tasks(tmp_path, "a"), tmp_path / "out.jsonl", Options())
    fields = {**args.__dict__, **change}
    if "tasks" in change:
        fields["tasks"] = tmp_path / change["tasks"]
    code, _, err = _run(BatchArgs(**fields))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("agent: ") and message in lines[0], err


@pytest.mark.usefixtures("key")
def test_a_batch_with_every_task_done_runs_nothing_and_says_so(tmp_path):
    results = tmp_path / "out.jsonl"
    results.write_text(
        json.dumps(Row("a", False, "ok").to_json()) + "\n" + json.dumps(Row("b", True, "no").to_json()) + "\n"
    )
    args = BatchArgs(_tasks(tmp_path, "a", "b"), results, Options(), ray=True)  # Ray is never started

    code, out, _ = _run(args)

    assert code == 0
    assert "agent batch: 0 tasks to run (2 with a result already)" in out
    assert "skipped (a result already) │ 2" in out


def test_a_task_whose_work_folder_cannot_be_made_is_its_error(tmp_path):
    (tmp_path / "work").write_text("a file where the folder would be\n")
    task = Task("t", "x", str(tmp_path / "repo"))

    outcome = run_task(task, Plan(Options(), tmp_path / "work"), Open(), Interrupt())

    assert outcome.row is not None and outcome.row.is_error
    assert "File exists" in outcome.row.result


class Signalled:
    """An engine whose run is cut short by `signum`, as a batch's is by Ctrl+C or a `kill`."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def start(self) -> None:
        return None

    def describe(self) -> str:
        return "a test engine"

    def run(self, tasks, emit, stop) -> None:
        os.kill(os.getpid(), self.signum)  # the batch's own handler takes it


@pytest.mark.usefixtures("key")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_batch_exits_128_plus_the_signal(tmp_path, monkeypatch, signum, code):
    monkeypatch.setattr(driver, "_engine", lambda args: Signalled(signum))
    exit_code, _, err = _run(BatchArgs(_tasks(tmp_path, "a"), tmp_path / "out.jsonl", Options()))
    assert exit_code == code and "batch stopped" in err


def test_a_tasks_row_lists_its_permission_denials_as_p_does(tmp_path, fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True
        )
    fake_anthropic.push(tool_call("bash", {"command": "rm -rf build"}, id="toolu_rm"), text("Could not."))

    outcome = run_task(
        Task("t", "clean up", str(repo)), Plan(Options(), tmp_path / "work"), Open(), Interrupt()
    )

    assert outcome.row is not None and not outcome.row.is_error, outcome.row
    (denial,) = outcome.row.permission_denials
    assert (denial["tool_name"], denial["tool_use_id"], denial["tool_input"]) == (
        "Bash",
        "toolu_rm",
        {"command": "rm -rf build"},
    )
