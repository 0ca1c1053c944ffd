"""The pure pieces: number formats, completion, history, the /context bar."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_cli.agent.api import CommandSpec, find_mentions
from agent_cli.tui.completion import argument_choices, complete, file_completions
from agent_cli.tui.double_press import DoublePress
from agent_cli.tui.formatting import (
    first_lines,
    format_cost,
    format_duration,
    format_percent,
    format_threshold,
    format_tokens,
)
from agent_cli.tui.history import PromptHistory
from agent_cli.tui.screens.context_screen import bar_cells, ordered_breakdown


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0"), (950, "950"), (1_000, "1k"), (51_200, "51.2k"), (200_000, "200k"), (1_234_567, "1.2M")],
)
def test_format_tokens(n: int, text: str) -> None:
    assert format_tokens(n) == text


def test_other_formats() -> None:
    assert format_cost(0.0123) == "$0.0123"
    assert format_percent(0.256) == "26%"
    assert format_threshold(0.835) == "83.5%" and format_threshold(0.75) == "75%"
    assert (
        format_duration(1.25) == "1.2s"
        and format_duration(0.04) == "40ms"
        and format_duration(125) == "2m 05s"
    )
    assert first_lines("a\nb\nc", 2) == ("a\nb", 1)
    assert first_lines("a\nb", 2) == ("a\nb", 0)


SPECS = [
    CommandSpec("compact", "[focus]", "summarize"),
    CommandSpec("context", "", "breakdown"),
    CommandSpec("model", "[name]", "model"),
    CommandSpec("resume", "<id>", "resume"),
]


def test_command_names_complete_by_prefix() -> None:
    got = complete("/co", SPECS, {})
    assert [(c.value, c.label, c.final) for c in got] == [
        ("/compact ", "/compact [focus]", True),
        ("/context", "/context", True),
    ]
    assert complete("/context", SPECS, {}) == []  # complete already
    assert complete("/resume", SPECS, {})[0].final is False  # <id> is required
    assert complete("hello /co", SPECS, {}) == []
    assert complete("/co\nmore", SPECS, {}) == []


def test_arguments_complete_from_choices() -> None:
    choices = argument_choices(SPECS, {"model": ["claude-opus-5-5", "claude-haiku-5-5"]})
    assert choices["permissions"] == ("ask", "auto-edit", "yolo")
    assert [c.value for c in complete("/model claude-h", SPECS, choices)] == ["/model claude-haiku-5-5"]
    assert complete("/model claude-haiku-5-5", SPECS, choices) == []
    assert complete("/compact keep the tests", SPECS, choices) == []


def test_history_walks_back_and_returns_to_the_draft() -> None:
    history = PromptHistory(["a", "b"])
    history.add("b")  # no duplicate in a row
    assert history.entries == ["a", "b"]
    assert history.next() is None
    assert history.previous("draft") == "b"
    assert history.previous("b") == "a"
    assert history.previous("a") is None
    assert history.next() == "b"
    assert history.next() == "draft"
    assert not history.browsing


def test_context_bar_cells_fill_the_width_and_show_small_categories() -> None:
    cells = bar_cells([1, 1_000_000, 0, 5], 50)
    assert sum(cells) == 50 and cells[0] >= 1 and cells[2] == 0 and cells[3] >= 1
    assert bar_cells([0, 0], 10) == [0, 0]


def test_breakdown_order_keeps_unknown_categories_before_free() -> None:
    keys = [row[0] for row in ordered_breakdown({"messages": 5, "hooks": 3, "free": 1})]
    assert keys.index("hooks") < keys.index("free") < keys.index("reserved")
    assert keys[0] == "system"


def test_double_press_needs_two_presses_within_the_window() -> None:
    now = [0.0]
    guard = DoublePress(2.0, lambda: now[0])
    assert not guard.press()
    now[0] = 1.5
    assert guard.press()
    now[0] = 2.0
    assert not guard.press()  # starts over after a double press
    now[0] = 4.5
    assert not guard.press()  # too late: this one starts a new pair
    now[0] = 5.0
    assert guard.press()


NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), min_size=1)


@settings(max_examples=400, deadline=None)
@given(NAMES, st.sampled_from(["", "/", ".py"]))
def test_at_completion_writes_a_mention_the_parser_reads_back_as_the_file(name: str, tail: str) -> None:
    """Whatever a file is called (`#`, quotes, a leading `@`, a trailing dot, spaces…), the `@` word
    completion puts in the prompt is read back by the mention parser as that file, whole."""
    path = name + tail
    (chosen,) = file_completions("explain @x and more", 8, 10, [path])
    assert [m.path for m in find_mentions(chosen.value) if not m.pasted] == [path]
    assert chosen.value.startswith("explain @") and chosen.value.endswith(" and more")
