"""Interrupting, quitting, clearing the screen."""

from __future__ import annotations

from fake_backend import FakeBackend, Pause, tool_call
from tui_helpers import type_text, wait_until

from agent_cli.core.events import TextDelta, ToolStarted
from agent_cli.tui.app import AgentApp, create_app
from agent_cli.tui.key_actions import QUIT_HINT
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.tool_call import ToolCall


def streaming_backend() -> FakeBackend:
    call = tool_call("t1", "bash", command="sleep 100")
    script = [
        TextDelta(text="Working on "),
        TextDelta(text="it"),
        ToolStarted(call=call, target="sleep 100"),
        Pause("x"),
    ]
    return FakeBackend({"long task": script})


async def test_escape_interrupts_the_running_turn() -> None:
    backend = streaming_backend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "long task")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "x" in backend.reached)
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert backend.interrupts == 1
        assert backend.log[-1] == "finished:interrupted"
        assert any(n.text == "interrupted" for n in app.query(Notice))
        assert app.query_one(ToolCall).status == "interrupted"
        assert app.query_one(AssistantMessage).text == "Working on it"  # what arrived stays
        assert not app.turn_running and app.is_running


async def test_ctrl_c_interrupts_a_running_turn_without_quitting() -> None:
    backend = streaming_backend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "long task")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "x" in backend.reached)
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        assert backend.interrupts == 1
        assert app.is_running


async def test_escape_when_idle_does_not_interrupt() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("escape")
        assert backend.interrupts == 0 and app.is_running


async def test_ctrl_c_twice_on_an_idle_prompt_quits() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert app.activity.text == QUIT_HINT
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_on_a_draft_clears_it_keeps_it_for_up_and_does_not_quit() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")  # the first emptied the prompt: this one only offers to quit
        await pilot.pause()
        assert app.is_running and app.prompt.text == "" and app.activity.text == QUIT_HINT
        await pilot.press("up")
        assert app.prompt.text == "half a thought"


async def test_ctrl_c_presses_far_apart_do_not_quit() -> None:
    now = [100.0]
    app = AgentApp(backend=FakeBackend(), clock=lambda: now[0])
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+c")
        now[0] += 5.0
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        now[0] += 0.5
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_l_clears_the_screen_but_not_the_session() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.transcript.entries
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.transcript.entries == []
        assert backend.conversation()  # the session still has the messages
