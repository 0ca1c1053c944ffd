"""write_file: create or overwrite a whole file, atomically."""

from __future__ import annotations

import difflib
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.files import atomic_write  # noqa: F401 - edit_file and tests import it from here
from agent_cli.tools.base import PathTool, ToolContext, ToolResult
from agent_cli.tools.fs import (
    SNIFF_BYTES,
    display_path,
    is_binary,
    reports_tool_errors,
    resolve_path,
    str_arg,
)


class WriteTool(PathTool):
    name = "write_file"
    description = (
        "Write a file with the given content, replacing it entirely if it exists; parent directories "
        "are created. The write is atomic. Use it for new files or full rewrites; prefer edit_file "
        "to change part of an existing file (read the file first)."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to write (relative to the workspace or absolute).",
            },
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
    }
    read_only = False
    compactable = True

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx.workspace, str_arg(input, "path"))
        content = str_arg(input, "content")
        shown = display_path(ctx.workspace, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path")
        if path.is_symlink():
            path = path.resolve()
        old: str | None = None
        old_note = ""
        if path.exists():
            try:
                data = path.read_bytes()
            except OSError as e:
                raise ToolError(f"{shown}: cannot read the existing file ({e.strerror or e})") from e
            if is_binary(data[:SNIFF_BYTES]):
                old, old_note = "", f" (replaced a binary file of {len(data)} bytes)"
            else:
                old = data.decode("utf-8", errors="replace")
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ToolError(f"cannot create {shown}: {parent} is a file, not a directory")
                break
        try:
            atomic_write(path, content)
        except OSError as e:
            raise ToolError(f"cannot write {shown}: {e.strerror or e}") from e
        lines = count_lines(content)
        plural = "s" * (lines != 1)
        if old is None:
            output = f"Created {shown} ({lines} line{plural})."
            action = "created"
        else:
            was = f"; was {count_lines(old)} line{'s' * (count_lines(old) != 1)}" if not old_note else ""
            output = f"Overwrote {shown} ({lines} line{plural}{was}){old_note}."
            action = "overwritten"
            if old == content:
                output += " The content is unchanged."
        display = unified_diff(old or "", content, shown)
        return ToolResult(output=output, display=display, meta={"path": str(path), "action": action})


# -- helpers shared with edit_file ---------------------------------------------------------------


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def unified_diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}" if old else "/dev/null",
        tofile=f"b/{name}",
        n=3,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
