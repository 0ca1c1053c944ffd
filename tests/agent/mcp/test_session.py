"""A session with an MCP server: tools join before the turn, an interrupted MCP call closes its pair
and the server keeps serving."""

from __future__ import annotations

from agent_cli.context.invariants import check
from agent_cli.core.events import ToolStarted
from agent_cli.extensions.mcp.config import Loaded
from agent_cli.extensions.mcp.runtime import McpRuntime, McpSettings
from tests.agent.helpers import make_session, run, with_provider
from tests.agent.mcp.conftest import toolbox_spec


async def test_an_interrupted_mcp_call_and_the_next_turn(workspace):
    runtime = McpRuntime(
        Loaded((toolbox_spec(),), ()), workspace=workspace, settings=McpSettings(startup_wait=60)
    )
    session = make_session(workspace, [{"tool_calls": [{"name": "mcp__box__hang", "input": {}}]}])
    session.mcp = runtime
    try:

        async def stop(event):
            if isinstance(event, ToolStarted):
                session.interrupt()

        events = await run(session, "go", stop)
        assert events[-1].stop_reason == "interrupted"
        assert "mcp__box__hang" in [t["name"] for t in session.provider.requests[0].tools]
        [result] = session.engine.messages[-1].tool_results()
        assert "interrupted" in result.text
        assert check(session.engine.messages) == []

        provider = with_provider(
            session,
            [
                {
                    "tool_calls": [
                        {"name": "mcp__box__echo", "input": {"text": "still here"}, "id": "toolu_echo"}
                    ]
                },
                {"text": "ok"},
            ],
        )
        events = await run(session, "again")
        assert events[-1].result == "ok"
        assert "echo: still here" in provider.requests[-1].messages[-1]["content"][0]["content"]
    finally:
        await session.aclose()
