"""/init in the TUI on the real backend: the exploration runs in the explore sub-agent (one line in
the transcript), and the write of AGENTS.md waits in the permission modal with its diff."""

from __future__ import annotations

import json

from rich.console import Console
from textual.widgets import Static
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.permission_screen import PermissionScreen

FOUND = "Build with make; test with pytest -q."
CONTENT = f"# demo\n\n{FOUND}\n"
TASK = {"subagent_type": "explore", "description": "survey", "prompt": "report commands and layout"}
SCRIPT = [
    {"tool_calls": [{"name": "task", "input": TASK}]},  # the parent hands the exploration off
    {"tool_calls": [{"name": "read_file", "input": {"path": "Makefile"}}]},  # the child reads
    {"text": FOUND},  # the child's answer
    {"tool_calls": [{"name": "write_file", "input": {"path": "AGENTS.md", "content": CONTENT}}]},
    {"text": "AGENTS.md written."},
]


def shown(widget: Static) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


async def test_init_asks_with_the_diff_before_writing_agents_md(workspace):
    (workspace / "Makefile").write_text("test:\n\tpytest -q  # MAKEFILE-BODY\n")
    provider = ScriptedProvider(Script(responses=SCRIPT))
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    clock = FakeClock()
    app = create_app(backend=session, clock=clock)
    async with app.run_test(size=(110, 34)) as pilot:
        await type_text(pilot, "/init")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        assert not (workspace / "AGENTS.md").exists()  # nothing is written before the answer
        assert "Allow" in shown(screen.query_one("#permission-title", Static))
        assert f"+{FOUND}" in shown(screen.query_one("#permission-detail-text", Static))
        clock.advance(5)
        await wait_until(pilot, lambda: screen.armed_shown)
        await pilot.press("enter")  # allow once
        await wait_until(pilot, lambda: not app.turn_running)
    assert (workspace / "AGENTS.md").read_text() == CONTENT
    parent = [
        r for r in provider.requests if r.messages and "create `AGENTS.md`" in json.dumps(r.messages[0])
    ]
    assert len(parent) == 3  # the task call, the write, the last words
    # the child's reading stayed out of the parent's context; only its answer came back
    assert all("MAKEFILE-BODY" not in json.dumps(r.messages) for r in parent)
    assert FOUND in json.dumps(parent[1].messages)
