"""`mcp_search`: when all MCP schemas together would cost too much of the budget, they are not in
the tool list; this small tool finds them by keyword and loads the ones the model selects (Claude
Code's ToolSearch). Loading a schema changes the tool list, so it is done only when asked."""

from __future__ import annotations

import re
from typing import Any

from agent_cli.context.prompts import load_prompt
from agent_cli.extensions.mcp.tool import PREFIX
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.registry import ToolRegistry

NAME = "mcp_search"
DEFAULT_RESULTS = 10
MAX_RESULTS = 50
DESCRIPTION_CHARS = 300
_WORD = re.compile(r"[a-z0-9]+")


class McpSearchTool:
    name = NAME
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Keywords to look for in tool names and descriptions.",
            },
            "select": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Full names of MCP tools whose schemas to load into your tool list.",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": f"How many matches to list (default {DEFAULT_RESULTS}).",
            },
        },
    }
    read_only = True
    compactable = True

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.description = load_prompt("mcp_search").strip()

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("query") or ", ".join(input.get("select") or []))

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(input.get("query") or "").strip()
        select = [str(name).strip() for name in input.get("select") or [] if str(name).strip()]
        if not query and not select:
            return ToolResult("give a `query` (keywords) or `select` (tool names to load)", is_error=True)
        parts: list[str] = []
        failed = False
        if select:
            text, failed = self._load(select)
            parts.append(text)
        if query:
            limit = max(1, min(MAX_RESULTS, int(input.get("max_results") or DEFAULT_RESULTS)))
            parts.append(self._search(query, limit))
        return ToolResult("\n\n".join(parts), is_error=failed and not query)

    def _mcp_tools(self) -> list[Any]:
        return [tool for tool in self.registry if tool.name.startswith(PREFIX)]

    def _load(self, names: list[str]) -> tuple[str, bool]:
        """What was loaded, in words, and whether nothing could be."""
        known = {tool.name for tool in self._mcp_tools()}
        unknown = [name for name in names if name not in known]
        shown = self.registry.reveal(name for name in names if name in known)
        already = [name for name in names if name in known and name not in shown]
        lines = []
        if shown:
            lines.append(
                f"loaded: {', '.join(shown)} (their schemas are in your tool list now; call them by name)"
            )
        if already:
            lines.append(f"already loaded: {', '.join(already)}")
        if unknown:
            lines.append(f"no such MCP tool: {', '.join(unknown)} (search with `query` to find names)")
        return "\n".join(lines), not shown and not already

    def _search(self, query: str, limit: int) -> str:
        words = set(_WORD.findall(query.lower()))
        scored = []
        for tool in self._mcp_tools():
            name_words = set(_WORD.findall(tool.name.lower()))
            text_words = set(_WORD.findall(tool.description.lower()))
            score = 3 * len(words & name_words) + len(words & text_words)
            if score or query.lower() in tool.name.lower():
                scored.append((-score, tool.name, tool))
        scored.sort(key=lambda item: (item[0], item[1]))
        if not scored:
            servers = sorted({tool.name.split("__")[1] for tool in self._mcp_tools()})
            return f"no MCP tool matches {query!r} (servers: {', '.join(servers) or 'none'})"
        lines = [
            f"{len(scored)} MCP tool(s) match {query!r}"
            + (f"; the first {limit}:" if len(scored) > limit else ":")
        ]
        for _, name, tool in scored[:limit]:
            state = "" if self.registry.is_deferred(name) else " [loaded]"
            description = " ".join(tool.description.split())
            if len(description) > DESCRIPTION_CHARS:
                description = description[: DESCRIPTION_CHARS - 1] + "…"
            lines.append(f"- {name}{state}: {description}")
        lines.append("Load the ones you need with `select`.")
        return "\n".join(lines)
