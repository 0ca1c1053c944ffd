"""The welcome header: model, budget, workspace, a session to resume, the keys; it scrolls away."""

from __future__ import annotations

from pathlib import Path

from fake_backend import FakeBackend, demo_conversation
from tui_helpers import gated_loader, type_text, wait_until

from agent_cli.agent.api import SessionInfo
from agent_cli.core import events as ev
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.welcome import WelcomeHeader, short_path


def _earlier(n: int) -> list[SessionInfo]:
    return [SessionInfo(f"s{i}", "2026-11-20T10:00:00", f"task {i}", 3, "") for i in range(n)]


async def test_the_first_screen_shows_the_welcome_header() -> None:
    backend = FakeBackend(sessions=_earlier(2))
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        header = app.query_one(WelcomeHeader)
        text = header.plain
        for part in ("claude-sonnet-5-5", "200k context budget", "ask mode", "/home/dev/parser"):
            assert part in text
        assert "2 earlier sessions here · /resume picks one" in text
        assert "Esc Esc rewind" in text and "PgUp/PgDn scroll" in text
        # on the first screen, whole (the transcript hugs the prompt, so it sits just above it)
        assert header.region.height >= 5 and app.transcript.region.contains_region(header.region)


async def test_the_header_is_painted_before_the_provider_has_loaded() -> None:
    backend = FakeBackend()
    gate, loader = gated_loader(backend)
    app = create_app(backend_loader=loader)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "loading the model provider" in app.query_one(WelcomeHeader).plain
        gate.set()
        await wait_until(pilot, lambda: "claude-sonnet-5-5" in app.query_one(WelcomeHeader).plain)


async def test_a_resumed_session_says_so() -> None:
    app = create_app(backend=FakeBackend(conversation=demo_conversation(), sessions=_earlier(1)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "resumed session s-current" in app.query_one(WelcomeHeader).plain


async def test_the_header_scrolls_away_with_the_transcript() -> None:
    backend = FakeBackend({"long": [ev.TextDelta(text="\n\n".join(f"line {i}" for i in range(80)))]})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "long")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        transcript = app.transcript
        await wait_until(pilot, lambda: transcript.max_scroll_y > 20)
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        header = app.query_one(WelcomeHeader)
        assert header.virtual_region.bottom <= transcript.scroll_y  # above the visible part
        transcript.scroll_home(animate=False)
        await wait_until(pilot, lambda: transcript.scroll_y == 0)
        assert app.transcript.children[0] is header  # it is the transcript's first entry


def test_paths_under_home_are_shortened() -> None:
    assert short_path("/home/dev/app", Path("/home/dev")) == "~/app"
    assert short_path("/home/devx/app", Path("/home/dev")) == "/home/devx/app"
