"""`@` and `!` in a real terminal, against the local Messages API server: typing `@widpar` offers the
workspace's file, Tab picks it, the chip above the prompt shows its token cost, and the request the
model gets holds the file's content as a read; `!git status --short` asks in the permission modal,
runs, and its output is in the next prompt's request. Skipped where tmux or git is missing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.fakeapi.replies import text

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None or shutil.which("git") is None, reason="tmux or git is not installed"
)
ARMED = "Enter allow once"


class Terminal:
    """One tmux session on a socket of its own."""

    def __init__(self, command: str) -> None:
        self.socket = f"agent-mentions-{uuid.uuid4().hex[:8]}"
        self.name = "main"
        self._tmux("new-session", "-d", "-s", self.name, "-x", "120", "-y", "36", command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False)
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-t", self.name, "-p")

    def type(self, keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", keys)

    def press(self, key: str) -> None:
        self._tmux("send-keys", "-t", self.name, key)

    def wait_for(self, needle: str | re.Pattern[str], timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle.search(screen) if isinstance(needle, re.Pattern) else needle in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared; the screen was:\n{screen}")

    def close(self) -> None:
        self._tmux("kill-server")


def test_at_completion_and_bang_command_reach_the_model(workspace, fake_anthropic):
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "src").mkdir()
    (workspace / "src" / "widget_parser.py").write_text("MARKER_IN_THE_FILE = 1\n" + "x = 2\n" * 40)
    fake_anthropic.push(text("It parses widgets."), text("Two things are untracked."))
    command = (
        f"cd {workspace} && ANTHROPIC_BASE_URL={fake_anthropic.url} ANTHROPIC_API_KEY=sk-ant-test "
        f"XDG_CONFIG_HOME={workspace}/.cfg {sys.executable} -m agent_cli.cli"
    )
    term = Terminal(command)
    try:
        term.wait_for("Ask anything")
        term.wait_for(re.compile(r"\d+(\.\d)?k / \d+k \(\d+%\)"))  # loaded: the prompt has the focus
        term.type("explain @widpar")
        term.wait_for("src/widget_parser.py")  # offered in the completion list
        term.press("Tab")
        chip = term.wait_for(re.compile(r"\[@src/widget_parser\.py · (\d+) tokens\]"))
        tokens = int(re.search(r"widget_parser\.py · (\d+) tokens", chip).group(1))
        assert 60 < tokens < 1000, chip
        assert "explain @src/widget_parser.py" in chip
        term.press("Enter")
        term.wait_for("It parses widgets.")
        messages = fake_anthropic.requests[-1]["messages"]
        uses = [b for m in messages for b in m["content"] if b["type"] == "tool_use"]
        assert [(u["name"], u["input"]) for u in uses] == [("read_file", {"path": "src/widget_parser.py"})]
        assert "MARKER_IN_THE_FILE" in json.dumps(messages[-1])  # the read's result, before the answer

        term.type("!git status --short")
        term.press("Enter")
        term.wait_for("Allow bash?")  # ask mode: the person's command asks like the model's
        term.wait_for(ARMED)
        term.press("Enter")
        term.wait_for("?? src/")  # its output, on screen
        term.type("what is untracked?")
        term.press("Enter")
        term.wait_for("Two things are untracked.")
    finally:
        screen = term.screen()
        term.close()
    sent = json.dumps(fake_anthropic.requests[-1]["messages"])
    assert "git status --short" in sent and "?? src/" in sent, screen
    assert "what is untracked?" in sent
    assert len(fake_anthropic.requests) == 2  # `!` ran without a model call
