"""A multi-MB bracketed paste in a real terminal: `tmux paste-buffer -p` sends a file to `agent` in
tmux, the prompt shows it as a chip, and after Enter the paste is what the session keeps (stored through
T0, byte for byte) while the request to the local Messages API server carries its preview and recall
ref; the words typed before and after the chip stay the person's own, beside it. Skipped where tmux is missing."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import uuid

import pytest

from tests.fakeapi.replies import text
from tests.test_tmux_smoke import _pane, _wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

LINE = "0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefg\n"  # 85 B
CHIP = "[Pasted text: 3.4 MB, 40,000 lines]"


def test_a_multi_mb_paste_becomes_a_chip_and_is_sent_whole(workspace, tmp_path, fake_anthropic):
    pasted = "FIRST-LINE-OF-THE-PASTE\n" + LINE * 39_998 + "LAST-LINE-OF-THE-PASTE\n"
    paste_file = tmp_path / "paste.txt"
    paste_file.write_text(pasted)
    fake_anthropic.push(text("Read all of it."))
    name = f"agent-paste-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {workspace} && ANTHROPIC_BASE_URL={fake_anthropic.url} ANTHROPIC_API_KEY=sk-ant-test "
        f"XDG_CONFIG_HOME={workspace}/.cfg {sys.executable} -m agent_cli.cli"
    )
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "110", "-y", "34", command], check=True)
    try:
        _wait_for(name, "Ask anything")
        _wait_for(name, re.compile(r"\d+(\.\d)?k / \d+k \(\d+%\)"))  # loaded: the prompt has the focus
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", "count the lines: "], check=True)
        _wait_for(name, "count the lines:")
        subprocess.run(["tmux", "load-buffer", "-b", name, str(paste_file)], check=True)
        subprocess.run(["tmux", "paste-buffer", "-p", "-d", "-b", name, "-t", name], check=True)  # bracketed
        screen = _wait_for(name, CHIP)
        assert "FIRST-LINE" not in screen and "abcdefg" not in screen  # the text did not go into the prompt
        subprocess.run(["tmux", "send-keys", "-t", name, "-l", " thanks"], check=True)  # typing goes on
        _wait_for(name, f"{CHIP} thanks")
        subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
        _wait_for(name, "Read all of it.")
    finally:
        screen = _pane(name)
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
    message = fake_anthropic.requests[-1]["messages"][-1]
    sent = json.dumps(message)
    assert "FIRST-LINE-OF-THE-PASTE" in sent and "LAST-LINE-OF-THE-PASTE" in sent
    assert len(sent) < 50_000  # a preview with a recall ref, not 3.4 MB
    # the words typed before and after the chip are the person's own blocks, not part of the paste
    texts = [b["text"] for b in message["content"] if b["type"] == "text"]
    assert texts[-3] == "count the lines: " and texts[-1] == " thanks", texts
    assert texts[-2].startswith("<persisted-output") and "paste-1" in texts[-2]
    stored = [
        p for p in workspace.glob(".agent/sessions/*/tool-results/*") if p.stat().st_size >= len(pasted)
    ]
    assert len(stored) == 1, screen
    assert stored[0].read_text() == pasted  # the paste byte for byte, and only the paste
