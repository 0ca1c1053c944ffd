"""A prompt, end to end: the person's message, the streamed answer, tool calls, errors, notices."""

from __future__ import annotations

from fake_backend import FakeBackend, Pause, tool_call
from tui_helpers import type_text, wait_until

from agent_cli.core import events as ev
from agent_cli.core.types import Block, Message
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.thinking import Thinking
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.user_message import UserMessage

BASH = tool_call("t1", "bash", command="pytest -q")


def script_with_tool() -> list:
    return [
        ev.TextDelta(text="Running "),
        ev.TextDelta(text="the **tests**."),
        ev.ToolStarted(call=BASH, target="pytest -q"),
        Pause("tool-running"),
        ev.ToolFinished(call=BASH, target="pytest -q", output="42 passed", duration=1.25),
        ev.TextDelta(text="All green."),
    ]


async def test_prompt_shows_user_message_streamed_text_and_tool_call_running_then_done() -> None:
    backend = FakeBackend({"run the tests": script_with_tool()})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "run the tests")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "tool-running" in backend.reached)

        assert [m.text for m in app.query(UserMessage)] == ["run the tests"]
        assert app.prompt.text == ""
        tool = app.query_one(ToolCall)
        assert (tool.tool, tool.target, tool.status) == ("bash", "pytest -q", "running")
        assert "running" in str(app.query_one(".tool-header").render())
        assert app.activity.text.startswith("working") and app.activity.display

        backend.release("tool-running")
        await app.workers.wait_for_complete()
        await pilot.pause()

        assert tool.status == "done"
        header = str(app.query_one(".tool-header").render())
        assert "✓ 1.2s" in header
        assert tool.body_text == "42 passed"
        answers = [a.text for a in app.query(AssistantMessage)]
        assert answers == ["Running the **tests**.", "All green."]
        assert "Running the tests." in app.query(AssistantMessage).first().query_one(
            "Markdown"
        ).source.replace("**", "")
        assert app.activity.text == "" and not app.activity.display
        assert backend.submitted == ["run the tests"]


async def test_tool_output_preview_expands_to_the_whole_output() -> None:
    output = "\n".join(f"line {i}" for i in range(1, 31))
    script = [
        ev.ToolStarted(call=BASH, target="seq 30"),
        ev.ToolFinished(call=BASH, target="seq 30", output=output, duration=0.2),
    ]
    app = create_app(backend=FakeBackend({"go": script}))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        tool = app.query_one(ToolCall)
        assert tool.body_text.splitlines() == [f"line {i}" for i in range(1, 9)]
        assert "22 more lines" in str(app.query_one(".tool-body").render())
        await pilot.click(ToolCall)
        assert tool.expanded
        assert tool.body_text.splitlines()[-1] == "line 30"


async def test_failed_tool_and_edit_diff() -> None:
    edit = tool_call("t2", "edit_file", path="src/a.py")
    diff = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    script = [
        ev.ToolStarted(call=BASH, target="false"),
        ev.ToolFinished(call=BASH, target="false", output="exit code 1", is_error=True, duration=0.1),
        ev.ToolStarted(call=edit, target="src/a.py"),
        ev.ToolFinished(call=edit, target="src/a.py", output="edited src/a.py", duration=0.0, display=diff),
    ]
    app = create_app(backend=FakeBackend({"go": script}))
    async with app.run_test(size=(100, 40)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        failed, edited = list(app.query(ToolCall))
        assert failed.status == "error"
        assert "✗" in str(failed.query_one(".tool-header").render())
        assert edited.status == "done"
        assert edited.body_text == diff  # the diff, not the model's one-line result


async def test_thinking_is_collapsed_and_expandable() -> None:
    script = [
        ev.ThinkingDelta(text="The parser drops "),
        ev.ThinkingDelta(text="trailing commas."),
        ev.TextDelta(text="Found it."),
    ]
    app = create_app(backend=FakeBackend({"why": script}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "why")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        thinking = app.query_one(Thinking)
        assert thinking.collapsed
        assert thinking.text == "The parser drops trailing commas."
        assert "thought (5 words)" in thinking.title
        await pilot.click("Thinking CollapsibleTitle")
        assert not thinking.collapsed


async def test_errors_notices_and_retries_are_shown() -> None:
    script = [
        ev.Retrying(attempt=1, delay=2.0, reason="overloaded"),
        ev.Notice(text="cache thrash: the system prompt changed", level="warning"),
        ev.ErrorEvent(
            error_kind="auth", message="invalid x-api-key", hint="set ANTHROPIC_API_KEY to a valid key"
        ),
    ]
    app = create_app(backend=FakeBackend({"hi": script}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        notices = [n.text for n in app.query(Notice)]
        assert "overloaded — retrying in 2.0s (attempt 1)" in notices
        assert "cache thrash: the system prompt changed" in notices
        error = app.query_one(ErrorMessage)
        assert (error.message, error.hint, error.kind) == (
            "invalid x-api-key",
            "set ANTHROPIC_API_KEY to a valid key",
            "auth",
        )


async def test_a_non_streamed_message_is_shown_whole() -> None:
    message = Message("assistant", (Block.text_block("Complete answer."),))
    app = create_app(backend=FakeBackend({"hi": [ev.AssistantMessage(message=message)]}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [a.text for a in app.query(AssistantMessage)] == ["Complete answer."]


async def test_a_prompt_sent_while_a_turn_runs_is_queued_then_run() -> None:
    backend = FakeBackend({"first": [Pause("hold"), ev.TextDelta(text="one")]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "hold" in backend.reached)
        await type_text(pilot, "second")
        await pilot.press("enter")
        await pilot.pause()
        assert any("queued" in n.text for n in app.query(Notice))
        assert backend.submitted == ["first"]
        backend.release("hold")
        await wait_until(pilot, lambda: backend.submitted == ["first", "second"] and not app.turn_running)
        await app.workers.wait_for_complete()
        assert [m.text for m in app.query(UserMessage)] == ["first", "second"]


async def test_a_backend_that_raises_becomes_an_error_and_the_app_stays_usable() -> None:
    class Broken(FakeBackend):
        async def submit(self, text):  # type: ignore[override]
            yield ev.TextDelta(text="partial")
            raise RuntimeError("connection reset")

    app = create_app(backend=Broken())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "connection reset" in app.query_one(ErrorMessage).message
        assert not app.turn_running
        assert app.is_running
