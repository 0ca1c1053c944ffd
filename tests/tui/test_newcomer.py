"""The rough edges a newcomer hit (issue 20, item 7), each seen as a person would in the TUI."""

from __future__ import annotations

import json

import pytest
from fake_backend import FakeBackend, tool_call
from textual.widgets import OptionList
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.api.options import NO_KEY, Prepared
from agent_cli.cli.tui_launch import tui_app
from agent_cli.context.model import ContextConfig
from agent_cli.core import events as ev
from agent_cli.core.persisted import persisted_text
from agent_cli.core.types import Block, Message
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.memory_screen import MemoryScreen
from agent_cli.tui.screens.text_screen import TextScreen
from agent_cli.tui.screens.trust_screen import TrustScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.context_gauge import ContextGauge
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.user_message import UserMessage
from agent_cli.tui.widgets.welcome import WelcomeHeader

LONG = "\n\n".join(f"line {i}" for i in range(120))


@pytest.mark.parametrize(
    "pagedowns",
    [
        pytest.param(8, id="paged-back-to-the-bottom"),  # more than it takes: the last find it there
        pytest.param(0, id="still-scrolled-up"),  # sending a prompt brings the view back by itself
    ],
)
async def test_after_paging_up_a_new_prompt_and_its_answer_are_in_view(pagedowns: int) -> None:
    backend = FakeBackend({"long": [ev.TextDelta(text=LONG)], "more": [ev.TextDelta(text="the new answer")]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.transcript
        await type_text(pilot, "long")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(
            pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        )
        for _ in range(3):
            await pilot.press("pageup")
        await wait_until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
        for _ in range(pagedowns):
            await pilot.press("pagedown")
        await type_text(pilot, "more")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        answer = app.query(AssistantMessage).last()
        await wait_until(pilot, lambda: "the new answer" in answer.text)
        # with no other key, the view shows the end of the new answer
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        await pilot.pause()
        assert transcript.scroll_y == transcript.max_scroll_y
        assert answer.region.y < transcript.region.bottom  # on screen


def _real_session(workspace, responses=()):
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    setup = SessionSetup(workspace, None, True)
    return compose_session(config, ScriptedProvider(Script(responses=list(responses))), setup)


async def test_model_typed_in_full_and_enter_selects_that_model_not_a_longer_one(workspace) -> None:
    session = _real_session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/model gpt-5")
        await pilot.pause()
        labels = [c.label for c in app.prompt.completions]
        assert labels[0] == "gpt-5" and "gpt-5-mini" in labels  # the exact match is offered, first
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: session.model == "gpt-5")
        await wait_until(pilot, lambda: app.status_bar.model == "gpt-5")


SEQ = "\n".join(str(i) for i in range(1, 40_001))
KEPT = persisted_text("toolu_7", SEQ, "/ws/.agent/sessions/s/tool-results/toolu_7.txt", 2_000)


async def test_an_output_kept_in_the_store_shows_as_its_preview_not_the_markup() -> None:
    call = tool_call("toolu_7", "bash", command="seq 1 40000")
    backend = FakeBackend(
        {
            "count": [
                ev.ToolStarted(call=call, target="seq 1 40000"),
                ev.ToolFinished(call=call, target="seq 1 40000", output=KEPT, duration=0.2),
            ]
        }
    )
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "count")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        widget = app.query_one(ToolCall)
        await wait_until(pilot, lambda: widget.is_finished)
        assert widget.body_text.startswith("1\n2\n3")
        assert "<persisted-output" not in widget.content and "recall tool" not in widget.content
        assert "[whole output: 228,893 chars, 40,000 lines, kept as ref toolu_7" in widget.content


async def test_a_resumed_session_shows_a_kept_paste_as_its_chip() -> None:
    paste = "\n".join(f"row {i} " + "x" * 40 for i in range(110_000))
    kept = Block.text_block(persisted_text("paste-1", paste, "/ws/tool-results/paste-1.txt", 2_000))
    conversation = [
        Message("user", (kept,), turn=1),
        Message("assistant", (Block.text_block("Got your paste."),), turn=1),
    ]
    app = create_app(backend=FakeBackend(conversation=conversation))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(UserMessage)))
        [shown] = app.query(UserMessage)
        assert shown.text == "[Pasted text: 5.6 MB, 110,000 lines]"
        assert app.prompt.history.previous("") == shown.text  # Up brings back the chip, not the markup


async def test_summary_of_an_empty_conversation_is_one_line_not_an_error(workspace) -> None:
    app = create_app(backend=_real_session(workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "/summary")
        app.prompt.hide_completions()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: bool(app.query(CommandOutput)))
        [output] = app.query(CommandOutput)
        assert not output.is_error and "Nothing to summarize yet" in output.text
        assert not app.query(ErrorMessage)
        assert not [n for n in app.query(Notice) if "internal error" in n.text]


async def test_a_crashed_turn_is_titled_once() -> None:
    crash = ev.TurnFinished(stop_reason="error", result="something broke", is_error=True)
    app = create_app(backend=FakeBackend({"go": [crash]}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: bool(app.query(ErrorMessage)))
        assert app.query_one(ErrorMessage).border_title == "error"  # was "error · error"


async def test_the_welcome_header_follows_the_mode_and_the_model() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        header = app.query_one(WelcomeHeader)
        await wait_until(pilot, lambda: "ask mode" in header.plain)
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "auto-edit mode" in header.plain)
        await type_text(pilot, "/model claude-opus-5-5")
        app.prompt.hide_completions()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: "claude-opus-5-5" in header.plain)
        assert "claude-sonnet-5-5" not in header.plain


async def test_without_a_key_the_header_says_so_and_how_to_go_on() -> None:
    app = create_app(startup_error=NO_KEY)
    async with app.run_test(size=(100, 30)) as pilot:
        header = app.query_one(WelcomeHeader)
        await wait_until(pilot, lambda: "No API key found" in header.plain)
        assert "loading the model provider" not in header.plain and "agent --demo" in header.plain


@pytest.mark.parametrize(("budget_tokens", "label"), [(200_000, "0 / 180k (0%)"), (12_000, "0 / 9.6k (0%)")])
async def test_without_a_key_the_gauge_shows_the_budget_a_session_would_have(
    workspace, monkeypatch, budget_tokens: int, label: str
) -> None:
    """Every session of the default model shows `/ 180k` (20,000 of 200,000 kept for the answer): so does
    the gauge when no session can open, not the dataclass's 200k; a smaller budget shows as itself."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    app = tui_app(Prepared(Config(context=ContextConfig(budget_tokens=budget_tokens)), workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ErrorMessage)))
        assert app.startup_error == NO_KEY
        assert app.status_bar.gauge.label_text == label


async def test_a_provider_that_fails_to_load_is_said_in_the_header() -> None:
    async def loader():
        raise RuntimeError("the SDK is not installed")

    app = create_app(backend_loader=loader)
    async with app.run_test(size=(100, 30)) as pilot:
        header = app.query_one(WelcomeHeader)
        await wait_until(pilot, lambda: "could not load the model" in header.plain)
        assert "loading the model provider" not in header.plain


async def test_the_trust_question_says_which_files_do_not_parse_and_does_not_offer_them(
    workspace, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    (workspace / ".claude").mkdir()
    settings = {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        "permissions": {"deny": ["Bash(rm:*)"]},
    }
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))
    (workspace / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "true",}')
    clock = FakeClock()
    app = tui_app(Prepared(Config(model="scripted", provider="scripted"), workspace), clock=clock)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen))
        screen = app.screen
        offered = str(screen.query_one("#trust-files").render())
        assert ".claude/settings.json — hooks (its deny rules apply either way)" in offered
        assert ".mcp.json" not in offered
        broken = str(screen.query_one("#trust-broken").render())
        assert "do not parse" in broken and ".mcp.json (invalid JSON at line 1" in broken
        clock.advance(5)
        await wait_until(pilot, lambda: screen.armed_shown)
        await pilot.press("n")
        clock.advance(1)  # a letter answers once no other key follows it
        await wait_until(pilot, lambda: app.backend is not None)
        await wait_until(pilot, lambda: any(".mcp.json does not parse" in n.text for n in app.query(Notice)))
        said = " ".join(n.text for n in app.query(Notice))
        assert "not using the hooks of .claude/settings.json (its deny rules apply)" in said


async def test_memory_opens_a_picker_of_the_memory_files_and_the_note(
    workspace, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (workspace / "AGENTS.md").write_text("# rules\n")
    app = create_app(backend=_real_session(workspace))
    async with app.run_test(size=(110, 40)) as pilot:
        await type_text(pilot, "/memory")
        app.prompt.hide_completions()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MemoryScreen))
        listed = [str(o.prompt) for o in app.screen.query_one(OptionList).options]
        assert any("AGENTS.md (yours, every workspace)" in o and "new" in o for o in listed)
        assert any(f"AGENTS.md (this workspace)\n  {workspace / 'AGENTS.md'}" == o for o in listed)
        assert "Session-memory note" in listed[-1]
        await pilot.press("up")  # the note, last
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert "No session-memory note yet" in app.screen.text


async def test_page_keys_faster_than_the_screen_refreshes_each_count() -> None:
    backend = FakeBackend({"long": [ev.TextDelta(text=LONG)]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.transcript
        await type_text(pilot, "long")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await wait_until(
            pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        )
        bottom, page = transcript.max_scroll_y, transcript.scrollable_content_region.height
        for _ in range(3):  # three PageUps before any refresh, as keys arrive in one read
            app.action_scroll_transcript(-1)
        await pilot.pause()
        assert transcript.scroll_y == max(0, bottom - 3 * page)
        for _ in range(3):
            app.action_scroll_transcript(1)
        await pilot.pause()
        assert transcript.scroll_y == bottom


async def test_the_gauge_explains_its_budget() -> None:
    app = create_app(
        backend=FakeBackend(status=ev.ContextStatus(used=3_000, budget=180_000, reserved=20_000))
    )
    async with app.run_test(size=(100, 30)) as pilot:
        gauge = app.query_one(ContextGauge)
        await wait_until(pilot, lambda: "180k" in gauge.label_text)
        assert "200,000 (budget_tokens" in str(gauge.tooltip) and "20,000 kept free" in str(gauge.tooltip)
