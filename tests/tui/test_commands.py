"""Every slash command, as a person would see it."""

from __future__ import annotations

from fake_backend import BREAKDOWN, SUMMARY, FakeBackend, demo_conversation
from textual.widgets import DataTable, Markdown
from tui_helpers import wait_until

from agent_cli.agent.api import SessionInfo
from agent_cli.core.events import Compacted
from agent_cli.core.types import Block, Message
from agent_cli.tui.app import AgentApp, create_app
from agent_cli.tui.screens.context_screen import ContextScreen
from agent_cli.tui.screens.sessions_screen import SessionsScreen
from agent_cli.tui.screens.text_screen import TextScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.compaction_notice import CompactionNotice
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.user_message import UserMessage


async def run_command(app: AgentApp, pilot, text: str) -> None:
    app.prompt.set_text(text)
    await pilot.pause()
    app.prompt.hide_completions()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


def outputs(app: AgentApp) -> list[tuple[str, str, bool]]:
    return [(o.command, o.text, o.is_error) for o in app.query(CommandOutput)]


async def test_help_lists_the_commands() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/help")
        [(name, text, is_error)] = outputs(app)
        assert name == "help" and not is_error
        for command in ("/compact", "/context", "/resume", "/permissions", "/quit"):
            assert command in text


async def test_compact_shows_a_notice_with_before_and_after() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/compact keep the parser work")
        notice = app.query_one(CompactionNotice)
        assert (notice.tier, notice.trigger, notice.tokens_before, notice.tokens_after) == (
            "T4",
            "manual",
            51_200,
            30_000,
        )
        assert notice.title == "⟳ compacted: T4 full compact · 51.2k → 30k tokens · /compact"
        assert notice.collapsed
        await pilot.click("CompactionNotice CollapsibleTitle")
        assert not notice.collapsed
        assert notice.query_one(Markdown).source == SUMMARY
        assert app.status_bar.gauge.label_text == "30k / 200k (15%)"
        assert backend.submitted == ["/compact keep the parser work"]


async def test_a_compaction_notice_is_the_programs_and_says_why_in_words() -> None:
    """T1 clearing old results is said as that, not as its trigger's name (`pressure`); the notice is
    a muted line like the program's other notices, not the bar of a prompt the person typed."""
    t1 = Compacted(tier="T1", trigger="pressure", before=12_000, after=9_500)
    backend = FakeBackend({"go": [t1]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "go")
        await wait_until(pilot, lambda: bool(app.query(CompactionNotice)))
        notice = app.query_one(CompactionNotice)
        assert notice.title == "⟳ compacted: T1 micro-compact · 12k → 9.5k tokens · cleared old tool results"
        prompt = app.query_one(UserMessage)
        assert prompt.styles.border_left[0] and prompt.styles.background.a > 0  # the person's bar
        assert not notice.styles.border_left[0] and notice.styles.background.a == 0


async def test_summary_memory_todo_cost_export_show_their_text() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        for command in ("/summary", "/memory", "/todo", "/cost", "/export notes.md"):
            await run_command(app, pilot, command)
        shown = {name: text for name, text, _ in outputs(app)}
        assert SUMMARY in shown["summary"]
        assert "Current Goal" in shown["memory"]
        assert "write the changelog" in shown["todo"]
        assert "$0.0456" in shown["cost"]
        assert "notes.md" in shown["export"]
        assert "$0.0456" in app.status_bar.details_text  # /cost's UsageUpdate reached the bar
        assert "cache 97%" in app.status_bar.details_text


async def test_long_output_opens_in_the_text_viewer() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    app.long_text_lines = 5
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/summary")
        assert isinstance(app.screen, TextScreen)
        assert SUMMARY in app.screen.text
        await pilot.press("escape")
        assert not isinstance(app.screen, TextScreen)


async def test_context_screen_shows_the_breakdown() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/context")
        assert isinstance(app.screen, ContextScreen)
        table = app.screen.query_one(DataTable)
        rows = {str(key.value): table.get_row(key) for key in table.rows}
        for category, tokens in BREAKDOWN.items():
            assert str(rows[category][2]) == f"{tokens:,}"
        assert str(rows["free"][2]) == "128,800" and str(rows["reserved"][2]) == "20,000"
        # one size for the context: the in-use row is the sum of its parts, and the headline says it
        in_use = sum(v for k, v in BREAKDOWN.items() if k not in ("free", "reserved"))
        assert str(rows["in_use"][2]) == f"{in_use:,}" == "51,200"
        assert str(rows["messages"][3]) == f"{18_900 * 100 / in_use:.1f}%"
        assert "total" not in rows
        headline = str(app.screen.query_one("#context-headline").render())
        assert "51.2k / 200k tokens in use (26% of the budget)" in headline
        await pilot.press("escape")
        assert not isinstance(app.screen, ContextScreen)


async def test_clear_empties_the_transcript_after_the_backend_clears() -> None:
    backend = FakeBackend(conversation=demo_conversation())
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.query(UserMessage)
        await run_command(app, pilot, "/clear")
        assert backend.conversation() == []
        assert not app.query(UserMessage) and not app.query(ToolCall)
        assert outputs(app) == [("clear", "Started a new conversation.", False)]


async def test_model_switch_updates_the_status_bar_and_bad_model_is_an_error() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.status_bar.model == "claude-sonnet-5-5"
        await run_command(app, pilot, "/model claude-opus-5-5")
        assert app.status_bar.model == "claude-opus-5-5"
        await run_command(app, pilot, "/model gpt-99")
        assert outputs(app)[-1] == ("model", "Unknown model `gpt-99`.", True)
        assert app.status_bar.model == "claude-opus-5-5"


async def test_permissions_mode_shows_in_the_status_bar() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 40)) as pilot:
        assert app.status_bar.details_text.endswith("· ask")
        await run_command(app, pilot, "/permissions auto-edit")
        assert app.status_bar.details_text.endswith("· auto-edit")
        assert outputs(app)[-1] == ("permissions", "Permission mode: auto-edit", False)


async def test_unknown_command_shows_the_backends_error() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/frobnicate")
        [(name, text, is_error)] = outputs(app)
        assert name == "frobnicate" and is_error and "/help" in text


async def test_resume_picker_submits_the_choice_and_repaints_the_transcript() -> None:
    old = [
        Message("user", (Block.text_block("port the cli to typer"),)),
        Message("assistant", (Block.text_block("Ported."),)),
    ]
    sessions = [
        SessionInfo("s-old", "2026-11-20T10:00:00", "port the cli to typer", 3, "/w/.agent/sessions/s-old"),
        SessionInfo("s-older", "2026-11-19T09:00:00", "write the readme", 1, "/w/.agent/sessions/s-older"),
    ]
    backend = FakeBackend(conversation=demo_conversation(), sessions=sessions, saved={"s-old": old})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/resume")
        assert isinstance(app.screen, SessionsScreen)
        await pilot.press("enter")  # the first session
        await wait_until(pilot, lambda: backend.submitted == ["/resume s-old"])
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [m.text for m in app.query(UserMessage)] == ["port the cli to typer"]
        assert [a.text for a in app.query(AssistantMessage)] == ["Ported."]
        assert outputs(app) == [("resume", "Resumed session s-old.", False)]


async def test_resume_picker_cancelled_with_escape_submits_nothing() -> None:
    sessions = [SessionInfo("s-old", "2026-11-20T10:00:00", "x", 1, "/p")]
    backend = FakeBackend(sessions=sessions)
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 40)) as pilot:
        await run_command(app, pilot, "/resume")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SessionsScreen)
        assert backend.submitted == []


async def test_quit_and_exit_leave_the_app() -> None:
    for command in ("/quit", "/exit"):
        app = create_app(backend=FakeBackend())
        async with app.run_test(size=(100, 30)) as pilot:
            await run_command(app, pilot, command)
            assert not app.is_running
