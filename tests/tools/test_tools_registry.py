from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.types import ToolCall
from agent_cli.tools.base import Tool, ToolContext, ToolResult
from agent_cli.tools.registry import ToolRegistry, default_tools, run_call

ORDER = ["read_file", "write_file", "edit_file", "bash", "grep", "glob", "ls", "todo_write", "recall"]


class Exploding:
    name = "explode"
    description = "raises"
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    read_only = True
    compactable = True

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def target(self, input: dict[str, Any]) -> str:
        return ""

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise self.exc


def test_default_tools_order_and_schemas() -> None:
    registry = default_tools()
    assert registry.names() == ORDER
    assert [t.name for t in registry] == ORDER
    schemas = registry.schemas()
    assert [s["name"] for s in schemas] == ORDER
    for s in schemas:
        assert s["description"] and s["input_schema"]["type"] == "object"
    assert schemas == default_tools().schemas()  # stable bytes for the prompt cache
    assert all(isinstance(t, Tool) for t in registry)


def test_compactable_and_read_only_flags() -> None:
    registry = default_tools()
    compactable = {name for name in ORDER if registry.is_compactable(name)}
    assert compactable == set(ORDER) - {"todo_write", "recall"}
    read_only = {t.name for t in registry if t.read_only}
    assert read_only == {"read_file", "grep", "glob", "ls", "todo_write", "recall"}
    assert not registry.is_compactable("nope")


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError):
        ToolRegistry([Exploding(RuntimeError()), Exploding(RuntimeError())])


async def test_unknown_tool_names_the_available_ones(call) -> None:
    result = await call("read")
    assert result.is_error
    assert (
        "unknown tool 'read'" in result.output and "read_file" in result.output and "recall" in result.output
    )


async def test_missing_required_field(call) -> None:
    result = await call("edit_file", path="a.txt", old_string="x")
    assert result.is_error and "new_string" in result.output and "missing" in result.output


async def test_wrong_types(call) -> None:
    result = await call("read_file", path=42)
    assert result.is_error and "path must be a string" in result.output
    todos = await call("todo_write", todos=[{"content": "x", "status": 3}])
    assert todos.is_error and "todos[0].status" in todos.output
    flag = await call("grep", pattern="x", ignore_case="sometimes")
    assert flag.is_error and "ignore_case" in flag.output


async def test_unexpected_parameter(call) -> None:
    result = await call("ls", path=".", recursive=True)
    assert result.is_error and "unexpected parameter 'recursive'" in result.output


async def test_numbers_given_as_strings_are_accepted(ws: Path, call) -> None:
    (ws / "a.txt").write_text("1\n2\n3\n")
    result = await call("read_file", path="a.txt", offset="2", limit=1.0)
    assert not result.is_error and result.output.startswith("     2\t2")


async def test_unexpected_exception_becomes_an_error_result(ctx: ToolContext) -> None:
    registry = ToolRegistry([Exploding(RuntimeError("disk on fire"))])
    result = await run_call(registry, ToolCall("t1", "explode", {}), ctx)
    assert result.is_error and "RuntimeError: disk on fire" in result.output


async def test_cancellation_propagates(ctx: ToolContext) -> None:
    registry = ToolRegistry([Exploding(asyncio.CancelledError())])
    with pytest.raises(asyncio.CancelledError):
        await run_call(registry, ToolCall("t1", "explode", {}), ctx)


async def test_non_object_input(ctx: ToolContext) -> None:
    result = await run_call(default_tools(), ToolCall("t1", "ls", "not a dict"), ctx)  # type: ignore[arg-type]
    assert result.is_error and "object" in result.output
