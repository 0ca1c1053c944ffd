"""The permission modal: Enter allows once, `a` always, Esc or `d` denies; nothing runs before."""

from __future__ import annotations

import pytest
from fake_backend import Ask, FakeBackend, tool_call
from textual.widgets import Button
from tui_helpers import type_text, wait_until

from agent_cli.core.events import TextDelta
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.permission_screen import PermissionScreen
from agent_cli.tui.widgets.tool_call import ToolCall

RM = tool_call("p1", "bash", command="rm -rf build")


def backend() -> FakeBackend:
    ask = Ask(
        call=RM, target="rm -rf build", reason="bash asks in `ask` mode", output="removed", duration=0.3
    )
    return FakeBackend({"clean": [ask, TextDelta(text="Cleaned.")]})


@pytest.mark.parametrize(
    ("key", "decision"),
    [("enter", "allow_once"), ("a", "allow_always"), ("escape", "deny"), ("d", "deny")],
)
async def test_each_key_resolves_the_future(key: str, decision: str) -> None:
    fake = backend()
    app = create_app(backend=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "clean")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))

        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        assert (screen.tool, screen.target, screen.reason) == (
            "bash",
            "rm -rf build",
            "bash asks in `ask` mode",
        )
        # Nothing ran while the question is open.
        assert fake.log == ["submit:clean", "ask:bash"]
        assert app.query_one(ToolCall).status == "pending"

        await pilot.press(key)
        await app.workers.wait_for_complete()
        await pilot.pause()

        assert not isinstance(app.screen, PermissionScreen)
        assert fake.decisions == [decision]
        tool = app.query_one(ToolCall)
        if decision == "deny":
            assert "run:bash" not in fake.log
            assert tool.status == "denied"
        else:
            assert fake.log.index(f"decision:{decision}") < fake.log.index("run:bash")
            assert tool.status == "done" and tool.body_text == "removed"


async def test_the_buttons_answer_too() -> None:
    fake = backend()
    app = create_app(backend=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "clean")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        app.screen.query_one("#allow_always", Button).press()
        await app.workers.wait_for_complete()
        assert fake.decisions == ["allow_always"]


async def test_interrupting_while_asked_closes_the_modal_and_denies() -> None:
    fake = backend()
    app = create_app(backend=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "clean")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, PermissionScreen)
        assert "run:bash" not in fake.log
        assert fake.interrupts == 1
