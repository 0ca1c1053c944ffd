"""edit_file: replace an exact string in a file (unique, or every occurrence with replace_all)."""

from __future__ import annotations

import difflib
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.files import atomic_write_bytes
from agent_cli.core.surrogates import bytes_from_shown, has_surrogates, shown_bytes
from agent_cli.tools.base import PathTool, ToolContext, ToolResult
from agent_cli.tools.encoding import UTF8, with_line_ending
from agent_cli.tools.fs import (
    TextFile,
    display_path,
    load_text,
    missing_path_error,
    reports_tool_errors,
    resolve_path,
    str_arg,
)
from agent_cli.tools.write import atomic_write, count_lines, encode_like, unified_diff

SNIPPET_CONTEXT = 3
SNIPPET_MAX_LINES = 30
REGION_MAX_LINES = 40


class EditTool(PathTool):
    name = "edit_file"
    description = (
        "Replace text in a file. `old_string` must match the file exactly (whitespace and indentation "
        "included, no line-number prefixes) and be unique unless `replace_all` is true; include a few "
        "surrounding lines to make it unique. `new_string` replaces it. With an empty `old_string` and a "
        "path that does not exist, the file is created with `new_string`. Read the file before editing. "
        "On no match, the closest region of the file is shown so you can correct `old_string`."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit (relative to the workspace or absolute).",
            },
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The replacement text."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence instead of requiring a unique one (default false).",
            },
        },
        "required": ["path", "old_string", "new_string"],
    }
    read_only = False
    compactable = True

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_path(ctx.workspace, str_arg(input, "path"))
        old = str_arg(input, "old_string")
        new = str_arg(input, "new_string")
        replace_all = input.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise ToolError(f"replace_all must be true or false, got {replace_all!r}")
        shown = display_path(ctx.workspace, path)
        if old == new:
            raise ToolError("old_string and new_string are identical; there is nothing to change")
        if path.is_symlink():
            path = path.resolve()
        if not path.exists():
            if old == "":
                return await _write(ctx, path, "", new, 1, 1, created=True)
            error = missing_path_error(ctx.workspace, path)
            raise ToolError(f"{error} (to create a file, use write_file or an empty old_string)")
        buffered = await ctx.files.read_text(path) if ctx.files is not None else None
        file = load_text(ctx.workspace, path) if buffered is None else TextFile(buffered, UTF8, b"")
        text = file.text
        if old == "":
            if text:
                raise ToolError(
                    f"old_string is empty but {shown} already exists and is not empty; give the exact "
                    "text to replace, or use write_file to rewrite the whole file"
                )
            return await _write(ctx, path, text, new, 1, 1, created=False, file=file)
        new = with_line_ending(new, file.newline)  # new lines in a CRLF file end in CRLF too
        starts = _occurrences(text, old)
        if not starts and has_surrogates(
            text
        ):  # the model wrote the file's odd bytes as read_file shows them
            old, new = bytes_from_shown(old), bytes_from_shown(new)
            starts = _occurrences(text, old)
        if not starts and "\r\n" in text and "\n" in old and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), with_line_ending(new, "\r\n")  # the file uses CRLF
            starts = _occurrences(text, old)
        if not starts:
            raise ToolError(_no_match_message(text, old, shown))
        if len(starts) > 1 and not replace_all:
            lines = [text.count("\n", 0, s) + 1 for s in starts]
            listed = ", ".join(str(n) for n in lines[:20]) + (", …" if len(lines) > 20 else "")
            raise ToolError(
                f"old_string occurs {len(starts)} times in {shown} (at lines {listed}); include more "
                "surrounding context to make it unique, or set replace_all=true to replace every one"
            )
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        first_line = text.count("\n", 0, starts[0]) + 1
        return await _write(
            ctx, path, text, updated, len(starts), first_line, created=False, new=new, file=file
        )


def _occurrences(text: str, needle: str) -> list[int]:
    starts, i = [], text.find(needle)
    while i != -1:
        starts.append(i)
        i = text.find(needle, i + len(needle))
    return starts


async def _write(
    ctx: ToolContext,
    path: Any,
    before: str,
    after: str,
    replacements: int,
    first_line: int,
    created: bool,
    new: str | None = None,
    file: TextFile | None = None,
) -> ToolResult:
    shown = display_path(ctx.workspace, path)
    try:
        if ctx.files is not None and await ctx.files.write_text(path, after):
            pass  # the editor has it (and saves it as it saves a buffer)
        elif file is None or not file.data:  # new, or read from the editor (which keeps its encoding)
            atomic_write(path, after)
        else:
            atomic_write_bytes(path, encode_like(file, after, shown))
    except OSError as e:
        raise ToolError(f"cannot write {shown}: {e.strerror or e}") from e
    new_text = after if new is None else new
    span = max(1, count_lines(new_text))
    last_line = first_line + span - 1
    if created:
        summary = f"Created {shown} ({count_lines(after)} line{'s' * (count_lines(after) != 1)})."
    else:
        where = f"line {first_line}" if span == 1 else f"lines {first_line}–{last_line}"
        times = "1 occurrence" if replacements == 1 else f"{replacements} occurrences"
        more = " (the first is shown)" if replacements > 1 else ""
        delta = count_lines(after) - count_lines(before)
        sign = f" ({delta:+d} line{'s' * (abs(delta) != 1)})" if delta else ""
        if new_text:
            summary = f"Edited {shown}: replaced {times}{more}; the new text is at {where}{sign}."
        else:
            summary = f"Edited {shown}: removed {times} at line {first_line}{more}{sign}."
    snippet = shown_bytes(_snippet(after, first_line, last_line))
    return ToolResult(
        output=f"{summary}\n{snippet}" if snippet else summary,
        display=shown_bytes(unified_diff(before, after, shown)),
        meta={"path": str(path), "replacements": replacements},
    )


def _snippet(text: str, first: int, last: int) -> str:
    lines = text.splitlines()
    if not lines:
        return ""
    lo = max(1, first - SNIPPET_CONTEXT)
    hi = min(len(lines), last + SNIPPET_CONTEXT, lo + SNIPPET_MAX_LINES - 1)
    out = [f"{n:>6}\t{lines[n - 1]}" for n in range(lo, hi + 1)]
    if hi < min(len(lines), last + SNIPPET_CONTEXT):
        out.append("   …")
    return "\n".join(out)


def _no_match_message(text: str, old: str, shown: str) -> str:
    message = f"old_string was not found in {shown}."
    region = _closest_region(text, old)
    if region is None:
        return message + " Read the file to get the exact text."
    start, end, ratio = region
    lines = text.splitlines()
    end = min(end, start + REGION_MAX_LINES - 1)
    body = shown_bytes("\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(start, end + 1)))
    hint = ""
    window = "\n".join(lines[start - 1 : end])
    if " ".join(window.split()) == " ".join(old.split()):
        hint = " It differs only in whitespace or indentation."
    return (
        f"{message} The closest region (lines {start}–{end}, {ratio:.0%} similar) is below.{hint} "
        f"Copy the exact text from it (without the line-number prefixes) and try again.\n{body}"
    )


def _closest_region(text: str, old: str) -> tuple[int, int, float] | None:
    """(first line, last line, similarity) of the window of the file most like `old`."""
    lines = text.splitlines()
    wanted = old.strip("\n").splitlines() or [old]
    k = len(wanted)
    if not lines:
        return None
    starts: set[int] = set()
    stripped = [line.strip() for line in lines]
    anchors = [(j, w.strip()) for j, w in enumerate(wanted) if w.strip()]
    anchors = anchors[:3] + sorted(anchors, key=lambda a: -len(a[1]))[:1]
    for j, anchor in anchors:
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(anchor)
        for i, candidate in enumerate(stripped):
            matcher.set_seq1(candidate)
            if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6:
                starts.add(max(0, i - j))
    if not starts and len(lines) <= 2000:
        starts = set(range(max(1, len(lines) - k + 1)))
    best: tuple[int, int, float] | None = None
    target = "\n".join(wanted)
    for i in sorted(starts)[:200]:
        window = "\n".join(lines[i : i + k])
        ratio = difflib.SequenceMatcher(None, window, target, autojunk=False).ratio()
        if best is None or ratio > best[2]:
            best = (i + 1, min(len(lines), i + k), ratio)
    if best is None or best[2] < 0.3:
        return None
    return best
