"""The TUI on a real session with an MCP server that cannot start: its failure is a notice as soon
as it is known, without a prompt, and said once; a failed `/mcp reconnect` says it in its own box."""

from __future__ import annotations

from tui_helpers import type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.extensions.mcp.config import Loaded, ServerSpec
from agent_cli.extensions.mcp.runtime import McpRuntime, McpSettings
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.notice import Notice

FAILED = "mcp server 'broken' failed: command not found: no-such-mcp-server-xyz"


async def test_a_server_that_cannot_start_is_one_notice_at_once_and_a_failed_reconnect_adds_none(workspace):
    broken = ServerSpec("broken", ".mcp.json", "stdio", command="no-such-mcp-server-xyz")
    mcp = McpRuntime(Loaded((broken,), ()), workspace=workspace, settings=McpSettings(connect_timeout=5))
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    provider = ScriptedProvider(Script(responses=[{"text": "Hello."}]))
    session = compose_session(config, provider, SessionSetup(workspace, None, True, True), mcp=mcp)
    app = create_app(backend=session)

    def failures() -> list[str]:
        return [n.text for n in app.query(Notice) if "'broken'" in n.text]

    async with app.run_test(size=(120, 40)) as pilot:
        mcp.start()  # as api.Session.open does
        await wait_until(pilot, lambda: failures() == [FAILED])  # no prompt sent

        await type_text(pilot, "/mcp reconnect broken")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and bool(app.query(CommandOutput)))
        box = app.query(CommandOutput).last()
        assert box.is_error and box.text.startswith("MCP server 'broken' did not come back")

        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and session.engine.messages != [])
        assert failures() == [FAILED]  # said once: the reconnect's own box said the rest
    await session.aclose()
