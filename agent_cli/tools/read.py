"""read_file: numbered lines of a text file, paged by line offset and limit."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.surrogates import shown_bytes
from agent_cli.tools.base import PathTool, ToolContext, ToolResult
from agent_cli.tools.encoding import Encoding, detect
from agent_cli.tools.fs import (
    SNIFF_BYTES,
    binary_message,
    display_path,
    int_arg,
    missing_path_error,
    reports_tool_errors,
    resolve_path,
    str_arg,
)
from agent_cli.tools.images.load import is_image, load_image

MAX_LINES = 2000
MAX_LINE_CHARS = 2000


class ReadTool(PathTool):
    name = "read_file"
    description = (
        "Read a text file. Returns numbered lines like `cat -n` (line number, a tab, the line). "
        f"Reads up to {MAX_LINES} lines from `offset` (1-based line number, default 1); `limit` sets "
        f"how many (max {MAX_LINES}). Lines longer than {MAX_LINE_CHARS} characters are cut. When the "
        "file continues past what was shown, the output ends with the offset to read next. "
        "The path may be relative to the workspace or absolute. Images are shown as images; "
        "executables and archives are not. Read a file before editing it."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read (relative to the workspace or absolute).",
            },
            "offset": {"type": "integer", "minimum": 1, "description": "1-based line to start at."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LINES,
                "description": f"Number of lines to read (default and max {MAX_LINES}).",
            },
        },
        "required": ["path"],
    }
    read_only = True
    compactable = True

    def target(self, input: dict[str, Any]) -> str:
        target = str(input.get("path", ""))
        if input.get("offset") or input.get("limit"):
            target += f" (from line {input.get('offset') or 1})"
        return target

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx.workspace, str_arg(input, "path"))
        offset = int_arg(input, "offset", 1, 1)
        limit = int_arg(input, "limit", MAX_LINES, 1, MAX_LINES)
        shown = display_path(ctx.workspace, path)
        if not path.exists():
            raise missing_path_error(ctx.workspace, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory, not a file (use ls to list it)")
        if is_image(path):
            image = await asyncio.to_thread(load_image, path, shown)
            meta = {"path": str(path), "image": [image.width, image.height], "tokens": image.tokens}
            return ToolResult(output=image.caption(shown), meta=meta, image=image.part)
        buffered = await ctx.files.read_text(path) if ctx.files is not None else None
        if buffered is not None:  # the editor's buffer, saved or not (a binary file is not one)
            selected, total = split_text(buffered, offset, limit)
            return _numbered(ctx, path, shown, selected, total, offset, {"editor": True})
        try:
            size = path.stat().st_size
            with open(path, "rb") as f:
                head = f.read(SNIFF_BYTES)
            encoding = detect(head, complete=len(head) >= size)
            if encoding is None:
                raise ToolError(binary_message(ctx.workspace, path, head, size))
            try:
                selected, total = _select_lines(path, encoding, offset, limit)
            except UnicodeDecodeError:  # the head fooled us (UTF-8 at first, not later): look at it all
                encoding = detect(path.read_bytes())
                if encoding is None:
                    raise ToolError(binary_message(ctx.workspace, path, head, size)) from None
                selected, total = _select_lines(path, encoding, offset, limit)
        except PermissionError as e:
            raise ToolError(f"{shown}: permission denied") from e
        except UnicodeDecodeError as e:
            raise ToolError(f"{shown}: cannot be decoded as {encoding.label} — not shown") from e
        except OSError as e:
            raise ToolError(f"{shown}: cannot read ({e.strerror or e})") from e
        return _numbered(
            ctx,
            path,
            shown,
            selected,
            total,
            offset,
            {} if encoding.is_utf8 else {"encoding": encoding.label},
        )


def _numbered(
    ctx: ToolContext,
    path: Path,
    shown: str,
    selected: list[str],
    total: int,
    offset: int,
    extra: dict[str, Any],
) -> ToolResult:
    """The selected lines numbered, or what is wrong with the offset asked for."""
    meta: dict[str, Any] = {"path": str(path), "lines": [0, 0], "total_lines": total, **extra}
    if total == 0:
        return ToolResult(output=f"{shown} is empty (0 lines).", meta=meta)
    if offset > total:
        raise ToolError(
            f"offset {offset} is past the end of {shown}, which has {total} line{'s' * (total != 1)}"
        )
    first, last = offset, offset + len(selected) - 1
    body = "\n".join(_number(n, line) for n, line in enumerate(selected, start=first))
    if last < total:
        body += (
            f"\n… {total - last} more line{'s' * (total - last != 1)} "
            f"(file has {total}); use offset={last + 1} to continue."
        )
    meta["lines"] = [first, last]
    earlier = ctx.seen_read(path, body) if ctx.seen_read is not None else None
    if earlier:
        meta["unchanged_since"] = earlier
        return ToolResult(output=unchanged(earlier, shown, first, last), meta=meta)
    return ToolResult(output=body, meta=meta)


def unchanged(ref: str, shown: str, first: int, last: int) -> str:
    """The one-line answer to a re-read whose output is still in the context, unchanged. Its start
    is context/working_set.py:UNCHANGED_PREFIX (that read does not supersede the one it names)."""
    return (
        f"unchanged since {ref}: {shown} lines {first}-{last} are exactly as that read_file result "
        "shows them, still in the context above; refer to it instead of reading again."
    )


def split_text(text: str, offset: int, limit: int) -> tuple[list[str], int]:
    """Lines offset..offset+limit-1 of `text` (without line ends) and its line count, counted as
    `_select_lines` counts a file's."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line.rstrip("\r") for line in lines[offset - 1 : offset - 1 + limit]], len(lines) if text else 0


def _select_lines(path: Path, encoding: Encoding, offset: int, limit: int) -> tuple[list[str], int]:
    """Lines offset..offset+limit-1 (decoded, without line ends) and the file's total line count.

    The whole file is scanned once for the count; only the selected lines are kept. Lines end at
    LF only, as edit_file counts them (a CRLF's CR is dropped with it)."""
    selected: list[str] = []
    total = 0
    with open(path, "rb") as raw:
        raw.seek(len(encoding.bom))
        with io.TextIOWrapper(raw, encoding=encoding.codec, errors=encoding.errors, newline="\n") as f:
            for total, line in enumerate(f, start=1):
                if offset <= total < offset + limit:
                    selected.append(line.rstrip("\r\n"))
    return selected, total


def _number(n: int, line: str) -> str:
    line = shown_bytes(line)  # bytes of a mostly-UTF-8 file that are not UTF-8: `\xNN`
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + f"… [line cut: {len(line) - MAX_LINE_CHARS} more chars]"
    return f"{n:>6}\t{line}"
