from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.recall import RecallTool
from agent_cli.tools.registry import default_tools
from agent_cli.tools.todo import TodoTool


class DictStore:
    def __init__(self, items: dict[str, str]) -> None:
        self.items = items

    def get(self, ref: str) -> str | None:
        return self.items.get(ref)

    def refs(self) -> list[str]:
        return list(self.items)


# -- todo_write ------------------------------------------------------------------------------------------


async def test_todo_replaces_state_in_place(ctx: ToolContext, call) -> None:
    state = ctx.todo_state
    state.append({"content": "old", "status": "pending"})
    todos = [
        {"content": "read the code", "status": "completed"},
        {"content": "write the fix", "status": "in_progress"},
        {"content": "run the tests", "status": "pending"},
    ]
    result = await call("todo_write", todos=todos)
    assert not result.is_error
    assert ctx.todo_state is state and state == todos
    assert result.output == (
        "Todo list (1/3 completed):\n[x] read the code\n[~] write the fix\n[ ] run the tests"
    )


async def test_todo_takes_claude_codes_active_form(ctx: ToolContext, call) -> None:
    """A model used to Claude Code's TodoWrite sends `activeForm`; it was refused as unknown."""
    todos = [{"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"}]
    result = await call("todo_write", todos=todos)
    assert not result.is_error, result.output
    assert ctx.todo_state == todos and result.output.endswith("[~] Run the tests")


async def test_todo_bad_items_leave_state_alone(ctx: ToolContext, call) -> None:
    ctx.todo_state.append({"content": "keep me", "status": "pending"})
    bad_status = await call("todo_write", todos=[{"content": "x", "status": "done"}])
    assert bad_status.is_error and "status" in bad_status.output
    empty = await call("todo_write", todos=[{"content": " ", "status": "pending"}])
    assert empty.is_error and "content" in empty.output
    assert ctx.todo_state == [{"content": "keep me", "status": "pending"}]


async def test_todo_empty_list_clears(ctx: ToolContext, call) -> None:
    ctx.todo_state.append({"content": "x", "status": "pending"})
    result = await call("todo_write", todos=[])
    assert ctx.todo_state == [] and "cleared" in result.output


def test_todo_is_pinned_not_compactable() -> None:
    assert TodoTool.read_only and not TodoTool.compactable


# -- recall ----------------------------------------------------------------------------------------------


@pytest.fixture
def store_ctx(ws: Path) -> ToolContext:
    text = "".join(f"{i:05d}\n" for i in range(10_000))  # 60,000 chars
    return ToolContext(workspace=ws, store=DictStore({"toolu_big": text, "span-1": "summary source"}))


async def test_recall_pages_through_the_original(store_ctx: ToolContext) -> None:
    tool = RecallTool()
    original = store_ctx.store.get("toolu_big")
    first = await tool.run({"ref": "toolu_big"}, store_ctx)
    assert first.output.startswith("[toolu_big: chars 0–20000 of 60000]\n00000\n")
    assert first.output.endswith("[… 40000 more chars; call again with offset=20000]")
    pieces, offset = [], 0
    while True:
        page = await tool.run({"ref": "toolu_big", "offset": offset, "limit": 25_000}, store_ctx)
        body = page.output.split("\n", 1)[1]
        start, end = page.meta["chars"]
        pieces.append(body[: end - start])
        if end >= page.meta["total_chars"]:
            break
        offset = end
    assert "".join(pieces) == original


async def test_recall_small_item_whole(store_ctx: ToolContext) -> None:
    result = await RecallTool().run({"ref": "span-1"}, store_ctx)
    assert result.output == "[span-1: chars 0–14 of 14]\nsummary source"


async def test_recall_unknown_ref_lists_known_ones(store_ctx: ToolContext) -> None:
    result = await RecallTool().run({"ref": "toolu_nope"}, store_ctx)
    assert result.is_error
    assert "unknown ref 'toolu_nope'" in result.output
    assert "toolu_big" in result.output and "span-1" in result.output


async def test_recall_offset_past_end_and_no_store(store_ctx: ToolContext, ws: Path) -> None:
    past = await RecallTool().run({"ref": "span-1", "offset": 100}, store_ctx)
    assert past.is_error and "past the end" in past.output
    none = await RecallTool().run({"ref": "x"}, ToolContext(workspace=ws))
    assert none.is_error and "no recall store" in none.output


def test_recall_description_names_what_carries_a_ref() -> None:
    description = default_tools().get("recall").description
    assert "<persisted-output>" in description and "cleared" in description and "compacted" in description
    assert not RecallTool.compactable and RecallTool.read_only
