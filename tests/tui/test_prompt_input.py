"""The prompt: multi-line editing, history, slash-command completion."""

from __future__ import annotations

from fake_backend import FakeBackend
from tui_helpers import type_text

from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.user_message import UserMessage


async def test_shift_enter_and_ctrl_j_insert_newlines_enter_sends() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "one")
        await pilot.press("shift+enter")
        await type_text(pilot, "two")
        await pilot.press("ctrl+j")
        await type_text(pilot, "three")
        assert app.prompt.text == "one\ntwo\nthree"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert backend.submitted == ["one\ntwo\nthree"]
        assert app.query_one(UserMessage).text == "one\ntwo\nthree"


async def test_empty_prompt_sends_nothing() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("space", "enter")
        await pilot.pause()
        assert backend.submitted == []


async def test_history_up_and_down() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        for text in ("first", "second"):
            await type_text(pilot, text)
            await pilot.press("enter")
            await app.workers.wait_for_complete()
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.text == "second"
        await pilot.press("up")
        assert app.prompt.text == "first"
        await pilot.press("up")  # the oldest: stays
        assert app.prompt.text == "first"
        await pilot.press("down")
        assert app.prompt.text == "second"
        await pilot.press("down")
        assert app.prompt.text == "draft"  # back to what was being typed


async def test_up_moves_within_a_multiline_prompt_before_browsing() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        app.prompt.history.add("earlier")
        await type_text(pilot, "a")
        await pilot.press("ctrl+j")
        await type_text(pilot, "b")
        await pilot.press("up")  # the cursor goes to the first line
        assert app.prompt.text == "a\nb"
        await pilot.press("up")  # now on the first line: history
        assert app.prompt.text == "earlier"


async def test_slash_completion_with_tab() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/mo")
        await pilot.pause()
        assert [c.label for c in app.prompt.completions] == ["/model [name]"]
        assert app.query_one("#completions").display
        await pilot.press("tab")
        await pilot.pause()
        assert app.prompt.text == "/model "
        # the argument: model names
        assert [c.label for c in app.prompt.completions] == [
            "claude-sonnet-5-5",
            "claude-opus-5-5",
            "claude-haiku-5-5",
        ]
        await type_text(pilot, "claude-o")
        await pilot.pause()
        assert [c.label for c in app.prompt.completions] == ["claude-opus-5-5"]
        await pilot.press("tab")
        await pilot.pause()
        assert app.prompt.text == "/model claude-opus-5-5"
        assert not app.query_one("#completions").display
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert backend.submitted == ["/model claude-opus-5-5"]


async def test_permissions_argument_completion_and_arrow_selection() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/permissions ")
        await pilot.pause()
        assert [c.label for c in app.prompt.completions] == ["ask", "auto-edit", "yolo"]
        await pilot.press("down", "tab")
        await pilot.pause()
        assert app.prompt.text == "/permissions auto-edit"


async def test_enter_on_a_completion_runs_a_command_without_arguments() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/he")
        await pilot.pause()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert backend.submitted == ["/help"]


async def test_escape_closes_the_completion_list() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/c")
        await pilot.pause()
        assert {c.label for c in app.prompt.completions} >= {
            "/compact [focus]",
            "/context",
            "/clear",
            "/cost",
        }
        await pilot.press("escape")
        await pilot.pause()
        assert app.prompt.completions == []
        assert app.prompt.text == "/c"
