"""/shells in the TUI on a real session (scripted model, real background shells): the status bar
counts the running shells, between turns too; the screen lists them, Enter shows a shell's output,
`k` kills it and nothing of it is left running."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import OptionList, Static
from tui_helpers import type_text

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tools.shells.manager import group_alive
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.shells_screen import ShellsScreen

PATIENCE_STEPS = 3_000  # event-loop turns of 10 ms at most: a real process has to start and print


async def wait_for(pilot: Pilot, condition, what: str) -> None:
    for _ in range(PATIENCE_STEPS):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"gave up waiting for {what}")


def background(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "run_in_background": True}}]}


def _session(workspace: Path, responses: list[dict]) -> AgentSession:
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    provider = ScriptedProvider(Script(responses=responses))
    return compose_session(config, provider, SessionSetup(workspace, None, True))


def _tail(app) -> str:
    return str(app.screen.query_one("#shells-tail", Static).render())


async def test_shells_screen_lists_shows_the_tail_and_kills(workspace: Path) -> None:
    server = "echo serving on port 8000; while true; do sleep 0.1; done"
    finite = "until [ -e stop ]; do sleep 0.05; done; echo finished"
    session = _session(
        workspace,
        [background(server), background(finite), {"text": "Both are running."}],
    )
    app = create_app(backend=session)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await type_text(pilot, "start the server")
            await pilot.press("enter")
            await wait_for(pilot, lambda: not app.turn_running and session.loop.turn == 1, "the turn")
            bar = app.status_bar
            await wait_for(pilot, lambda: bar.shells == 2, "two running shells in the status bar")
            assert "2 shells" in bar.details_text

            (workspace / "stop").touch()  # bash_2 ends on its own, between turns
            await wait_for(pilot, lambda: bar.shells == 1, "the count to follow an end between turns")
            assert "1 shell" in bar.details_text

            await type_text(pilot, "/shells")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ShellsScreen), "the /shells screen")
            options = app.screen.query_one(OptionList)
            labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert "bash_1" in labels[0] and "running" in labels[0] and "while true" in labels[0]
            assert "bash_2" in labels[1] and "exited 0" in labels[1]

            await pilot.press("up")  # bash_2 is highlighted first (the newest)
            await pilot.press("enter")
            await wait_for(pilot, lambda: "serving on port 8000" in _tail(app), "bash_1's output")

            pgid = session.shells.get("bash_1").pgid
            await pilot.press("k")
            await wait_for(pilot, lambda: bar.shells == 0, "the kill to reach the status bar")
            assert "shell" not in bar.details_text
            note = str(app.screen.query_one("#shells-note", Static).render())
            assert "Killed bash_1" in note
            labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert "killed" in labels[0]
            assert not group_alive(pgid)
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ShellsScreen), "the screen to close")
    finally:
        session.close()


async def test_quitting_the_session_kills_what_still_runs(workspace: Path) -> None:
    session = _session(workspace, [background("sleep 300"), {"text": "started"}])
    async for _ in session.submit("start it"):
        pass
    shell = session.shells.get("bash_1")
    assert shell is not None and shell.running and group_alive(shell.pgid)
    session.close()  # what the TUI's quit does, after its event loop
    assert not group_alive(shell.pgid)
    assert session.shells.list()[0].status == "killed"
    assert not list((session.session_dir / "running").glob("*.json"))


async def test_shells_screen_without_shells_says_so_and_offers_no_keys(workspace: Path) -> None:
    """No empty list or output box, no `Enter`/`k` hint with nothing to act on: one line saying there
    are none and how one starts."""
    session = _session(workspace, [])
    app = create_app(backend=session)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await type_text(pilot, "/shells")
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, ShellsScreen), "the /shells screen")
            screen = app.screen
            empty = screen.query_one("#shells-empty", Static)
            assert empty.display and "No background shells" in str(empty.render())
            assert "bash with run_in_background" in str(empty.render())
            assert not screen.query_one(OptionList).display
            assert not screen.query_one("#shells-tail-scroll").display
            assert screen.query_one("#shells-panel").border_subtitle == "Esc: close"
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, ShellsScreen), "the screen to close")
    finally:
        session.close()
