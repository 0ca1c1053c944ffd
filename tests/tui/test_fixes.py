"""The rough edges a daily user hit (issue 12): each one seen as a person would."""

from __future__ import annotations

from fake_backend import FakeBackend, Pause
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownParagraph
from tui_helpers import type_text, wait_until

from agent_cli.agent.api import COMMANDS, SessionInfo
from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.core import events as ev
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.sessions_screen import session_label
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.notice import Notice


def _real_session(workspace, responses=()) -> AgentSession:
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    return compose_session(
        config, ScriptedProvider(Script(responses=list(responses))), SessionSetup(workspace, None, True)
    )


async def _command(app, pilot, text: str) -> None:
    app.prompt.set_text(text)
    await pilot.pause()
    app.prompt.hide_completions()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_interrupted_is_shown_once_when_the_loop_says_it() -> None:
    # the real loop emits Notice("interrupted") and then TurnFinished("interrupted")
    script = [ev.TextDelta(text="Working"), ev.Notice("interrupted", "warning")]
    backend = FakeBackend({"go": [*script, Pause("never")]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "never" in backend.reached)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        await pilot.pause()
        assert [n.text for n in app.query(Notice) if n.text == "interrupted"] == ["interrupted"]


async def test_interrupted_is_still_shown_when_the_backend_does_not_say_it() -> None:
    backend = FakeBackend({"go": [ev.TextDelta(text="Working"), Pause("never")]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "never" in backend.reached)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        await pilot.pause()
        assert [n.text for n in app.query(Notice) if n.text == "interrupted"] == ["interrupted"]


async def test_an_unknown_command_shows_one_error_panel(workspace) -> None:
    app = create_app(backend=_real_session(workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await _command(app, pilot, "/foo")
        errors = [o for o in app.query(CommandOutput) if o.is_error]
        assert len(errors) == 1 and "Unknown command /foo" in errors[0].text
        assert not app.query(ErrorMessage)  # no second panel from the turn's end


async def test_help_table_keeps_its_columns_with_a_pipe_in_a_cell(workspace) -> None:
    app = create_app(backend=_real_session(workspace))
    async with app.run_test(size=(140, 60)) as pilot:
        await _command(app, pilot, "/help")
        [output] = app.query(CommandOutput)
        markdown = output.query_one(Markdown)
        await wait_until(pilot, lambda: bool(markdown.query("MarkdownTable")))
        rows = markdown.query("MarkdownTable").first()._rows  # the parsed cells, row by row
        assert all(len(row) == 2 for row in rows), [row for row in rows if len(row) != 2]
        spec = next(c for c in COMMANDS if c.name == "permissions")
        assert "|" in spec.args  # the case this test is about
        permissions = next(row for row in rows if "/permissions" in str(row[0]))
        assert f"/permissions {spec.args}" in str(permissions[0])


def test_one_turn_is_one_turn() -> None:
    def info(turns: int) -> SessionInfo:
        return SessionInfo(id="s1", started_at="2026-11-23T10:00:00", turns=turns, first_prompt="hi", path="")

    assert " 1 turn " in session_label(info(1)).plain
    assert " 2 turns " in session_label(info(2)).plain


async def test_a_stale_completion_is_never_accepted() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/m")
        await pilot.pause()
        assert app.prompt.completions  # /model, /memory
        # the person typed on before the list followed, then pressed Enter
        app.prompt.text_area.load_text("/model claude-opus-5-5")
        app.prompt.enter_pressed()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert backend.submitted == ["/model claude-opus-5-5"]


async def test_page_up_and_down_scroll_the_transcript_while_typing() -> None:
    backend = FakeBackend({"long": [ev.TextDelta(text="\n\n".join(f"line {i}" for i in range(200)))]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "long")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: app.transcript.max_scroll_y > 0 and app.query(AssistantMessage))
        await wait_until(pilot, lambda: app.transcript.scroll_y == app.transcript.max_scroll_y)
        bottom = app.transcript.scroll_y
        await type_text(pilot, "draft")
        await pilot.press("pageup")
        await wait_until(pilot, lambda: app.transcript.scroll_y < bottom)
        assert app.prompt.text == "draft" and app.prompt.text_area.has_focus
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: app.transcript.scroll_y == bottom)


async def test_the_status_bar_cost_includes_what_compact_spent(workspace) -> None:
    answers = [{"text": f"Answer {i}. " + "Some detail. " * 300} for i in range(3)]
    session = _real_session(workspace, answers)
    session.provider.script.summaries.append("## Goal\nAnswer three questions.")
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        for prompt in ("one", "two", "three"):
            await type_text(pilot, prompt)
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.turn_running)
        before = session.totals.cost_usd
        assert f"${before:.4f}" in app.status_bar.details_text
        await _command(app, pilot, "/compact")
        assert session.totals.cost_usd > before  # the summary was paid for
        await wait_until(pilot, lambda: f"${session.totals.cost_usd:.4f}" in app.status_bar.details_text)


async def test_a_single_newline_in_an_answer_stays_a_line_break() -> None:
    """CommonMark joins "red,\\nViolets" into one line; the model meant two (as Claude Code shows)."""
    backend = FakeBackend({"go": [ev.TextDelta(text="Roses are red,\nViolets are blue.\n\nNext one.")]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and app.query(AssistantMessage))
        answer = app.query_one(AssistantMessage)
        await wait_until(pilot, lambda: len(answer.query(MarkdownParagraph)) == 2)
        first, second = answer.query(MarkdownParagraph)
        assert first.size.height == 2 and second.size.height == 1
