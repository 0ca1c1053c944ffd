"""`agent --resume` without an id opens the session picker in the TUI; choosing one resumes it."""

from __future__ import annotations

from textual.widgets import Static
from tui_helpers import wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.cli.argv import PICK
from agent_cli.cli.argv import normalize as _normalize
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.sessions_screen import SessionsScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.user_message import UserMessage


def _session(workspace, responses=()) -> AgentSession:
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    return compose_session(
        config, ScriptedProvider(Script(responses=list(responses))), SessionSetup(workspace, None, True)
    )


async def _earlier_session(workspace) -> str:
    earlier = _session(workspace, [{"text": "The parser drops trailing commas."}])
    async for _ in earlier.submit("why does the parser fail?"):
        pass
    earlier.close()
    return earlier.session_id


def test_resume_without_an_id_means_pick() -> None:
    assert _normalize(["--resume"]) == ["--resume", PICK]
    assert _normalize(["--resume", "-p", "x"])[:2] == ["--resume", PICK]
    assert _normalize(["--resume", "abc"]) == ["--resume", "abc"]


async def test_agent_resume_opens_the_picker_and_resumes_the_choice(workspace) -> None:
    earlier_id = await _earlier_session(workspace)
    session = _session(workspace)

    async def loader() -> AgentSession:  # as `agent --resume` builds it: the TUI loads the backend
        return session

    app = create_app(backend_loader=loader, initial_prompt="/resume")  # what cli.tui_launch.run_tui passes
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        picker = app.screen
        assert isinstance(picker, SessionsScreen)
        assert earlier_id in [s.id for s in picker.sessions]
        assert not app.query(UserMessage)  # nothing was sent to the model
        await pilot.press("enter")  # the newest other session is first
        await wait_until(pilot, lambda: session.session_id == earlier_id and not app.turn_running)
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)))
        assert [m.text for m in app.query(UserMessage)] == ["why does the parser fail?"]
        assert "trailing commas" in app.query(AssistantMessage).last().text


async def test_the_picker_says_which_sessions_it_passed_over(workspace) -> None:
    """A session whose first line (its seal) is unreadable is not offered, and the picker says so under
    the list, as `agent sessions` does, with how to open it anyway."""
    kept = await _earlier_session(workspace)
    unreadable = await _earlier_session(workspace)
    log = workspace / ".agent" / "sessions" / unreadable / "events.jsonl"
    log.write_text("{bad\n" + log.read_text().split("\n", 1)[1])
    session = _session(workspace)

    async def loader() -> AgentSession:
        return session

    app = create_app(backend_loader=loader, initial_prompt="/resume")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        picker = app.screen
        assert [s.id for s in picker.sessions] == [kept]
        note = str(picker.query_one("#sessions-passed-over", Static).render())
        assert note == (
            f"1 session passed over (with an unreadable first line); agent --resume {unreadable} opens it anyway"
        )
