"""Sessions `--continue` and `agent sessions` pass by (not sealed by the person's key here, or with an
unreadable first line) are passed by out loud: how many, why, and how to open one anyway. A first run
whose seal key cannot be kept says so."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.e2e import clean_env, run_agent


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump({"responses": [{"text": "One."}, {"text": "Two."}]}))
    return str(path)


def agent(workspace: Path, *args: str, config: str = ".cfg"):
    return run_agent(workspace, clean_env(workspace, config), *args, timeout=120)


def start(workspace: Path, script: str, prompt: str, config: str = ".cfg") -> str:
    run = agent(workspace, "-p", prompt, "--script", script, "--output-format", "json", config=config)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["session_id"]


def log_of(workspace: Path, session_id: str) -> Path:
    return workspace / ".agent" / "sessions" / session_id / "events.jsonl"


def test_a_newest_session_with_a_corrupt_first_line_is_named_not_silently_skipped(workspace, script):
    older = start(workspace, script, "older")
    newer = start(workspace, script, "newer")
    log = log_of(workspace, newer)
    log.write_text("{bad\n" + log.read_text().split("\n", 1)[1])
    os.utime(log_of(workspace, older), (1, 1))  # the newer one was used last

    listing = agent(workspace, "sessions")
    assert older in listing.stdout and newer not in listing.stdout
    assert f"1 session passed over (with an unreadable first line); agent --resume {newer}" in listing.stderr

    cont = agent(workspace, "-p", "go on", "--continue", "--script", script, "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
    data = json.loads(cont.stdout)
    assert data["session_id"] == older
    assert any("passed over" in w and newer in w for w in data["warnings"]), data["warnings"]
    listed = agent(workspace, "-p", "/resume", "--continue", "--script", script, "--output-format", "json")
    said = json.loads(listed.stdout)["result"]
    assert (
        older in said
        and f"1 session passed over (with an unreadable first line); agent --resume {newer}" in said
    )


def test_a_seal_key_that_cannot_be_kept_is_said_at_once_and_by_continue(workspace, script):
    (workspace / "not-a-dir").write_text("")
    config = "not-a-dir/cfg"  # no folder can be made under a file, even by root
    first = agent(workspace, "-p", "hello", "--script", script, "--output-format", "json", config=config)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert sum("session key" in w for w in data["warnings"]) == 1, data["warnings"]
    assert any(data["session_id"] in w for w in data["warnings"])

    cont = agent(workspace, "-p", "more", "--continue", "--script", script, config=config)
    assert cont.returncode != 0
    assert "1 session passed over (not recorded by you on this machine: no session key at" in cont.stderr
    listing = agent(workspace, "sessions", config=config)
    assert "passed over" in listing.stderr and data["session_id"] in listing.stderr


def test_a_moved_workspace_lists_its_sessions_as_passed_over(workspace, script, tmp_path):
    first, second = start(workspace, script, "one"), start(workspace, script, "two")
    moved = tmp_path / "moved"
    shutil.copytree(workspace, moved)
    listing = agent(moved, "sessions")
    assert "No sessions in" in listing.stdout
    assert "2 sessions passed over (not recorded by you on this machine); agent --resume ID" in listing.stderr
    assert first and second
