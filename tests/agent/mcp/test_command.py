"""`/mcp` in a session: the servers' rows, reconnecting a server that died, and a server that changes
its tool list mid-session (`notifications/tools/list_changed`)."""

from __future__ import annotations

import asyncio

from agent_cli.core.events import CommandResult, Notice
from agent_cli.extensions.mcp.config import Loaded, ServerSpec
from agent_cli.extensions.mcp.runtime import McpRuntime, McpSettings
from tests.agent.helpers import make_session, run, with_provider
from tests.agent.mcp.conftest import toolbox_spec


def _session(workspace, specs, responses=()):
    runtime = McpRuntime(Loaded(tuple(specs), ()), workspace=workspace, settings=McpSettings(startup_wait=60))
    session = make_session(workspace, list(responses))
    session.mcp = runtime
    return session


async def _until(condition) -> None:
    """Wait for a condition the event loop brings about (the deadline only guards against a hang)."""
    deadline = asyncio.get_running_loop().time() + 60
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def _command(session, text) -> CommandResult:
    events = await run(session, text)
    [result] = [e for e in events if isinstance(e, CommandResult)]
    return result


async def test_mcp_lists_the_sessions_servers_with_state_tools_tokens_and_origin(workspace):
    ghost = ServerSpec("ghost", "/etc/ghost.json", "stdio", command="no-such-mcp-server-xyz")
    session = _session(workspace, [toolbox_spec(), ghost])
    try:
        result = await _command(session, "/mcp")
    finally:
        await session.aclose()
    assert not result.is_error
    rows = {row["name"]: row for row in result.data["servers"]}
    assert rows["box"]["state"] == "connected" and rows["box"]["tools"] == 7
    assert rows["box"]["schema_tokens"] > 100
    assert rows["ghost"] == {
        "name": "ghost",
        "origin": "/etc/ghost.json",
        "state": "failed: command not found: no-such-mcp-server-xyz",
        "tools": 0,
        "schema_tokens": 0,
        "not_offered": [],
    }
    assert "| box | connected | 7 |" in result.text
    assert (
        "| ghost | failed: command not found: no-such-mcp-server-xyz | 0 | 0 | /etc/ghost.json |"
        in result.text
    )


async def test_mcp_counts_only_the_tools_offered_and_names_those_whose_name_was_taken(workspace):
    # "my.box" and "my_box" both name their tools mcp__my_box__*: the first server's are offered
    hello = {"tool_calls": [{"name": "mcp__my_box__echo", "input": {"text": "hi"}, "id": "toolu_1"}]}
    session = _session(workspace, [toolbox_spec("my.box"), toolbox_spec("my_box")], [hello, {"text": "ok"}])
    try:
        before = await _command(session, "/mcp")  # before the first turn: what it will offer
        events = await run(session, "hello")
        after = await _command(session, "/mcp")
    finally:
        await session.aclose()
    offered = [t["name"] for t in session.provider.requests[0].tools if t["name"].startswith("mcp__")]
    assert len(offered) == 7
    assert "echo: hi" in session.provider.requests[-1].messages[-1]["content"][0]["content"]
    for result in (before, after):
        rows = {row["name"]: row for row in result.data["servers"]}
        assert rows["my.box"]["tools"] == 7
        assert rows["my_box"]["tools"] == 0 and rows["my_box"]["schema_tokens"] == 0
        assert rows["my.box"]["not_offered"] == []
        assert {t["tool"] for t in rows["my_box"]["not_offered"]} == {
            "echo",
            "fail",
            "big",
            "picture",
            "crash",
            "hang",
            "write_note",
        }
        assert "| my_box | connected | 0 | 0 |" in result.text
        assert (
            "- my_box: 7 not offered, their names taken by mcp server 'my.box': "
            "echo, fail, big, picture, crash, hang, write_note"
        ) in result.text
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert (
        "mcp server 'my_box': its tool 'echo' is not offered, the name mcp__my_box__echo is taken by "
        "mcp server 'my.box'"
    ) in notices


async def test_mcp_without_servers_says_where_they_are_configured(workspace):
    session = make_session(workspace, [])
    try:
        result = await _command(session, "/mcp")
        wrong = await _command(session, "/mcp restart")
    finally:
        await session.aclose()
    assert not result.is_error and len(result.text.splitlines()) == 1
    assert ".mcp.json" in result.text and "config.toml" in result.text and "[mcp_servers.NAME]" in result.text
    assert wrong.is_error and "/mcp reconnect NAME" in wrong.text


async def test_reconnect_brings_a_dead_server_and_its_tools_back(workspace):
    crash = {"tool_calls": [{"name": "mcp__box__crash", "input": {}, "id": "toolu_crash"}]}
    session = _session(workspace, [toolbox_spec()], [crash, {"text": "it crashed"}])
    try:
        await run(session, "crash it")
        await _until(lambda: session.mcp.manager.statuses()[0].state == "dead")
        listed = await _command(session, "/mcp")
        assert listed.data["servers"][0]["state"].startswith("dead: the server exited")

        unknown = await _command(session, "/mcp reconnect nope")
        assert (
            unknown.is_error
            and "no MCP server named 'nope'" in unknown.text
            and "Servers: box" in unknown.text
        )

        back = await _command(session, "/mcp reconnect")  # every failed or dead server
        assert not back.is_error, back.text
        assert back.text == "Reconnected 'box': 7 tools, offered from the next turn."
        assert (await _command(session, "/mcp")).data["servers"][0]["state"] == "connected"

        echo = {"tool_calls": [{"name": "mcp__box__echo", "input": {"text": "again"}, "id": "toolu_echo"}]}
        provider = with_provider(session, [echo, {"text": "ok"}])
        events = await run(session, "echo")
        assert events[-1].result == "ok"
        assert "echo: again" in provider.requests[-1].messages[-1]["content"][0]["content"]

        nothing = await _command(session, "/mcp reconnect")
        assert not nothing.is_error and "nothing to reconnect" in nothing.text
    finally:
        await session.aclose()


async def test_reconnect_of_a_server_that_cannot_start_says_why(workspace):
    ghost = ServerSpec("ghost", "test", "stdio", command="no-such-mcp-server-xyz")
    session = _session(workspace, [ghost])
    try:
        result = await _command(session, "/mcp reconnect ghost")
    finally:
        await session.aclose()
    assert result.is_error
    assert (
        result.text
        == "MCP server 'ghost' did not come back: failed: command not found: no-such-mcp-server-xyz"
    )


async def test_a_tool_list_change_reaches_the_next_turns_tools(workspace):
    add = {"tool_calls": [{"name": "mcp__box__add_tool", "input": {"name": "fresh"}, "id": "toolu_add"}]}
    session = _session(workspace, [toolbox_spec(TOOLBOX_DYNAMIC="1")], [add, {"text": "added"}])
    try:
        await run(session, "add a tool")
        first = [t["name"] for t in session.provider.requests[0].tools]
        assert "mcp__box__add_tool" in first and "mcp__box__fresh" not in first

        call = {"tool_calls": [{"name": "mcp__box__fresh", "input": {}, "id": "toolu_fresh"}]}
        provider = with_provider(session, [call, {"text": "done"}])
        events = await run(session, "use it")
        assert "mcp__box__fresh" in [t["name"] for t in provider.requests[0].tools]
        assert "fresh was added" in provider.requests[-1].messages[-1]["content"][0]["content"]
        assert events[-1].result == "done"
        notices = [e.text for e in events if isinstance(e, Notice)]
        assert "mcp server 'box' changed its tools: now 9" in notices
        listed = await _command(session, "/mcp")
        assert listed.data["servers"][0]["tools"] == 9  # 7, add_tool, fresh
    finally:
        await session.aclose()
