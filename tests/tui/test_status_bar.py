"""The context gauge, the warning line and the rest of the status bar, live during a turn."""

from __future__ import annotations

import pytest
from fake_backend import FakeBackend, Pause
from rich.cells import cell_len
from textual.widgets import Static
from tui_helpers import type_text, wait_until

from agent_cli.core.events import ContextStatus, ContextUpdate, TextDelta, UsageUpdate
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.context_gauge import gauge_bar, gauge_label, gauge_level, warning_text
from agent_cli.tui.widgets.context_warning import ContextWarning


def status(used: int, **kw) -> ContextStatus:
    return ContextStatus(used=used, budget=200_000, **kw)


@pytest.mark.parametrize(
    ("used", "label", "level"),
    [
        (51_200, "51.2k / 200k (26%)", "ok"),
        (149_999, "150k / 200k (75%)", "ok"),  # 74.9995%: still below the warning fraction
        (150_000, "150k / 200k (75%)", "warn"),
        (166_999, "167k / 200k (83%)", "warn"),
        (167_000, "167k / 200k (84%)", "danger"),
        (230_000, "230k / 200k (115%)", "danger"),
    ],
)
def test_gauge_text_and_level_follow_the_numbers(used: int, label: str, level: str) -> None:
    assert gauge_label(status(used)) == label
    assert gauge_level(status(used)) == level


def test_the_auto_compaction_mark_is_shown_only_with_auto_compact() -> None:
    bar, mark = gauge_bar(status(0), width=20)
    assert mark == 16 and bar[16] == "|" and len(bar) == 20
    bar, mark = gauge_bar(status(0, auto_compact=False), width=20)
    assert mark is None and "|" not in bar
    bar, _ = gauge_bar(status(100_000), width=20)
    assert bar.count("█") == 10


async def test_gauge_moves_live_and_changes_colour_at_the_thresholds() -> None:
    script = [
        ContextUpdate(status=status(51_200)),
        Pause("a"),
        ContextUpdate(status=status(152_000)),
        Pause("b"),
        ContextUpdate(status=status(180_000)),
        UsageUpdate(cost_usd=0.0321, cache_hit_rate=0.875),
        Pause("c"),
        TextDelta(text="ok"),
    ]
    backend = FakeBackend({"go": script}, status=status(10_000))
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        gauge = app.status_bar.gauge
        warning = app.query_one(ContextWarning)
        assert gauge.label_text == "10k / 200k (5%)"
        await type_text(pilot, "go")
        await pilot.press("enter")

        await wait_until(pilot, lambda: "a" in backend.reached)
        assert gauge.label_text == "51.2k / 200k (26%)"
        assert gauge.has_class("-ok") and not warning.display

        backend.release("a")
        await wait_until(pilot, lambda: "b" in backend.reached)
        assert gauge.has_class("-warn") and not gauge.has_class("-ok")
        assert warning.display
        assert warning.text == "context 76% full — /compact to summarize now; auto-compaction at 83.5%"

        backend.release("b")
        await wait_until(pilot, lambda: "c" in backend.reached)
        assert gauge.has_class("-danger")
        assert gauge.label_text == "180k / 200k (90%)"
        assert "$0.0321" in app.status_bar.details_text
        assert "cache 88%" in app.status_bar.details_text
        backend.release("c")
        await app.workers.wait_for_complete()


async def test_warning_line_without_auto_compaction() -> None:
    backend = FakeBackend(status=status(160_000, auto_compact=False))
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)):
        warning = app.query_one(ContextWarning)
        assert warning.display
        assert warning.text == "context 80% full — /compact to summarize now; auto-compaction is off"
        assert "|" not in str(app.status_bar.gauge.render())


async def test_status_bar_shows_model_cost_cache_and_mode() -> None:
    app = create_app(backend=FakeBackend(permission_mode="auto-edit"))
    async with app.run_test(size=(100, 30)):
        assert app.status_bar.details_text == "claude-sonnet-5-5 · $0.0123 · cache 94% · auto-edit"


def test_the_warning_starts_exactly_at_the_warning_fraction() -> None:
    assert warning_text(status(149_000)) == ""
    assert warning_text(status(150_000)) == (
        "context 75% full — /compact to summarize now; auto-compaction at 83.5%"
    )


@pytest.mark.parametrize(
    ("width", "shown", "bar"),
    [
        (120, "claude-sonnet-5-5 · $0.0123 · cache 94% · ask", True),
        (80, "claude-sonnet-5-5 · $0.0123 · ask", True),  # the cache rate goes first
        (72, "claude-sonnet-5-5 · ask", True),  # then the cost
        (50, "claude-sonnet-5-5 · ask", False),  # then the bar; its numbers stay
    ],
)
async def test_a_narrow_status_bar_drops_the_least_needed_parts_first(
    width: int, shown: str, bar: bool
) -> None:
    """At 50 columns the bar used to end `… claude-so`: the model and the mode stay readable."""
    app = create_app(backend=FakeBackend(status=status(51_200)))
    async with app.run_test(size=(width, 24)) as pilot:
        details = app.status_bar.query_one(".status-details", Static)
        await wait_until(pilot, lambda: "$" in app.status_bar.details_text)  # the cost has come
        await wait_until(pilot, lambda: str(details.render()) == shown)
        gauge = app.status_bar.gauge
        assert gauge.bar_shown == bar and ("░" in str(gauge.render())) == bar
        assert "51.2k / 200k (26%)" in str(gauge.render())
        assert cell_len(shown) <= details.content_size.width  # nothing of it is cut off
