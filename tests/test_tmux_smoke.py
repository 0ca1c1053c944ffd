"""The TUI in a real terminal: `agent --demo` in tmux, a typed task, a permission answered with Enter,
the streamed answer and the context gauge on screen. Skipped where tmux is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _pane(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-t", name, "-p"], capture_output=True, text=True).stdout


def _wait_for(name: str, needle: str | re.Pattern[str], timeout: float = 90.0) -> str:
    """Poll the pane until the whole condition holds (a substring, or a regex that must match)."""
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _pane(name)
        found = needle.search(screen) if isinstance(needle, re.Pattern) else needle in screen
        if found:
            return screen
        time.sleep(0.3)
    raise AssertionError(f"{needle!r} never appeared; the screen was:\n{screen}")


def test_demo_task_in_tmux(workspace):
    name = f"agent-smoke-{uuid.uuid4().hex[:8]}"
    command = f"cd {workspace} && XDG_CONFIG_HOME={workspace}/.cfg {sys.executable} -m agent_cli.cli --demo"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "110", "-y", "34", command], check=True)
    try:
        _wait_for(name, "Ask anything")
        # the provider loaded: the gauge shows used / budget (percent); wait for all of it, since the
        # status bar may paint "/ 180k" a frame before the percentage on a loaded machine
        _wait_for(name, re.compile(r"\d+(\.\d)?k / 180k \(\d+%\)"))
        subprocess.run(["tmux", "send-keys", "-t", name, "look around", "Enter"], check=True)
        _wait_for(name, "Allow bash?")  # ask mode: bash waits for the person
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        _wait_for(name, "What I found")
        # the tool line's ✓ and the command may paint a frame after the answer's first words
        _wait_for(name, re.compile(r"(?s)(?=.*git status --short)(?=.*✓)"))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
