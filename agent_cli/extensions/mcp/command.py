"""`/mcp` in a session: the running session's servers (state, tools, schema tokens, where each was
configured: the rows of `agent mcp list`, without a new probe), and `/mcp reconnect [NAME]`, which
restarts one server, or every failed or stopped one. A server's tools counted are those the model
is offered; one whose name another tool has is named below the table, with whose it is."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_cli.context.tokens import TokenCounter
from agent_cli.core.events import CommandResult
from agent_cli.extensions.mcp.manager import ServerStatus
from agent_cli.extensions.mcp.runtime import McpRuntime, NotOffered, server_rows
from agent_cli.settings.config import config_paths
from agent_cli.tools.registry import ToolRegistry

MAX_NAMED = 10  # left-out tools named per server; the rest counted
USAGE = (
    "Use /mcp to list the servers, /mcp reconnect NAME to restart one, /mcp reconnect for all failed ones."
)


async def mcp_command(
    runtime: McpRuntime | None, arg: str, tools: ToolRegistry, counter: TokenCounter, workspace: Path
) -> CommandResult:
    verb, _, name = arg.partition(" ")
    if verb not in ("", "reconnect"):
        return CommandResult("mcp", f"Unknown /mcp argument {verb!r}. {USAGE}", is_error=True)
    if runtime is None or not runtime.servers:
        return _none(runtime, workspace)
    if verb == "reconnect":
        return await _reconnect(runtime, name.strip())
    await runtime.settle()  # headless: the servers start with the first turn or command
    return listing(runtime, tools, counter)


def listing(runtime: McpRuntime, tools: ToolRegistry, counter: TokenCounter) -> CommandResult:
    statuses, left_out = runtime.offered(tools)
    rows = server_rows(statuses, counter)
    lines = ["| server | state | tools | schema tokens | from |", "|---|---|---:|---:|---|"]
    lines += [
        f"| {_cell(name)} | {_cell(state)} | {count} | {tokens:,} | {_cell(origin)} |"
        for name, origin, state, count, tokens in rows
    ]
    total = sum(row[4] for row in rows)
    lines.append(f"\nMCP schemas together: {total:,} tokens. `/mcp reconnect NAME` restarts a server.")
    lines += [
        f"\n- {_not_offered(status.name, left_out)}" for status in statuses if _of(status.name, left_out)
    ]
    lines += [f"\n- {problem}" for problem in runtime.problems]
    data = {
        "servers": [
            {
                "name": name,
                "origin": origin,
                "state": state,
                "tools": count,
                "schema_tokens": tokens,
                "not_offered": [
                    {"tool": t.tool, "name": t.name, "taken_by": t.taken_by} for t in _of(name, left_out)
                ],
            }
            for name, origin, state, count, tokens in rows
        ]
    }
    return CommandResult("mcp", "\n".join(lines), data)


async def _reconnect(runtime: McpRuntime, name: str) -> CommandResult:
    known = runtime.manager.names()
    if name and name not in known:
        return CommandResult(
            "mcp", f"There is no MCP server named {name!r}. Servers: {', '.join(known)}.", is_error=True
        )
    if name:
        names = [name]
    else:
        await runtime.settle()
        names = [s.name for s in runtime.manager.statuses() if s.state in ("failed", "dead")]
        if not names:
            return CommandResult("mcp", "No MCP server has failed or stopped: nothing to reconnect.")
    statuses = await asyncio.gather(*(runtime.reconnect(n) for n in names))
    lines = [_outcome(status) for status in statuses]
    failed = any(s.state != "connected" for s in statuses)
    data = {"reconnected": [{"name": s.name, "state": s.state, "reason": s.reason} for s in statuses]}
    return CommandResult("mcp", "\n".join(lines), data, is_error=failed)


def _outcome(status: ServerStatus) -> str:
    if status.state == "connected":
        count = len(status.tools)
        return f"Reconnected {status.name!r}: {count} tool{'s' * (count != 1)}, offered from the next turn."
    return f"MCP server {status.name!r} did not come back: {status.describe()}"


def _none(runtime: McpRuntime | None, workspace: Path) -> CommandResult:
    text = (
        f"No MCP servers configured: add them to {workspace / '.mcp.json'} (used when the workspace "
        f"is trusted) or as [mcp_servers.NAME] tables in {config_paths(workspace)[0]}."
    )
    problems = runtime.problems if runtime is not None else []
    return CommandResult("mcp", "\n".join([text, *(f"- {p}" for p in problems)]), {"servers": []})


def _of(server: str, left_out: list[NotOffered]) -> list[NotOffered]:
    return [t for t in left_out if t.server == server]


def _not_offered(server: str, left_out: list[NotOffered]) -> str:
    """'box2: 2 not offered, their names taken by mcp server 'box': echo, fail'."""
    mine = _of(server, left_out)
    owners: dict[str, list[str]] = {}
    for tool in mine:
        owners.setdefault(tool.taken_by, []).append(tool.tool)
    groups = [f"by {owner}: {_names(tools)}" for owner, tools in owners.items()]
    its = "its name" if len(mine) == 1 else "their names"
    return f"{server}: {len(mine)} not offered, {its} taken {'; '.join(groups)}"


def _names(tools: list[str]) -> str:
    more = f", and {len(tools) - MAX_NAMED} more" if len(tools) > MAX_NAMED else ""
    return ", ".join(tools[:MAX_NAMED]) + more


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a `|` would end the cell, a newline the row."""
    return " ".join(text.split()).replace("|", "\\|")
