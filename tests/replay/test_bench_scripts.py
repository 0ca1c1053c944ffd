"""The bench scripts behind bench/RESULTS.md's figures, run as its commands run them: each does its
job on a folder of sessions, and refuses what it cannot use with one clear line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.replay.test_policies import edit_session

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_leave_one_out_runs_over_a_folder_of_sessions(tmp_path: Path, jobs: str):
    """bench/loo.py as the RESULTS commands run it: every session held out once, with the hazard
    refitted without it, and the setting to ship chosen on all of them (in this process, or on
    worker processes)."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    edit_session(sessions)
    (sessions / "edit.jsonl").rename(sessions / "one.jsonl")
    edit_session(sessions)
    done = bench(
        "loo.py",
        *("--dir", str(sessions), "--cache", str(tmp_path / "cache.json")),
        *("--grid", "miss_penalty_fraction=1/6,1/3", "--long", "1", "--refit", "--json", "--jobs", jobs),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(row["held_out"] for row in report["held_out"]) == ["edit.jsonl", "one.jsonl"]
    assert all(row["hazard"] == "refit" and row["blind"] <= row["visible"] for row in report["held_out"])
    assert report["chosen_on_all"]["miss_penalty_fraction"] in (1 / 6, 1 / 3)


def test_the_hazard_fit_shows_each_sessions_rate_per_class(tmp_path: Path):
    """bench/fit_reuse.py --by-session: under each class, the rate of every session that has it."""
    edit_session(tmp_path)
    done = bench("fit_reuse.py", "--dir", str(tmp_path), "--by-session")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    whole = lines.index(next(line for line in lines if line.startswith("whole ")))
    assert lines[whole + 1].split()[0] == "edit.jsonl"  # the module's read, needed by the edit
    assert float(lines[whole + 1].split()[1]) > 0


LOO = ["--dir", "{dir}", "--cache", "{dir}/c.json"]


@pytest.mark.parametrize(
    ("script", "args", "says"),
    [
        ("loo.py", [*LOO, "--grid", "miss_penalty_fraction=abc"], "not a number"),
        ("loo.py", [*LOO, "--grid", "miss_penalty_fraction=1/0"], "not a number"),
        ("loo.py", [*LOO, "--grid", "forecast_ratio"], "not a number"),
        ("loo.py", [*LOO, "--grid", "miss_penalty_fraction=-1/3"], "must be 0 or more"),
        ("loo.py", [*LOO, "--grid", "no_such_constant=1"], "unknown constant"),
        ("loo.py", [*LOO, "--long", "1", "--grid", "miss_penalty_fraction=1/3"], "found 1 (edit.jsonl)"),
        ("fit_reuse.py", ["--dir", "{dir}", "--stride", "0"], "argument --stride: must be 1 or more, not 0"),
        ("oracle_classes.py", ["--dir", "{dir}"], "no session of 50 requests or more"),
        ("closed_loop.py", ["--budget", "0", "--scenario", "batch"], "--budget must be at least 1000"),
        ("residuals.py", ["--dir", "{dir}"], "no Claude Code session of 50 requests or more"),
        ("residuals.py", ["--every", "0"], "argument --every: must be 1 or more, not 0"),
        ("make_room.py", ["--reads", "-3"], "argument --reads: must be 1 or more, not -3"),
        ("memory_share.py", ["--prompts", "0"], "argument --prompts: must be 1 or more, not 0"),
        ("loo.py", [*LOO, "--jobs", "two"], "argument --jobs: must be a whole number, not 'two'"),
        ("overhead.py", ["--turns", "0"], "argument --turns: must be 1 or more, not 0"),
        ("startup.py", ["--runs", "0"], "argument --runs: must be 1 or more, not 0"),
        ("paste.py", ["--runs", "0"], "argument --runs: must be 1 or more, not 0"),
        ("mentions.py", ["--files", "0"], "argument --files: must be 1 or more, not 0"),
        ("sandbox.py", ["--calls", "0"], "argument --calls: must be 1 or more, not 0"),
        ("batch.py", ["--workers", "0"], "argument --workers: must be 1 or more, not 0"),
        ("tui_streaming.py", ["--keys", "0"], "argument --keys: must be 1 or more, not 0"),
        ("spellings.py", ["--every", "0"], "argument --every: must be 1 or more, not 0"),
    ],
)
def test_a_bench_script_refuses_what_it_cannot_use(tmp_path: Path, script: str, args: list[str], says: str):
    edit_session(tmp_path)  # one short session: too few to leave one out, too short for the oracle's table
    done = bench(script, *(arg.format(dir=tmp_path) for arg in args))
    assert done.returncode in (1, 2) and says in done.stderr and "Traceback" not in done.stderr
