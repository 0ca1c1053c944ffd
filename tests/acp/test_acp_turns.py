"""A session's mode and the end of its turns, as the client is told them — in this process, the
AcpAgent driven directly (tests/acp/harness.py `in_process`), against the local Messages-API server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import McpServerStdio

from agent_cli.api import Options
from tests.acp.harness import Editor, in_process
from tests.fakeapi.replies import Fault, text, tool_call
from tests.fakeapi.server import FakeAnthropic


@pytest.fixture
def server(fake_anthropic: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return fake_anthropic


def modes_told(editor: Editor) -> list[str]:
    return [u.current_mode_id for u in editor.of("current_mode_update")]


async def test_permissions_yolo_in_a_prompt_is_refused_as_set_mode_refuses_it(
    server: FakeAnthropic, workspace: Path, tmp_path: Path
) -> None:
    editor = Editor()
    async with in_process(editor, Options(permission_mode="ask"), tmp_path / "scratch") as agent:
        opened = await agent.new_session(cwd=str(workspace), mcp_servers=[])
        sid = opened.session_id
        assert [m.id for m in opened.modes.available_modes] == ["ask", "auto-edit", "plan"]
        with pytest.raises(RequestError) as refused:
            await agent.set_session_mode(session_id=sid, mode_id="yolo")
        assert "yolo mode is not available" in refused.value.data["message"]

        said = await agent.prompt(session_id=sid, prompt=[text_block("/permissions yolo")])
        assert said.stop_reason == "end_turn"
        assert "/permissions failed: yolo mode is not available" in editor.text()
        assert agent.sessions[sid].session.backend.permission_mode == "ask"
        assert modes_told(editor) == []  # nothing changed

        server.push(tool_call("bash", {"command": "echo pwned > pwned.txt"}), text("done"))
        editor.answers.append("reject_once")
        await agent.prompt(session_id=sid, prompt=[text_block("do it")])
        assert len(editor.questions) == 1  # still asked: ask mode
        assert not (workspace / "pwned.txt").exists()


async def test_every_mode_change_is_told_to_the_client(
    server: FakeAnthropic, workspace: Path, tmp_path: Path
) -> None:
    editor = Editor()
    async with in_process(editor, Options(permission_mode="ask"), tmp_path / "scratch") as agent:
        sid = (await agent.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        await agent.set_session_mode(session_id=sid, mode_id="plan")
        assert modes_told(editor) == ["plan"]
        await agent.prompt(session_id=sid, prompt=[text_block("/permissions auto-edit")])
        assert modes_told(editor) == ["plan", "auto-edit"]
        await agent.set_session_mode(session_id=sid, mode_id="auto-edit")  # no change: nothing said
        assert modes_told(editor) == ["plan", "auto-edit"]


async def test_a_command_started_in_yolo_offers_it_and_may_go_back_to_it(
    server: FakeAnthropic, workspace: Path, tmp_path: Path
) -> None:
    editor = Editor()
    async with in_process(editor, Options(permission_mode="yolo"), tmp_path / "scratch") as agent:
        opened = await agent.new_session(cwd=str(workspace), mcp_servers=[])
        sid = opened.session_id
        assert opened.modes.current_mode_id == "yolo"
        assert [m.id for m in opened.modes.available_modes] == ["ask", "auto-edit", "plan", "yolo"]
        await agent.set_session_mode(session_id=sid, mode_id="ask")
        await agent.prompt(session_id=sid, prompt=[text_block("/permissions yolo")])
        assert modes_told(editor) == ["ask", "yolo"]
        assert [m.id for m in agent.sessions[sid].modes().available_modes][-1] == "yolo"


@pytest.mark.parametrize(
    ("reply", "stop"),
    [
        (text("cut sh", stop_reason="max_tokens"), "max_tokens"),
        (text("no.", stop_reason="refusal"), "refusal"),
    ],
)
async def test_the_models_stop_is_the_turns_stop_reason(
    server: FakeAnthropic, workspace: Path, tmp_path: Path, reply, stop: str
) -> None:
    editor = Editor()
    async with in_process(editor, Options(), tmp_path / "scratch") as agent:
        sid = (await agent.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        server.push(reply)
        said = await agent.prompt(session_id=sid, prompt=[text_block("hi")])
        assert said.stop_reason == stop


async def test_an_api_error_is_the_prompts_json_rpc_error(
    server: FakeAnthropic, workspace: Path, tmp_path: Path
) -> None:
    editor = Editor()
    async with in_process(editor, Options(), tmp_path / "scratch") as agent:
        sid = (await agent.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        server.push(Fault(400, "invalid_request_error", "messages: bad block"))
        with pytest.raises(RequestError) as failed:
            await agent.prompt(session_id=sid, prompt=[text_block("hi")])
        assert failed.value.code == -32603 and "bad block" in failed.value.data["message"]
        assert "[error]" not in editor.text()  # said once, as the error
        server.push(text("fine now"))
        again = await agent.prompt(session_id=sid, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn" and "fine now" in editor.text()


async def test_mcp_says_the_editors_servers_came_from_the_editor(
    server: FakeAnthropic, workspace: Path, tmp_path: Path
) -> None:
    """`/mcp`'s source column named the person's config file for the servers of `session/new`."""
    toolbox = [sys.executable, "-m", "tests.mcp_servers.toolbox"]
    mine = tmp_path / "cfg" / "agent" / "config.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text(
        f"[mcp_servers.mine]\ncommand = {json.dumps(toolbox[0])}\nargs = {json.dumps(toolbox[1:])}\n"
    )
    editor = Editor()
    box = McpServerStdio(name="box", command=toolbox[0], args=toolbox[1:], env=[])
    async with in_process(editor, Options(), tmp_path / "scratch") as agent:
        sid = (await agent.new_session(cwd=str(workspace), mcp_servers=[box])).session_id
        await agent.prompt(session_id=sid, prompt=[text_block("/mcp")])
    rows = {
        line.split("|")[1].strip(): line.split("|")[-2].strip()
        for line in editor.text().splitlines()
        if line.startswith("| box ") or line.startswith("| mine ")
    }
    assert rows == {"box": "editor", "mine": str(mine)}, editor.text()
