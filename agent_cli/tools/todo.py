"""todo_write: replace the session's todo list (pinned: it survives compaction)."""

from __future__ import annotations

import copy
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.fs import reports_tool_errors

STATUSES = ("pending", "in_progress", "completed")
_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoTool:
    name = "todo_write"
    description = (
        "Replace the todo list for this session with `todos` (the whole list each time). Use it for work "
        "with three or more steps: add the steps, mark one `in_progress` before starting it and "
        "`completed` as soon as it is done. The list stays visible to you after the conversation is "
        "compacted."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The complete, updated list.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "The step, in a few words."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["content", "status"],
                },
            },
        },
        "required": ["todos"],
    }
    # Claude Code's TodoWrite items carry `activeForm` ("Running the tests"): a model used to it sends
    # one, which is taken and kept, not refused, and not offered (every request would carry its words)
    accepts: dict[str, Any] = copy.deepcopy(input_schema)
    accepts["properties"]["todos"]["items"]["properties"]["activeForm"] = {"type": "string"}
    read_only = True
    compactable = False

    def target(self, input: dict[str, Any]) -> str:
        todos = input.get("todos")
        return f"{len(todos)} items" if isinstance(todos, list) else ""

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        todos = input.get("todos")
        if not isinstance(todos, list):
            raise ToolError("todos must be a list of {content, status} items")
        items: list[dict[str, Any]] = []
        for n, item in enumerate(todos, start=1):
            if not isinstance(item, dict):
                raise ToolError(f"todo {n} must be an object with content and status, got {item!r}")
            content = item.get("content")
            status = item.get("status")
            if not isinstance(content, str) or not content.strip():
                raise ToolError(f"todo {n} needs a non-empty content string")
            if status not in STATUSES:
                raise ToolError(f"todo {n} has status {status!r}; use one of {', '.join(STATUSES)}")
            items.append({"content": content.strip(), "status": status})
            if isinstance(active := item.get("activeForm"), str) and active.strip():
                items[-1]["activeForm"] = active.strip()  # Claude Code's TodoWrite sends it: kept
        ctx.todo_state[:] = items
        return ToolResult(output=render_todos(items), meta={"todos": len(items)})


def render_todos(items: list[dict[str, Any]]) -> str:
    """The list as the model and the person see it (also used to re-attach it after compaction)."""
    if not items:
        return "Todo list cleared (no items)."
    done = sum(1 for item in items if item.get("status") == "completed")
    lines = [f"Todo list ({done}/{len(items)} completed):"]
    lines += [f"{_MARKS.get(str(item.get('status')), '[ ]')} {item.get('content', '')}" for item in items]
    active = [item for item in items if item.get("status") == "in_progress"]
    if len(active) > 1:
        lines.append(f"(note: {len(active)} items are in progress; keep one at a time)")
    return "\n".join(lines)
