"""Start-up: `agent --version`, `agent --help`, and `agent -p` to the first request on a local server.

    .venv/bin/python bench/startup.py [--runs 7]

Prints medians in ms, against `python -c pass` measured in the same run (the floor of any Python CLI).
Goal: `agent --version` under 300 ms (lazy imports: neither textual nor the anthropic SDK load).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _time(cmd: list[str], env: dict[str, str], cwd: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _first_request(env: dict[str, str], cwd: str, runs: int) -> float:
    from tests.fakeapi.server import FakeAnthropic

    samples = []
    for _ in range(runs):
        with FakeAnthropic() as server:
            run_env = {**env, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-bench"}
            start = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "agent_cli.cli", "-p", "hi"],
                env=run_env,
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            while not server.requests and proc.poll() is None:
                time.sleep(0.002)
            samples.append((time.perf_counter() - start) * 1000)
            proc.wait(timeout=60)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory() as cwd:
        base = _time([sys.executable, "-c", "pass"], env, cwd, args.runs)
        version = _time([sys.executable, "-m", "agent_cli.cli", "--version"], env, cwd, args.runs)
        helptext = _time([sys.executable, "-m", "agent_cli.cli", "--help"], env, cwd, args.runs)
        sdk = _time([sys.executable, "-c", "import anthropic"], env, cwd, max(3, args.runs // 2))
        first = _first_request(env, cwd, max(3, args.runs // 2))
    print(f"{'what':<40}{'median ms':>12}{'x python':>10}")
    for name, value in [
        ("python -c pass (floor)", base),
        ("agent --version  (goal < 300 ms)", version),
        ("agent --help", helptext),
        ("python -c 'import anthropic'", sdk),
        ("agent -p: start to first request", first),
    ]:
        print(f"{name:<40}{value:>12.0f}{value / base:>10.1f}")


if __name__ == "__main__":
    main()
