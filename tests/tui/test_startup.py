"""Start-up: no API key, loading the backend after the first paint, resuming a conversation."""

from __future__ import annotations

from fake_backend import FakeBackend, demo_conversation
from tui_helpers import gated_loader, type_text, wait_until

from agent_cli.core.errors import ConfigError
from agent_cli.core.types import Block, Message
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.text_screen import TextScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.transcript import EarlierEntries
from agent_cli.tui.widgets.user_message import UserMessage

NO_KEY = (
    "ANTHROPIC_API_KEY is not set. Set it with `export ANTHROPIC_API_KEY=sk-ant-...` and start agent "
    "again, or run `agent --demo` to try it offline."
)


async def test_no_key_message_is_shown_and_help_and_quit_still_work() -> None:
    app = create_app(startup_error=NO_KEY)
    async with app.run_test(size=(100, 30)) as pilot:
        error = app.query_one(ErrorMessage)
        assert error.message == NO_KEY
        assert "export ANTHROPIC_API_KEY" in str(error.query_one(".error-text").render())

        await type_text(pilot, "fix the bug")
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == ""  # a submit leaves the prompt empty, even after an error
        assert len(app.query(ErrorMessage)) == 2
        assert "Up brings your prompt back" in app.query(ErrorMessage).last().hint
        await pilot.press("up")
        assert app.prompt.text == "fix the bug"  # kept, not lost
        app.prompt.set_text("")

        app.prompt.set_text("/help")
        await pilot.pause()
        app.prompt.hide_completions()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, TextScreen)
        assert "/compact" in app.screen.text and "agent --demo" in app.screen.text
        await pilot.press("escape")

        app.prompt.set_text("/quit")
        await pilot.pause()
        app.prompt.hide_completions()
        await pilot.press("enter")
        await pilot.pause()
        assert not app.is_running


async def test_backend_is_loaded_after_the_first_paint_and_prompts_wait_for_it() -> None:
    backend = FakeBackend()
    gate, loader = gated_loader(backend)
    app = create_app(backend_loader=loader)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.backend is None
        assert app.status_bar.details_text == "loading model provider…"
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await pilot.pause()
        assert backend.submitted == []
        gate.set()
        await wait_until(pilot, lambda: backend.submitted == ["hello"])
        await app.workers.wait_for_complete()
        assert app.status_bar.model == "claude-sonnet-5-5"


async def test_a_loader_failure_is_shown_with_its_hint() -> None:
    async def loader() -> FakeBackend:
        error = ConfigError("unknown provider 'foo'")
        error.hint = "use --provider anthropic or openai"
        raise error

    app = create_app(backend_loader=loader, initial_prompt="do it")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ErrorMessage)))
        error = app.query_one(ErrorMessage)
        assert error.message == "unknown provider 'foo'"
        assert error.hint == "use --provider anthropic or openai"
        assert app.prompt.text == ""
        await pilot.press("up")
        assert app.prompt.text == "do it"  # the prompt that never ran is one Up away
        assert app.is_running


async def test_initial_prompt_runs_when_the_backend_is_ready() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend, initial_prompt="summarize the repo")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(backend.submitted))
        await app.workers.wait_for_complete()
        assert backend.submitted == ["summarize the repo"]


async def test_a_resumed_conversation_is_painted() -> None:
    backend = FakeBackend(conversation=demo_conversation())
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert [m.text for m in app.query(UserMessage)] == ["fix the parser"]
        assert [a.text for a in app.query(AssistantMessage)] == ["Let me look.", "Fixed **split_fields**."]
        tool = app.query_one(ToolCall)
        assert (tool.tool, tool.target, tool.status) == ("read_file", "src/parse.py", "done")
        assert tool.has_class("-collapsed")  # tool calls are collapsed
        await pilot.click(ToolCall)
        assert not tool.has_class("-collapsed")
        assert "def split_fields" in tool.body_text
        await pilot.press("up")  # earlier prompts are in the history
        assert app.prompt.text == "fix the parser"


async def test_a_long_conversation_paints_its_last_page_and_shows_earlier_pages_on_request() -> None:
    messages = []
    for i in range(40):
        messages.append(Message("user", (Block.text_block(f"prompt {i}"),)))
        messages.append(Message("assistant", (Block.text_block(f"answer {i}"),)))
    app = create_app(backend=FakeBackend(conversation=messages))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        transcript = app.transcript
        page = transcript.page_size
        assert len(transcript.entries) == page
        assert transcript.hidden_count == 80 - page
        assert app.query(UserMessage).last().text == "prompt 39"
        marker = app.query_one(EarlierEntries)
        assert f"{80 - page} earlier entries" in str(marker.render())
        shown = page
        while transcript.hidden_count:
            transcript.scroll_home(animate=False)
            await pilot.pause()
            await pilot.click(EarlierEntries)
            await pilot.pause()
            assert len(transcript.entries) == min(80, shown + page)
            shown = len(transcript.entries)
        assert len(transcript.entries) == 80
        assert [m.text for m in app.query(UserMessage)] == [f"prompt {i}" for i in range(40)]
        assert not app.query(EarlierEntries)
