"""The TUI on the real backend: an AgentSession with the scripted provider, the real loop, engine,
tools and log. The gauge must show the engine's own numbers; a permission answered in the modal
lets bash run; /context shows the engine's breakdown."""

from __future__ import annotations

from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.context_gauge import ContextGauge, gauge_label
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.user_message import UserMessage

SCRIPT = [
    {"text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi > made.txt"}}]},
    {"text": "Made **made.txt**."},
]


def _session(workspace) -> AgentSession:
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    return compose_session(
        config, ScriptedProvider(Script(responses=SCRIPT)), SessionSetup(workspace, None, True)
    )


async def test_a_turn_on_the_real_backend_matches_the_engines_numbers(workspace):
    session, clock = _session(workspace), FakeClock()
    app = create_app(backend=session, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "PermissionScreen")
        assert not (workspace / "made.txt").exists()  # nothing runs before the answer
        clock.advance(5)  # the modal takes an answer only after a pause
        await wait_until(pilot, lambda: app.screen.armed_shown)
        await pilot.press("enter")  # allow once
        await wait_until(pilot, lambda: not app.turn_running)
        assert (workspace / "made.txt").read_text() == "hi\n"
        gauge = app.query_one(ContextGauge)
        assert gauge.label_text == gauge_label(session.status())
        assert f"/ {session.status().budget // 1000}k" in gauge.label_text


async def test_esc_esc_opens_the_rewind_picker_which_restores_code_and_conversation(workspace):
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    session = compose_session(config, ScriptedProvider(Script(responses=SCRIPT)), SessionSetup(workspace))
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and (workspace / "made.txt").exists())
        await pilot.press("escape", "escape")  # on an empty prompt, as in Claude Code
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "RewindScreen")
        await pilot.press("escape")  # cancelled: nothing was typed, so no "/rewind" is left behind
        await wait_until(pilot, lambda: app.screen.__class__.__name__ != "RewindScreen")
        assert [m.text for m in app.query(UserMessage)] == ["make a file"]
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "RewindScreen")
        await pilot.press("enter")  # prompt 1 (the newest is listed first)
        await pilot.press("enter")  # restore code and conversation
        await wait_until(pilot, lambda: not (workspace / "made.txt").exists() and not app.turn_running)
        await wait_until(pilot, lambda: not session.engine.messages)
        assert session.prompt_points() == []
        # the rewound prompt is back in the input, ready to edit and send again (as in Claude Code)
        await wait_until(pilot, lambda: app.prompt.text == "make a file")


async def test_a_code_rewind_from_the_picker_keeps_the_file_the_person_made_after_the_turn(workspace):
    """The person writes notes.md after the agent's turn; Esc Esc, prompt 1, code only: the agent's
    made.txt goes, the notes stay, and the result names them."""
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    session = compose_session(config, ScriptedProvider(Script(responses=SCRIPT)), SessionSetup(workspace))
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and (workspace / "made.txt").exists())
        (workspace / "notes.md").write_text("the person's notes\n")
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "RewindScreen")
        await pilot.press("enter")  # prompt 1
        await pilot.press("down", "down", "enter")  # the code only
        await wait_until(pilot, lambda: not (workspace / "made.txt").exists() and not app.turn_running)
        await wait_until(pilot, lambda: any(o.command == "rewind" for o in app.query(CommandOutput)))
        said = next(o.text for o in app.query(CommandOutput) if o.command == "rewind")
        assert (workspace / "notes.md").read_text() == "the person's notes\n"
        assert "Kept 1 file(s) changed outside the agent's turns: notes.md." in said


async def test_escape_denies_on_the_real_backend_and_the_call_shows_denied(workspace):
    session = _session(workspace)
    app = create_app(backend=session, clock=FakeClock())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "PermissionScreen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        assert not (workspace / "made.txt").exists()
        tool = app.query_one(ToolCall)
        assert tool.status == "denied" and "denied permission" in tool.output


async def test_plan_mode_refuses_an_edit_then_offers_the_plan(workspace):
    edit = {"name": "edit_file", "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}}
    script = [{"tool_calls": [edit]}, {"text": "Plan: flip the sign in `add`."}]
    config = Config(model="scripted", provider="scripted", permission_mode="plan")
    session = compose_session(
        config, ScriptedProvider(Script(responses=script)), SessionSetup(workspace, None, True)
    )
    clock = FakeClock()
    app = create_app(backend=session, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "fix add")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "PlanScreen")
        tool = app.query_one(ToolCall)
        assert tool.status == "denied" and "plan mode" in tool.output  # refused, not asked
        assert "a - b" in (workspace / "app.py").read_text()
        assert app.screen.plan == "Plan: flip the sign in `add`."
        clock.advance(5)
        await wait_until(pilot, lambda: app.screen.armed_shown)
        await pilot.press("n")  # keep planning
        clock.advance(1)  # a letter answers once no other key follows it
        await wait_until(pilot, lambda: app.screen.__class__.__name__ != "PlanScreen")
        assert session.permission_mode == "plan"


async def test_resume_of_a_session_another_process_has_open_says_so(workspace):
    from agent_cli.tui.widgets.command_output import CommandOutput

    other = _session(workspace)
    other.log.append("user", message={"role": "user", "content": []}, prompt="elsewhere")  # on disk, locked
    session = _session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.set_text(f"/resume {other.session_id}")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.query(CommandOutput)))
        [output] = app.query(CommandOutput)
        assert output.is_error and "in use by pid" in output.text and "--fork-session" in output.text
        assert session.session_id != other.session_id
    other.close()
