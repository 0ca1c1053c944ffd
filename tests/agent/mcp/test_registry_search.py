"""Tools added after start, deferred schemas, mcp_search, and when the runtime defers."""

from __future__ import annotations

import pytest

from agent_cli.context.tokens import TokenCounter
from agent_cli.extensions.mcp.config import Loaded
from agent_cli.extensions.mcp.runtime import McpRuntime, McpSettings
from agent_cli.extensions.mcp.search import McpSearchTool
from agent_cli.extensions.mcp.tool import McpTool, ToolInfo
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import InputError, default_tools, validate_input
from tests.agent.mcp.conftest import toolbox_spec

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


class Caller:
    async def call(self, server, tool, arguments):
        raise AssertionError("not called")


def _mcp(name: str, description: str = "") -> McpTool:
    return McpTool("srv", ToolInfo(name, description, SCHEMA, True), Caller())


def test_deferred_tools_are_callable_but_not_offered_until_revealed():
    registry = default_tools()
    changes = []
    registry.on_change(lambda: changes.append(len(registry.schemas())))
    before = len(registry.schemas())
    registry.add([_mcp("visible")])
    registry.add([_mcp("hidden")], deferred=True)
    assert registry.get("mcp__srv__hidden") is not None
    names = [s["name"] for s in registry.schemas()]
    assert "mcp__srv__visible" in names and "mcp__srv__hidden" not in names
    assert registry.add([_mcp("visible")]) == ["mcp__srv__visible"]  # a taken name is refused
    assert registry.reveal(["mcp__srv__hidden", "read_file"]) == ["mcp__srv__hidden"]
    assert changes == [before + 1, before + 2]


def test_open_object_schemas_accept_extra_parameters():
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
    assert validate_input(open_schema, {"a": "x", "b": 1}) == {"a": "x", "b": 1}
    typed = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert validate_input(typed, {"n": "3"}) == {"n": 3}
    with pytest.raises(InputError, match="unexpected parameter"):
        validate_input({"type": "object", "properties": {"a": {"type": "string"}}}, {"b": 1})


async def test_mcp_search_finds_and_loads_schemas():
    registry = default_tools()
    registry.add(
        [_mcp("create_issue", "Create a GitHub issue"), _mcp("list_commits", "List commits")], deferred=True
    )
    search = McpSearchTool(registry)
    ctx = ToolContext(workspace=__import__("pathlib").Path("."))
    found = await search.run({"query": "github issue"}, ctx)
    assert "mcp__srv__create_issue: Create a GitHub issue" in found.output
    assert "list_commits" not in found.output
    loaded = await search.run({"select": ["mcp__srv__create_issue", "mcp__srv__nope"]}, ctx)
    assert (
        "loaded: mcp__srv__create_issue" in loaded.output
        and "no such MCP tool: mcp__srv__nope" in loaded.output
    )
    assert "mcp__srv__create_issue" in [s["name"] for s in registry.schemas()]
    nothing = await search.run({"select": ["mcp__srv__nope"]}, ctx)
    assert nothing.is_error


async def test_schemas_over_the_share_of_the_budget_load_on_demand(tmp_path):
    loaded = Loaded((toolbox_spec(TOOLBOX_EXTRA_TOOLS="30"),), ())
    runtime = McpRuntime(loaded, workspace=tmp_path, settings=McpSettings(startup_wait=60))
    registry = default_tools()
    try:
        notices = await runtime.before_turn(registry, budget=20_000, counter=TokenCounter("x"))
    finally:
        await runtime.aclose()
    offered = [s["name"] for s in registry.schemas()]
    assert "mcp_search" in offered and not any(n.startswith("mcp__") for n in offered)
    assert registry.get("mcp__box__extra_007") is not None and registry.is_deferred("mcp__box__extra_007")
    assert any("loads them with mcp_search" in text for text, _ in notices)


async def test_a_small_tool_list_is_offered_directly_and_failures_become_notices(tmp_path):
    from agent_cli.extensions.mcp.config import ServerSpec

    ghost = ServerSpec("ghost", "test", "stdio", command="no-such-mcp-server-xyz")
    loaded = Loaded((toolbox_spec(), ghost), ("/x/.mcp.json: a problem",))
    runtime = McpRuntime(loaded, workspace=tmp_path, settings=McpSettings(startup_wait=60))
    registry = default_tools()
    try:
        notices = await runtime.before_turn(registry, budget=200_000, counter=TokenCounter("x"))
        assert await runtime.before_turn(registry, budget=200_000, counter=TokenCounter("x")) == []
    finally:
        await runtime.aclose()
    offered = [s["name"] for s in registry.schemas()]
    assert "mcp__box__echo" in offered and "mcp_search" not in offered
    assert notices[0] == ("/x/.mcp.json: a problem", "warning")
    assert ("mcp server 'ghost' failed: command not found: no-such-mcp-server-xyz", "warning") in notices
