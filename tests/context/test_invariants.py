"""The §3 invariants: each violation is reported, a valid view passes."""

from __future__ import annotations

import pytest

from agent_cli.context.invariants import InvariantError, assert_valid, check, is_summary
from agent_cli.core.types import Block, BlockMeta, Message, Trust

ASSISTANT = BlockMeta(Trust.ASSISTANT, "assistant")
REMINDER = BlockMeta(Trust.SYSTEM, "reminder", tag="system-reminder")


def user(*blocks: Block | str) -> Message:
    return Message("user", tuple(Block.text_block(b) if isinstance(b, str) else b for b in blocks))


def assistant(text: str = "", *uses: Block) -> Message:
    blocks = ((Block.text_block(text, ASSISTANT),) if text else ()) + uses
    return Message("assistant", blocks)


def use(id: str) -> Block:
    return Block.tool_use(id, "read_file", {"path": "a.py"})


def result(id: str, text: str = "ok") -> Block:
    return Block.tool_result(id, text)


def valid() -> list[Message]:
    return [
        user("fix the bug"),
        assistant("looking", use("t1"), use("t2")),
        user(result("t1"), result("t2"), Block.text_block("<system-reminder>x</system-reminder>", REMINDER)),
        assistant("done"),
        user("thanks"),
    ]


def test_a_valid_view_passes():
    assert check(valid()) == []
    assert_valid(valid())
    assert check([]) == []


def test_a_trailing_tool_use_is_still_running_not_broken():
    assert check([user("go"), assistant("", use("t1"))]) == []


@pytest.mark.parametrize(
    ("view", "expected"),
    [
        ([assistant("hi"), user("x")], "first message must be from the user"),
        ([user("a"), user("b")], "roles must alternate"),
        ([user("a"), assistant("x"), assistant("y")], "roles must alternate"),
        ([user("a"), assistant("x"), user(result("nope"))], "answers no tool_use"),
        ([user("a"), assistant("", use("t1")), user("no result")], "has no tool_result"),
        ([user("a"), assistant("", use("t1")), assistant("x")], "has no tool_result"),
        ([user("a"), Message("assistant", (result("t1"),))], "tool_result in an assistant message"),
        ([user(use("t1"))], "tool_use in a user message"),
        (
            [
                user("a"),
                assistant("", use("t1")),
                user(result("t1")),
                assistant("", use("t1")),
                user(result("t1")),
            ],
            "used twice",
        ),
        ([user("a"), assistant("", use("t1")), user(result("t1"), result("t1"))], "second tool_result"),
        ([user("a"), assistant("", use("t1")), user("words", result("t1"))], "out of order"),
        (
            [
                user(
                    Block.text_block("words"),
                    Block.text_block("<system-reminder>r</system-reminder>", REMINDER),
                )
            ],
            "out of order",
        ),
        (
            [user("a"), assistant("", use("t1")), user(Block.text_block("<r/>", REMINDER), result("t1"))],
            "out of order",
        ),
        ([user("   ")], "empty text block"),
        ([Message("user", ())], "no content blocks"),
    ],
)
def test_each_violation_is_reported(view, expected):
    found = check(view)
    assert any(expected in v for v in found), found
    with pytest.raises(InvariantError) as info:
        assert_valid(view)
    assert expected in str(info.value)
    assert isinstance(info.value, AssertionError)


def test_the_budget_rule():
    assert check(valid(), budget=1_000, tokens=999) == []
    assert check(valid(), budget=1_000, tokens=1_000) == []
    [violation] = check(valid(), budget=1_000, tokens=1_001)
    assert "over the budget" in violation


def test_a_summary_is_recognised_by_its_source():
    assert is_summary(Block.text_block("s", BlockMeta(Trust.SYSTEM, "compactor", tag="summary")))
    assert not is_summary(Block.text_block("words"))
