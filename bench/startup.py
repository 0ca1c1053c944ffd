"""Start-up and exit: `agent --version`, `--help`, and `agent -p` on a local server — the time to its
first request, to the result line, and the exit lag (the result line to the process's end).

    .venv/bin/python bench/startup.py [--runs 7]

Prints medians in ms, against `python -c pass` and `python -c "import anthropic"` measured in the
same run (the floor of any Python CLI, and of anything that talks through the SDK).
Goals: `agent --version` under 300 ms; `-p` first request <= 1.5 s; no exit lag worth the name.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SDK_ONLY = "import anthropic, os; os._exit(0)"
sys.path.insert(0, str(ROOT))

from bench._args import count  # noqa: E402


def _time(cmd: list[str], env: dict[str, str], cwd: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False, stdin=subprocess.DEVNULL)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _run_once(env: dict[str, str], cwd: str, args: list[str]) -> tuple[float, float, float]:
    """One `agent -p` on a fresh local server: (ms to its first request, ms to the result line on
    stdout, ms from that line to the process's end — the exit lag)."""
    from tests.fakeapi.server import FakeAnthropic

    with FakeAnthropic() as server:
        run_env = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-bench"}
        seen: dict[str, float] = {}

        def watch() -> None:  # the server's side: the first request's arrival
            while "request" not in seen:
                if server.requests:
                    seen["request"] = time.perf_counter()
                    return
                if proc.poll() is not None:
                    return
                time.sleep(0.001)

        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_cli.cli", *args, "--output-format", "stream-json"],
            env=run_env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,  # -p reads a piped stdin: never this script's own
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        assert proc.stdout is not None
        result_at = 0.0
        for line in proc.stdout:
            if line.startswith(b'{"type": "result"'):
                result_at = time.perf_counter()
        proc.wait(timeout=60)
        ended = time.perf_counter()
        watcher.join(timeout=5)
    first = (seen.get("request", ended) - start) * 1000
    return first, (result_at - start) * 1000, (ended - result_at) * 1000 if result_at else float("nan")


def _headless(env: dict[str, str], cwd: str, runs: int, args: list[str]) -> tuple[float, float, float]:
    samples = [_run_once(env, cwd, args) for _ in range(runs)]
    return tuple(statistics.median(column) for column in zip(*samples, strict=True))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=count, default=7)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory() as cwd:
        base = _time([sys.executable, "-c", "pass"], env, cwd, args.runs)
        version = _time([sys.executable, "-m", "agent_cli.cli", "--version"], env, cwd, args.runs)
        helptext = _time([sys.executable, "-m", "agent_cli.cli", "--help"], env, cwd, args.runs)
        # interleaved, so both see the same load on a shared machine: import, run, import, run...
        # (`python -c "import anthropic"` includes its exit, ~0.4 s of collecting the SDK's classes;
        # SDK_ONLY ends the process the moment the import is done: the floor for a first request)
        pairs = [
            (
                _time([sys.executable, "-c", "import anthropic"], env, cwd, 1),
                _time([sys.executable, "-c", SDK_ONLY], env, cwd, 1),
                _run_once(env, cwd, ["-p", "hi"]),
            )
            for _ in range(args.runs)
        ]
        sdk = statistics.median(p[0] for p in pairs)
        sdk_only = statistics.median(p[1] for p in pairs)
        first, result, lag = (statistics.median(p[2][i] for p in pairs) for i in range(3))
        over_sdk = statistics.median(p[2][0] - p[1] for p in pairs)
        demo_first, demo_result, demo_lag = _headless(env, cwd, args.runs, ["--demo", "-p", "hi"])
    print(f"{'what':<52}{'median ms':>12}{'x python':>10}")
    for name, value in [
        ("python -c pass (floor)", base),
        ("agent --version  (goal < 300 ms)", version),
        ("agent --help", helptext),
        ("python -c 'import anthropic'", sdk),
        ("  the same, ended as soon as imported (os._exit)", sdk_only),
        ("agent -p: start to first request (goal <= 1.5 s)", first),
        ("agent -p: start to the result line", result),
        ("agent -p: exit lag (result line to process end)", lag),
        ("agent --demo -p: start to the result line", demo_result),
        ("agent --demo -p: exit lag", demo_lag),
    ]:
        print(f"{name:<52}{value:>12.0f}{value / base:>10.1f}")
    print(
        f"\n-p first request minus the bare SDK import, run by run: {over_sdk:+.0f} ms (median of {args.runs})"
    )


if __name__ == "__main__":
    main()
