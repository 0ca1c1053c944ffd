"""The TUI in a real terminal gets SIGTERM or SIGHUP while bash runs `sleep 25`: the command's group
is ended, the interruption is logged, and agent exits 143 / 129. Skipped where tmux is missing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid

import pytest

from agent_cli.session.processes import live_members
from tests.fakeapi.replies import tool_call
from tests.test_e2e_crash import events, running_command, sessions, wait_for
from tests.test_tmux_smoke import _wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_the_tui_ends_the_tool_and_exits_on_a_signal(workspace, fake_anthropic, sig, code):
    fake_anthropic.push(tool_call("bash", {"command": "sleep 25"}, say="Waiting for the build."))
    name = f"agent-signal-{uuid.uuid4().hex[:8]}"
    rc = workspace.parent / "rc.txt"
    command = (
        f"cd {workspace} && env -u ANTHROPIC_AUTH_TOKEN ANTHROPIC_BASE_URL={fake_anthropic.url} "
        f"ANTHROPIC_API_KEY=sk-ant-test XDG_CONFIG_HOME={workspace}/.cfg "
        f"{sys.executable} -m agent_cli.cli --permission-mode yolo; echo $? > {rc}; sleep 600"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "110", "-y", "34", command], check=True)
    try:
        _wait_for(name, "Ask anything")
        subprocess.run(["tmux", "send-keys", "-t", name, "wait for the build", "Enter"], check=True)
        record = wait_for(lambda: running_command(workspace), "bash to start")
        assert isinstance(record, dict)
        os.kill(record["agent_pid"], sig)
        wait_for(lambda: rc.exists() and rc.read_text().strip(), "agent to exit")
        assert rc.read_text().strip() == str(code)
        assert live_members(record["pgid"]) == []
        (session_id,) = [p.name for p in sessions(workspace).iterdir()]
        logged = events(workspace, session_id)
        results = [e for e in logged if e["type"] == "tool_results"]
        assert f"agent received {sig.name}" in json.dumps(results[-1]["message"])
        # the end-of-turn snapshot may follow, or the exit may come first (a rewind then falls back)
        assert [e for e in logged if e["type"] != "checkpoint_end"][-1]["type"] == "turn_end"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
