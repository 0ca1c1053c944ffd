"""`agent batch` throughput: the same batch on local worker processes and on a local Ray, timed in the
same run against the local Messages-API server.

    .venv/bin/python bench/batch.py [--tasks 24] [--workers 2] [--latency 0.5]

Each task writes a file and answers (two model calls) in its own worktree of one of three scratch
repositories; `--latency` holds every answer that long, as a real model would take. Prints each
engine's wall time (the whole `agent batch` process: start, every task, the summary), tasks per
minute, the tasks' median time, Ray's own start and stop measured alone, and the ratio Ray / local.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._args import count  # noqa: E402
from tests.fakeapi.replies import text, tool_call  # noqa: E402
from tests.fakeapi.server import FakeAnthropic, _Handler  # noqa: E402


class SlowHandler(_Handler):
    latency = 0.0

    def _answer(self, body, tokens):  # type: ignore[no-untyped-def]
        time.sleep(self.latency)  # the model thinking
        super()._answer(body, tokens)


def make_repos(root: Path) -> list[Path]:
    repos = []
    for name in ("r1", "r2", "r3"):
        repo = root / name
        repo.mkdir()
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "start"]):
            if args[0] == "add":
                (repo / "README.md").write_text(f"# {name}\n")
            ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]
            subprocess.run(["git", *ident, *args], cwd=repo, check=True)
        repos.append(repo)
    return repos


def run_batch(root: Path, tasks: int, flags: list[str], latency: float) -> tuple[float, list[dict]]:
    SlowHandler.latency = latency
    server = FakeAnthropic()
    server._httpd.RequestHandlerClass = SlowHandler
    server.start()
    try:
        lines = []
        for n in range(tasks):
            task_id = f"t{n:03d}"
            server.route(
                f"[{task_id}]",
                tool_call("write_file", {"path": f"{task_id}.txt", "content": f"{task_id}\n"}),
                text(f"{task_id} done"),
            )
            lines.append(
                json.dumps({"id": task_id, "prompt": f"[{task_id}] add a file", "repo": f"r{n % 3 + 1}"})
            )
        (root / "tasks.jsonl").write_text("\n".join(lines) + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(
            ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-bench", XDG_CONFIG_HOME=str(root / ".cfg")
        )
        out = root / f"results-{time.monotonic_ns()}.jsonl"
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "agent_cli.cli", "batch", "tasks.jsonl", "-o", str(out), *flags],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
    finally:
        server.stop()
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    if done.returncode != 0 or len(rows) != tasks or any(r["is_error"] for r in rows):
        sys.exit(f"the batch failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, rows


def ray_start_stop(cpus: int) -> float:
    code = (
        "import logging, ray\n"
        f"ray.init(address='local', num_cpus={cpus}, include_dashboard=False, log_to_driver=False, "
        "logging_level=logging.ERROR)\nray.shutdown()\n"
    )
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=count, default=24)
    parser.add_argument("--workers", type=count, default=2)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each model answer takes")
    args = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        sys.exit("Ray is not installed: pip install -e '.[ray]'")
    engines = {
        "local": ["--workers", str(args.workers)],
        "ray": ["--ray", "--workers", str(args.workers)],
    }
    print(
        f"{args.tasks} tasks (2 model calls each, {args.latency:g} s per answer), {args.workers} at once, {os.cpu_count()} cores"
    )
    print(f"{'engine':<8}{'wall s':>9}{'tasks/min':>11}{'task p50 s':>12}")
    walls = {}
    for name, flags in engines.items():
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            root = Path(tmp)
            make_repos(root)
            wall, rows = run_batch(root, args.tasks, flags, args.latency)
        walls[name] = wall
        p50 = statistics.median(r["duration_ms"] for r in rows) / 1000
        print(f"{name:<8}{wall:>9.1f}{args.tasks / wall * 60:>11.1f}{p50:>12.2f}")
    print(f"Ray's own start and stop (num_cpus={args.workers}), alone: {ray_start_stop(args.workers):.1f} s")
    print(f"ratio ray / local wall time: {walls['ray'] / walls['local']:.2f}x")


if __name__ == "__main__":
    main()
