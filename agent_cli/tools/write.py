"""write_file: create or overwrite a whole file, atomically."""

from __future__ import annotations

import difflib
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.files import atomic_write, atomic_write_bytes
from agent_cli.tools.base import PathTool, ToolContext, ToolResult
from agent_cli.tools.encoding import decode_file, line_ending, round_trips, unencodable, with_line_ending
from agent_cli.tools.fs import (
    TextFile,
    display_path,
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
        existing: TextFile | None = None
        buffered = await ctx.files.read_text(path) if ctx.files is not None and path.exists() else None
        if buffered is not None:  # the editor's buffer: what the person sees is what is replaced
            old = buffered
            content = with_line_ending(content, line_ending(old))
        elif path.exists():
            try:
                data = path.read_bytes()
            except OSError as e:
                raise ToolError(f"{shown}: cannot read the existing file ({e.strerror or e})") from e
            decoded = decode_file(data)
            if decoded is None:
                old, old_note = "", f" (replaced a binary file of {len(data)} bytes)"
            else:
                old, encoding = decoded
                existing = TextFile(old, encoding, data)
                content = with_line_ending(content, existing.newline)  # a CRLF file stays CRLF
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ToolError(f"cannot create {shown}: {parent} is a file, not a directory")
                break
        try:
            if ctx.files is not None and await ctx.files.write_text(path, content):
                pass  # the editor has it (and saves it as it saves a buffer)
            elif existing is None:
                atomic_write(path, content)
            else:
                atomic_write_bytes(path, encode_like(existing, content, shown))
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
            if (
                existing is not None
                and not existing.encoding.is_utf8
                and existing.encoding.errors == "strict"
            ):
                output += f" Kept its encoding ({existing.encoding.label})."
        display = unified_diff(old or "", content, shown)
        return ToolResult(output=output, display=display, meta={"path": str(path), "action": action})


# -- helpers shared with edit_file ---------------------------------------------------------------


def encode_like(file: TextFile, text: str, shown: str) -> bytes:
    """`text` in the encoding `file` was read in (its BOM kept), or a ToolError that names the
    characters it cannot hold, or says that the file's bytes would not survive a rewrite."""
    encoding = file.encoding
    if encoding.is_utf8:
        return text.encode("utf-8")
    if not round_trips(file.data, file.text, encoding):
        raise ToolError(
            f"{shown} is {encoding.label} and rewriting it would change bytes outside the edit; "
            "not changed (edit it with a tool that keeps the encoding, or convert it to UTF-8 first)"
        )
    bad = unencodable(text, encoding)
    if bad:
        listed = ", ".join(repr(ch) for ch in bad)
        raise ToolError(
            f"{shown} is {encoding.label}, which cannot hold {listed}; not changed. Use characters "
            f"{encoding.label} has (or an escape the file's language understands), or ask the person "
            "whether to convert the file to UTF-8"
        )
    return encoding.encode(text)


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
