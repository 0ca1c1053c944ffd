"""`agent acp` driven as an editor drives it: the SDK's client side spawns the real process, which
talks to the local Messages-API server (tests/fakeapi) with scripted tool calls."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import sys
from pathlib import Path

from acp import image_block, resource_link_block, text_block
from acp.schema import McpServerStdio
from PIL import Image

from tests.acp.harness import WAIT, Editor, connected
from tests.e2e import anthropic_env, run_agent, tool_results
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic

UNSAVED = "def add(a, b):\n    return a - b  # edited in the editor, not saved\n"


async def test_a_session_reads_asks_edits_runs_is_cancelled_and_loads_back(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    server, env = fake_anthropic, anthropic_env(workspace, fake_anthropic)
    app = str(workspace / "app.py")
    editor = Editor(buffers={app: UNSAVED})
    server.push(
        tool_call("read_file", {"path": "app.py"}, id="toolu_read"),
        tool_call(
            "edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}, id="toolu_edit"
        ),
        tool_call("bash", {"command": "echo ran > ran.txt"}, id="toolu_bash"),
        tool_call("todo_write", {"todos": [{"content": "fix add", "status": "completed"}]}, id="toolu_todo"),
        text("Fixed add()."),
    )
    editor.answers.extend(["allow_once", "allow_once"])  # the edit, then the command
    async with connected(editor, workspace, env) as (conn, _):
        caps = conn.init.agent_capabilities
        assert caps.load_session and caps.prompt_capabilities.image and caps.mcp_capabilities.http
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        assert session.modes.current_mode_id == "ask"
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("fix add")]), WAIT)
        assert done.stop_reason == "end_turn"

        # the read went through the editor: the model saw the unsaved buffer, not the disk
        assert app in editor.reads
        read_result = next(r for r in tool_results(server) if "edited in the editor" in r)
        assert "return a - b  # edited in the editor, not saved" in read_result
        # two questions, each on its tool call; the edit's shows the diff
        (edit_q, edit_options), (bash_q, _) = editor.questions
        assert edit_q.tool_call_id == "toolu_edit" and edit_q.kind == "edit"
        assert edit_options == ["allow_once", "allow_always", "reject_once"]
        diff = edit_q.content[0]
        assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", app, "a - b", "a + b")
        assert bash_q.tool_call_id == "toolu_bash" and bash_q.kind == "execute"
        # the edit went back through the editor, keeping its unsaved words; the command ran
        assert editor.writes == [(app, UNSAVED.replace("a - b", "a + b"))]
        assert (workspace / "ran.txt").read_text() == "ran\n"
        for call_id in ("toolu_read", "toolu_edit", "toolu_bash", "toolu_todo"):
            assert editor.tool_status(call_id) == "completed", call_id
        assert "Fixed add()." in editor.text()
        (plan,) = editor.of("plan")
        assert [(e.content, e.status) for e in plan.entries] == [("fix add", "completed")]
        usage = editor.of("usage_update")[-1]
        assert 0 < usage.used < usage.size and usage.cost.amount > 0 and usage.cost.currency == "USD"
        commands = await editor.until(lambda: editor.of("available_commands_update"))
        names = {c.name for c in commands[-1].available_commands}
        assert {"compact", "context", "summary"} <= names and "quit" not in names

        # cancel mid-tool: wait until the long command runs, then cancel
        server.push(tool_call("bash", {"command": "sleep 300", "timeout": 600}, id="toolu_sleep"))
        editor.answers.append("allow_once")
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("wait a while")]))
        await editor.until(lambda: editor.tool_status("toolu_sleep") == "in_progress")
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(turn, WAIT)
        assert cancelled.stop_reason == "cancelled"
        assert editor.tool_status("toolu_sleep") == "failed"

    # a new process loads the session back from its log and replays the conversation
    again = Editor()
    async with connected(again, workspace, env) as (conn, _):
        loaded = await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "ask"
        said = again.text("user_message_chunk")
        assert "fix add" in said and "wait a while" in said
        assert "Fixed add()." in again.text()
        assert again.tool_status("toolu_edit") == "completed"
        assert again.tool_status("toolu_sleep") == "failed"  # its result says it was interrupted
        replayed = [u for u in again.of("tool_call_update") if u.tool_call_id == "toolu_sleep"]
        assert "interrupted" in replayed[-1].content[-1].content.text
        # and it goes on: the next prompt's request carries the whole conversation
        server.push(text("Still here."))
        answer = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("still there?")]), WAIT
        )
        assert answer.stop_reason == "end_turn" and "Still here." in again.text()
        sent = json.dumps(server.requests[-1]["messages"])
        assert "fix add" in sent and "still there?" in sent


async def test_a_client_that_hangs_up_mid_turn_leaves_a_resumable_session(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    server, env = fake_anthropic, anthropic_env(workspace, fake_anthropic)
    editor = Editor()
    server.push(tool_call("bash", {"command": "sleep 300", "timeout": 600}, id="toolu_sleep"))
    editor.answers.append("allow_once")
    async with connected(editor, workspace, env, args=("--permission-mode", "ask")) as (conn, process):
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("wait a while")]))
        await editor.until(lambda: editor.tool_status("toolu_sleep") == "in_progress")
        process.stdin.close()  # the editor goes away mid-turn
        assert await asyncio.wait_for(process.wait(), WAIT) == 0
        turn.cancel()
    server.requests.clear()
    server.push(text("Resumed."))
    resumed = run_agent(workspace, env, "-p", "go on", "--resume", sid, "--output-format", "json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["result"] == "Resumed."
    results = tool_results(server)
    assert any("interrupted" in r for r in results), results


async def test_an_editor_without_fs_brings_an_image_a_file_link_and_its_mcp_server(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    server, env = fake_anthropic, anthropic_env(workspace, fake_anthropic)
    editor = Editor()
    picture = io.BytesIO()
    Image.new("RGB", (40, 30), "red").save(picture, "PNG")
    box = McpServerStdio(name="box", command=sys.executable, args=["-m", "tests.mcp_servers.toolbox"], env=[])
    server.push(tool_call("mcp__box__echo", {"text": "from the editor's server"}), text("Seen."))
    async with connected(editor, workspace, env, fs=False) as (conn, _):
        sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[box])).session_id
        blocks = [
            text_block("look at this"),
            image_block(base64.b64encode(picture.getvalue()).decode(), "image/png"),
            resource_link_block("README.md", (workspace / "README.md").as_uri()),
        ]
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=blocks), WAIT)
        assert done.stop_reason == "end_turn" and "Seen." in editor.text()
        first, second = server.requests[-2:]
        assert "mcp__box__echo" in [t["name"] for t in first["tools"]]  # the client's MCP server
        sent = json.dumps(first["messages"])
        assert '"type": "image"' in sent and "# demo" in sent  # the image, and the linked file read
        assert "from the editor's server" in json.dumps(second["messages"][-1])
        assert editor.reads == []  # no fs offered: the disk was read

        shown = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/context")]), WAIT)
        assert shown.stop_reason == "end_turn" and "tokens in use" in editor.text()


async def test_loading_a_session_someone_else_recorded_warns_before_its_history(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """session/load of a session a repository shipped: the editor is told it is someone else's
    before it shows that history as the conversation (the warning waited for the first prompt)."""
    from tests.test_e2e_planted_session import PLANTED, plant

    plant(workspace)
    editor = Editor()
    async with connected(editor, workspace, anthropic_env(workspace, fake_anthropic)) as (conn, _):
        await conn.load_session(cwd=str(workspace), session_id=PLANTED, mcp_servers=[])
        kinds = [u.session_update for u in editor.updates]
        first_history = kinds.index("user_message_chunk")
        said = [
            u.content.text
            for u in editor.updates[:first_history]
            if u.session_update == "agent_message_chunk"
        ]
        assert any("was not recorded by you" in s for s in said), said
        fake_anthropic.push(text("ok"))
        await asyncio.wait_for(conn.prompt(session_id=PLANTED, prompt=[text_block("hi")]), WAIT)
        assert editor.text().count("was not recorded by you") == 1  # told once
