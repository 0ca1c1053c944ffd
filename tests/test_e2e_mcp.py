"""MCP end to end as a person runs it: `agent -p` and `agent mcp list` against the local Messages-API
server, with real MCP servers (the PyPI `mcp-server-time`, and tests/mcp_servers/toolbox.py)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

from tests.e2e import agent, anthropic_env, run_agent, user_config
from tests.fakeapi.replies import text, tool_call

REPO = Path(__file__).resolve().parents[1]
TIME_AND_GHOST = {
    "mcpServers": {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
        "ghost": {"command": "no-such-mcp-server-xyz"},
    }
}


def _tools(request: dict) -> list[str]:
    return [tool["name"] for tool in request.get("tools", [])]


def _last_results(request: dict) -> str:
    return json.dumps(request["messages"][-1]["content"])


def test_a_trusted_workspace_offers_mcp_tools_and_a_failed_server_does_not_stop_the_task(
    workspace, fake_anthropic
):
    (workspace / ".mcp.json").write_text(json.dumps(TIME_AND_GHOST))
    listed = agent(workspace, fake_anthropic, "mcp", "list", "--trust-workspace")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.count("│") > 4}
    assert "connected" in rows["time"] and "failed: command not found" in rows["ghost"]
    assert int(rows["time"].split("│")[4].replace(",", "")) > 100  # the schemas' token cost

    fake_anthropic.push(
        tool_call("mcp__time__get_current_time", {"timezone": "UTC"}), text("It is noon UTC.")
    )
    out = agent(workspace, fake_anthropic, "-p", "what time is it?", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "It is noon UTC."
    assert "agent: mcp server 'ghost' failed: command not found: no-such-mcp-server-xyz" in out.stderr
    first, second = fake_anthropic.requests
    assert "mcp__time__get_current_time" in _tools(first)
    result = _last_results(second)
    assert "tool_result" in result and '\\"timezone\\": \\"UTC\\"' in result and "is_error" not in result


def test_an_untrusted_workspace_ignores_mcp_json_with_one_line(workspace, fake_anthropic):
    (workspace / ".mcp.json").write_text(json.dumps(TIME_AND_GHOST))
    out = agent(workspace, fake_anthropic, "-p", "hi")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines == [
        "agent: not using the MCP servers of .mcp.json: this workspace is not trusted "
        "(pass --trust-workspace to use them)"
    ]
    assert not any(name.startswith("mcp") for name in _tools(fake_anthropic.requests[0]))


def test_a_malformed_mcp_json_is_one_line_and_everything_else_works(workspace, fake_anthropic):
    (workspace / ".mcp.json").write_text('{"mcpServers": {"time": ')
    fake_anthropic.push(tool_call("read_file", {"path": "app.py"}), text("Read it."))
    out = agent(workspace, fake_anthropic, "-p", "read app.py", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Read it."
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(workspace / ".mcp.json") in lines[0] and "invalid JSON" in lines[0]
    assert "def add" in _last_results(fake_anthropic.requests[1])


def test_user_servers_with_many_tools_load_on_demand_and_writing_tools_ask(workspace, fake_anthropic):
    config = workspace / ".cfg" / "agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "[mcp_servers.box]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "tests.mcp_servers.toolbox"]\n'
        f'env = {{ PYTHONPATH = {json.dumps(str(REPO))}, TOOLBOX_EXTRA_TOOLS = "30" }}\n'
    )
    fake_anthropic.push(
        tool_call("mcp_search", {"query": "echo", "select": ["mcp__box__echo", "mcp__box__big"]}),
        tool_call("mcp__box__echo", {"text": "hello"}),
        tool_call("mcp__box__write_note", {"path": "note.txt", "text": "x"}),
        tool_call("mcp__box__big", {"megabytes": 5}),
        text("Done."),
    )
    out = agent(workspace, fake_anthropic, "-p", "echo hello", "--budget-tokens", "20000")
    assert out.returncode == 0, out.stderr
    requests = fake_anthropic.requests
    assert "mcp_search" in _tools(requests[0]) and not any(n.startswith("mcp__") for n in _tools(requests[0]))
    assert "loaded: mcp__box__echo, mcp__box__big" in _last_results(requests[1])
    assert "mcp__box__echo" in _tools(requests[1]) and "mcp__box__extra_001" not in _tools(requests[1])
    assert "echo: hello" in _last_results(requests[2])
    assert "Permission denied: mcp__box__write_note" in _last_results(requests[3])  # not read-only: asks
    assert not (workspace / "note.txt").exists()
    big = _last_results(requests[4])  # 5 MB: offloaded like any tool output, a preview and a ref stay
    assert "<persisted-output ref=" in big and "BIG-START" in big and len(big) < 50_000


def test_slash_mcp_prints_the_sessions_servers_and_where_they_are_configured(workspace, fake_anthropic):
    bare = agent(workspace, fake_anthropic, "-p", "/mcp")
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.strip().startswith("No MCP servers configured: add them to")
    assert len(bare.stdout.strip().splitlines()) == 1

    box = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp_servers.toolbox"],
        "env": {"PYTHONPATH": str(REPO)},
    }
    config = {"mcpServers": {"box": box, "ghost": {"command": "no-such-mcp-server-xyz"}}}
    (workspace / ".mcp.json").write_text(json.dumps(config))
    out = agent(workspace, fake_anthropic, "-p", "/mcp", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    rows = {line.split("|")[1].strip(): line for line in out.stdout.splitlines() if line.startswith("| ")}
    assert rows["box"].startswith("| box | connected | 7 | ") and rows["box"].endswith("| .mcp.json |")
    assert "| failed: command not found: no-such-mcp-server-xyz | 0 | 0 |" in rows["ghost"]
    assert fake_anthropic.requests == []  # a command: no model request


def test_a_server_that_never_answers_fails_at_the_connect_timeout_and_is_said(workspace, fake_anthropic):
    mute = {"command": sys.executable, "args": ["-c", "import time; time.sleep(100)"]}  # as `sleep 100`
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"mute": mute}}))
    user_config(workspace, "mcp_connect_timeout = 1\n")
    reason = "timed out connecting after 1 s (config mcp_connect_timeout)"
    env = {**anthropic_env(workspace, fake_anthropic), "COLUMNS": "200"}  # one table row a line
    listed = run_agent(workspace, env, "mcp", "list", "--trust-workspace")
    assert listed.returncode == 0, listed.stderr
    assert f"failed: {reason}" in next(line for line in listed.stdout.splitlines() if "mute" in line)

    fake_anthropic.push(text("Hello."))
    out = run_agent(workspace, env, "-p", "hi", "--trust-workspace", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "Hello."  # the run went on once the server failed (it used to wait 30 s)
    assert out.stderr.splitlines() == [f"agent: mcp server 'mute' failed: {reason}"]
    assert data["warnings"] == [f"mcp server 'mute' failed: {reason}"]


def test_a_server_that_prints_garbage_is_one_line_not_the_sdks_traceback(workspace, fake_anthropic):
    # one line that is not JSON-RPC, then silence until its stdin closes
    noisy = {
        "command": sys.executable,
        "args": ["-c", "import sys; print('garbage', flush=True); sys.stdin.read()"],
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"noisy": noisy}}))
    user_config(workspace, "mcp_connect_timeout = 1\n")
    fake_anthropic.push(text("Hello."))
    out = agent(workspace, fake_anthropic, "-p", "hi", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Hello."
    # one line of ours, never the SDK's traceback; it quotes the SDK's last word when the SDK read the
    # line before the timeout (on a loaded machine the server may not have started by then)
    (line,) = out.stderr.splitlines()
    assert line.startswith("agent: mcp server 'noisy' failed: timed out connecting after 1 s"), line
    assert line.endswith(("(config mcp_connect_timeout)", "from server: 'garbage')")), line


def test_an_image_an_mcp_tool_returns_reaches_the_model_as_an_image_and_stays_on_resume(
    workspace, fake_anthropic
):
    box = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp_servers.toolbox"],
        "env": {"PYTHONPATH": str(REPO)},
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"box": box}}))
    fake_anthropic.push(tool_call("mcp__box__picture", {}), text("A red picture."))
    out = agent(workspace, fake_anthropic, "-p", "show me the picture", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "A red picture."

    def image_result(request: dict) -> list:
        [result] = [
            block
            for message in request["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        return result["content"]

    caption, image = image_result(fake_anthropic.requests[1])
    assert caption["type"] == "text" and "a caption" in caption["text"]
    assert "[image from mcp server 'box': PNG, 40x30, ≈2 tokens]" in caption["text"]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG\r\n\x1a\n")

    fake_anthropic.push(text("Still red."))  # the session log keeps the image: a resume sends it again
    again = agent(workspace, fake_anthropic, "-p", "and now?", "--continue", "--trust-workspace")
    assert again.returncode == 0, again.stderr
    assert image_result(fake_anthropic.requests[2]) == [caption, image]
