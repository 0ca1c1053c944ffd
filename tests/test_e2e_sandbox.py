"""As a person runs it: `agent -p --permission-mode yolo` against the local Messages-API server, with
bash in the real bubblewrap sandbox, and files that keep their encoding (issue 10, points 8 and 9)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

from agent_cli.tools.sandbox import Sandbox, SandboxPolicy
from tests.e2e import agent
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic


@pytest.fixture
def bwrap(workspace: Path) -> None:
    status = Sandbox(SandboxPolicy(), workspace).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")


@pytest.fixture
def home_file() -> Path:
    path = Path.home() / f"agent-e2e-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def user_config(workspace: Path, text: str) -> None:
    path = workspace / ".cfg" / "agent" / "config.toml"  # XDG_CONFIG_HOME of `agent()`
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def tool_results(server: FakeAnthropic) -> list[str]:
    """The tool_result texts of the last request, in order."""
    out = []
    for message in server.requests[-1]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def connect(server: FakeAnthropic) -> str:
    port = urlparse(server.url).port
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"


def test_yolo_bash_is_confined(workspace, fake_anthropic, bwrap, home_file):
    server = fake_anthropic
    server.push(
        tool_call("bash", {"command": f"touch {home_file}"}),
        tool_call("bash", {"command": connect(server)}),  # the very server the agent talks to
        tool_call("bash", {"command": "echo built > out.txt && cat out.txt"}),
        text("done"),
    )
    out = agent(workspace, server, "-p", "try things", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    home, network, local = tool_results(server)
    assert "Read-only file system" in home and not home_file.exists()
    assert "Connection refused" in network and "connected" not in network
    assert local.startswith("built") and (workspace / "out.txt").read_text() == "built\n"


def test_network_true_in_the_config_lets_bash_connect(workspace, fake_anthropic, bwrap):
    user_config(workspace, "[sandbox]\nnetwork = true\n")
    fake_anthropic.push(tool_call("bash", {"command": connect(fake_anthropic)}), text("done"))
    out = agent(workspace, fake_anthropic, "-p", "connect", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert tool_results(fake_anthropic) == ["connected\n"]


def test_yolo_without_bwrap_refuses_bash_with_the_fix(workspace, fake_anthropic):
    user_config(workspace, '[sandbox]\nbwrap = "/nonexistent/bin/bwrap"\n')
    fake_anthropic.push(tool_call("bash", {"command": "touch made-anyway"}), text("done"))
    out = agent(workspace, fake_anthropic, "-p", "touch", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    (result,) = tool_results(fake_anthropic)
    assert "bubblewrap" in result and "apt install bubblewrap" in result
    assert not (workspace / "made-anyway").exists()


def test_an_untrusted_workspace_cannot_switch_the_sandbox_off(workspace, fake_anthropic, bwrap, home_file):
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "config.toml").write_text('sandbox = "off"\n')
    fake_anthropic.push(tool_call("bash", {"command": f"touch {home_file}"}), text("done"))
    out = agent(workspace, fake_anthropic, "-p", "touch", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert ".agent/config.toml: ignored keys sandbox" in out.stderr
    assert not home_file.exists()


def test_a_latin1_file_edited_in_place_keeps_its_bytes(workspace, fake_anthropic):
    original = "Prix: 3 €\r\nCafé crème\r\n".encode("cp1252")
    (workspace / "menu.txt").write_bytes(original)
    fake_anthropic.push(
        tool_call("read_file", {"path": "menu.txt"}),
        tool_call("edit_file", {"path": "menu.txt", "old_string": "Café crème", "new_string": "Thé"}),
        text("done"),
    )
    out = agent(workspace, fake_anthropic, "-p", "edit", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    read, edit = tool_results(fake_anthropic)
    assert "Café crème" in read and "binary" not in read
    assert (workspace / "menu.txt").read_bytes() == "Prix: 3 €\r\nThé\r\n".encode("cp1252")
