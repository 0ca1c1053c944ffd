"""`agent batch`: many headless tasks over scratch repositories, each in a checkout of its own, through
the real CLI against the local Messages-API server — on local worker processes and on a local Ray
(started by the batch, 2 CPUs). The server answers each task from its own route (its prompt's
marker), so the tasks' requests can arrive in any order."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.e2e import AGENT, anthropic_env, run_agent, user_config
from tests.fakeapi.replies import Fault, Stall, rate_limited, text, tool_call
from tests.fakeapi.server import FakeAnthropic

try:
    import ray  # noqa: F401

    HAVE_RAY = True
except ImportError:
    HAVE_RAY = False

ENGINES = [
    pytest.param(["--workers", "3"], id="local"),
    pytest.param(
        ["--ray", "--workers", "2"],
        id="ray",
        marks=pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e '.[ray]')"),
    ),
]
TIMEOUT = 600


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text(f"# {path.name}\n")
    _git(path, "add", ".")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return path


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def write_tasks(path: Path, tasks: list[dict | str]) -> None:
    path.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in tasks))


def results(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


def batch(root: Path, server: FakeAnthropic, *args: str) -> subprocess.CompletedProcess:
    return run_agent(root, anthropic_env(root, server), "batch", *args, timeout=TIMEOUT)


def table(stdout: str, key: str) -> str:
    """A value of the summary table."""
    found = re.search(rf"{re.escape(key)}\s*│\s*([^│]*?)\s*│", stdout)
    assert found, f"no {key!r} in the summary:\n{stdout}"
    return found.group(1)


KILL = tool_call("bash", {"command": "kill -9 $PPID"})  # the process running the task (sandbox off)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_batch_of_12_tasks_over_3_repos_then_a_second_run_skips_them(tmp_path, fake_anthropic, engine):
    """11 tasks write a file each, t07 fails (the API refuses it), t04's first try kills the
    process running it (that is said, and the task runs once more), and t02 is rate-limited once
    (it backs off by itself, as with -p)."""
    server = fake_anthropic
    repos = [make_repo(tmp_path / f"repo{n}") for n in (1, 2, 3)]
    user_config(tmp_path, '[sandbox]\nmode = "off"\n')  # so bash is the task's process's child
    tasks: list[dict | str] = []
    for n in range(12):
        task_id = f"t{n:02d}"
        tasks.append({"id": task_id, "prompt": f"[{task_id}] add {task_id}.txt", "repo": repos[n % 3].name})
        if task_id == "t07":  # the deliberate failure: the API refuses its request
            server.route(f"[{task_id}]", Fault(400, "invalid_request_error", "t07 is meant to fail"))
        else:
            content = f"made by {task_id}\n"
            server.route(
                f"[{task_id}]",
                *([KILL] if task_id == "t04" else []),
                *([rate_limited(retry_after=0)] if task_id == "t02" else []),
                tool_call("write_file", {"path": f"{task_id}.txt", "content": content}),
                text(f"{task_id} is done"),
            )
    tasks.insert(5, '{"id": "broken", "prompt": ')  # line 6: not a task
    write_tasks(tmp_path / "tasks.jsonl", tasks)
    allow = ("--permission-mode", "acceptEdits", "--allowed-tools", "Bash(kill:*)")
    args = ("tasks.jsonl", "-o", "results.jsonl", *allow, *engine)

    done = batch(tmp_path, server, *args)

    assert done.returncode == 1, done.stdout + done.stderr  # a task failed, a line was bad
    assert "tasks.jsonl line 6: not JSON" in done.stderr
    rows = results(tmp_path / "results.jsonl")
    assert sorted(rows) == [f"t{n:02d}" for n in range(12)]
    failed = rows.pop("t07")
    assert failed["is_error"] is True and "t07 is meant to fail" in failed["result"]
    assert re.search(r"✗ t07 .*t07 is meant to fail", done.stdout)
    assert re.search(r"! t04  its process died \(.+\); running it once more", done.stdout), done.stdout
    assert rows["t04"]["attempts"] == 2
    assert [r for r in server.statuses if r == 429] == [429]  # t02's, backed off inside its task
    for task_id, row in rows.items():
        repo = repos[int(task_id[1:]) % 3]
        assert row["is_error"] is False and row["result"] == f"{task_id} is done", row
        assert row["branch"] == f"agent/batch/{task_id}" and row["num_turns"] == 2
        assert row["diff_stat"] == "1 file changed, 1 insertion(+)"
        assert row["usage"]["output_tokens"] > 0 and row["total_cost_usd"] > 0 and row["duration_ms"] > 0
        # the work is committed on the task's branch of its repository, not in the repository's checkout
        assert _git(repo, "show", f"{row['branch']}:{task_id}.txt") == f"made by {task_id}\n"
        assert _git(repo, "rev-parse", row["branch"]).strip() == row["commit"]
        assert Path(row["worktree"]).parent == tmp_path / "results.work"
        assert Path(row["session_dir"], "events.jsonl").is_file()
        assert ".agent" not in _git(
            repo, "show", "--stat", "--format=", row["branch"]
        )  # no session committed
    for repo in repos:
        assert _git(repo, "branch", "--show-current").strip() == "main"
        assert _git(repo, "status", "--porcelain") == ""  # the person's checkout is untouched
    assert table(done.stdout, "done") == "11"
    assert table(done.stdout, "failed") == "1  (t07)"
    assert table(done.stdout, "bad lines") == "1"
    assert "$" in table(done.stdout, "cost") and "%" in table(done.stdout, "cache hit")
    assert re.fullmatch(r"[\d.]+ s / [\d.]+ s", table(done.stdout, "time p50 / p95"))

    asked = len(server.requests)
    lines = (tmp_path / "results.jsonl").read_text().count("\n")
    again = batch(tmp_path, server, *args)

    assert "0 tasks to run (12 with a result already)" in again.stdout, again.stdout + again.stderr
    assert table(again.stdout, "skipped (a result already)") == "12"
    assert len(server.requests) == asked  # nothing ran again
    assert (tmp_path / "results.jsonl").read_text().count("\n") == lines


def test_bad_tasks_are_their_own_errors_and_the_rest_runs(tmp_path, fake_anthropic):
    """A repository URL that cannot be cloned, a path that is no repository, an option a task may
    not set: each said, none stops the others."""
    server = fake_anthropic
    make_repo(tmp_path / "repo")
    (tmp_path / "plain").mkdir()
    server.route("[fine]", text("fine is done"))
    write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "gone", "prompt": "[gone] x", "repo": f"file://{tmp_path}/no-such-repo.git"},
            {"id": "plain", "prompt": "[plain] x", "repo": "plain"},
            {"id": "cwd", "prompt": "[cwd] x", "repo": "repo", "options": {"cwd": "/"}},
            {"id": "fine", "prompt": "[fine] x", "repo": "repo"},
        ],
    )

    done = batch(tmp_path, server, "tasks.jsonl", "-o", "out.jsonl", "--workers", "2")

    assert done.returncode == 1
    assert "tasks.jsonl line 3: options: 'cwd' is not one a task may set" in done.stderr
    rows = results(tmp_path / "out.jsonl")
    assert sorted(rows) == ["fine", "gone", "plain"]
    assert rows["gone"]["is_error"] and rows["gone"]["result"].startswith(f"cannot clone file://{tmp_path}/")
    assert rows["plain"]["is_error"] and "is not a git repository" in rows["plain"]["result"]
    assert rows["fine"]["is_error"] is False and rows["fine"]["result"] == "fine is done"
    assert server.conversations("[gone]") == [] and server.conversations("[plain]") == []


def test_a_task_from_a_url_commits_its_work(tmp_path, fake_anthropic):
    """A clone keeps `.agent/` in its info/exclude; our add named `.agent/sessions` in a pathspec and
    git refused an ignored path: a URL task never committed (finding H, functional)."""
    server = fake_anthropic
    origin = make_repo(tmp_path / "origin")
    server.route(
        "[url]", tool_call("write_file", {"path": "fix.txt", "content": "fixed\n"}), text("url is done")
    )
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "url", "prompt": "[url] fix", "repo": f"file://{origin}"}])

    done = batch(tmp_path, server, "tasks.jsonl", "-o", "out.jsonl", "--permission-mode", "acceptEdits")

    assert done.returncode == 0, done.stdout + done.stderr
    row = results(tmp_path / "out.jsonl")["url"]
    assert row["is_error"] is False and not row.get("errors"), row
    assert row["commit"] and row["diff_stat"] == "1 file changed, 1 insertion(+)"
    clone = Path(row["worktree"])
    assert _git(clone, "show", f"{row['commit']}:fix.txt") == "fixed\n"
    assert _git(clone, "show", "--stat", "--format=", row["commit"]).split()[0] == "fix.txt"  # no session


def test_a_ray_address_that_does_not_answer_is_one_line(tmp_path, fake_anthropic):
    make_repo(tmp_path / "repo")
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "a", "prompt": "x", "repo": "repo"}])
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    done = batch(tmp_path, fake_anthropic, "tasks.jsonl", "--ray-address", f"ray://127.0.0.1:{port}")

    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    expected = f"the Ray cluster at ray://127.0.0.1:{port} does not answer" if HAVE_RAY else "--ray needs Ray"
    assert len(lines) == 1 and expected in lines[0], done.stderr
    assert fake_anthropic.requests == []


@pytest.mark.parametrize("engine", [pytest.param(["--workers", "2"], id="local"), *ENGINES[1:]])
def test_ctrl_c_stops_new_tasks_interrupts_running_ones_and_a_rerun_resumes_them(
    tmp_path, fake_anthropic, engine
):
    server = fake_anthropic
    make_repo(tmp_path / "repo")
    for name in ("a", "b"):  # each stalls mid-answer the first time, then finishes when resumed
        server.route(f"[{name}]", Stall(reply=text("never")), text(f"{name} is done"))
    server.route("[c]", text("c is done"))
    write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": n, "prompt": f"[{n}] work", "repo": "repo"} for n in ("a", "b", "c")],
    )
    env = anthropic_env(tmp_path, server)
    args = [*AGENT, "batch", "tasks.jsonl", "-o", "out.jsonl", *engine]
    proc = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait(lambda: server.conversations("[a]") and server.conversations("[b]"), proc)
        if (
            "--ray" in engine
        ):  # the workers of a cluster never see the terminal's signal: the driver cancels them
            os.kill(proc.pid, signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl+C: the terminal signals the whole group
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        server.release(10)

    assert proc.returncode == 130, stdout + stderr
    assert "batch stopped; run it again to go on" in stderr
    assert table(stdout, "interrupted") == "2" and table(stdout, "not started") == "1"
    assert results(tmp_path / "out.jsonl") == {}  # an interrupted task has no result
    assert server.conversations("[c]") == []  # never started
    sessions = {n: _session_dirs(tmp_path / "out.work" / n) for n in ("a", "b")}
    for found in sessions.values():
        assert len(found) == 1 and '"interrupted"' in (found[0] / "events.jsonl").read_text()

    if "--ray" in engine:
        return  # going on is the worker's own doing, the same on both engines: checked once, locally
    again = batch(tmp_path, server, "tasks.jsonl", "-o", "out.jsonl", *engine)

    assert again.returncode == 0, again.stdout + again.stderr
    rows = results(tmp_path / "out.jsonl")
    assert {n: rows[n]["result"] for n in rows} == {"a": "a is done", "b": "b is done", "c": "c is done"}
    for name in ("a", "b"):  # the interrupted session went on
        assert rows[name]["session_dir"] == str(sessions[name][0])
        last = server.conversations(f"[{name}]")[-1]
        assert sum(f"[{name}] work" in json.dumps(m) for m in last["messages"]) == 2


def test_a_task_whose_process_dies_twice_is_its_error(tmp_path, fake_anthropic):
    """(Dying once, then done, is in the 12-task batch above, on both engines.)"""
    server = fake_anthropic
    make_repo(tmp_path / "repo")
    user_config(tmp_path, '[sandbox]\nmode = "off"\n')
    server.route("[twice]", KILL, KILL, text("never"))
    server.route("[fine]", text("fine is done"))
    write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": n, "prompt": f"[{n}] go", "repo": "repo"} for n in ("twice", "fine")],
    )

    done = batch(
        tmp_path, server, "tasks.jsonl", "-o", "out.jsonl", "--permission-mode", "yolo", "--workers", "2"
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"! twice  its process died \(killed by SIGKILL\); running it once more", done.stdout)
    assert re.search(r"! twice  its process died \(killed by SIGKILL\); not again", done.stdout)
    rows = results(tmp_path / "out.jsonl")
    assert rows["fine"]["is_error"] is False
    assert rows["twice"]["is_error"] is True and rows["twice"]["attempts"] == 2
    assert rows["twice"]["result"] == "the process running it died twice (killed by SIGKILL)"


def test_max_concurrency_lets_one_agent_run_at_a_time(tmp_path, fake_anthropic):
    """Two workers, one slot: whichever task gets it, the other's agent waits (and says so) until
    the first one's has ended."""
    server = fake_anthropic
    make_repo(tmp_path / "repo")
    names = ("one", "two")
    for name in names:
        server.route(f"[{name}]", Stall(reply=text(f"{name} is done")))
    write_tasks(tmp_path / "tasks.jsonl", [{"id": n, "prompt": f"[{n}] go", "repo": "repo"} for n in names])
    env = anthropic_env(tmp_path, server)
    args = [*AGENT, "batch", "tasks.jsonl", "-o", "out.jsonl", "--workers", "2", "--max-concurrency", "1"]
    proc = subprocess.Popen(
        args, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    try:
        _wait(lambda: any("waits for a free slot" in line for line in lines), proc)
        waiting = next(n for n in names if any(f"⏸ {n}  waits for a free slot" in line for line in lines))
        running = next(n for n in names if n != waiting)
        _wait(lambda: server.conversations(f"[{running}]"), proc)
        assert server.conversations(f"[{waiting}]") == []  # at the gate
        server.release()  # the running agent ends; the waiting one gets the slot
        _wait(lambda: server.conversations(f"[{waiting}]"), proc)
        server.release()
        proc.wait(timeout=TIMEOUT)
        reader.join(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(lines)
    order = [next(n for n in names if f"[{n}]" in json.dumps(b["messages"][0])) for b in server.requests]
    assert order == [running, waiting]


def _wait(condition, proc: subprocess.Popen) -> None:
    """Until `condition()` holds; fails at once if the batch ended first."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert proc.poll() is None, "the batch ended before it got there"
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)


def _session_dirs(checkout: Path) -> list[Path]:
    root = checkout / ".agent" / "sessions"
    return sorted(p for p in root.iterdir() if (p / "events.jsonl").exists()) if root.is_dir() else []
