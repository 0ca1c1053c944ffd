"""glob: find files by name pattern, gitignore-aware, newest first."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.denied_reads import LeftOut
from agent_cli.tools.fs import (
    display_path,
    missing_path_error,
    reports_tool_errors,
    resolve_path,
    str_arg,
    walk,
)

MAX_ENTRIES = 1000


class GlobTool:
    name = "glob"
    description = (
        "Find files whose path matches a glob pattern, relative to `path` (default: the workspace). "
        "`*` and `?` match within one directory level, `**` matches any number of levels, `{a,b}` "
        "alternatives and `[abc]` classes work: `**/*.py` finds Python files at any depth, `*.py` only "
        "at the top, `src/**/*.{ts,tsx}` under src. Files ignored by .gitignore (and .git/) are skipped. "
        f"Results are sorted newest first (by modification time), at most {MAX_ENTRIES}; the output "
        "says how many more matched."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. `**/*.py`."},
            "path": {"type": "string", "description": "Directory to search in (default: the workspace)."},
        },
        "required": ["pattern"],
    }
    read_only = True
    compactable = True

    def target(self, input: dict[str, Any]) -> str:
        where = input.get("path") or ""
        return f"{input.get('pattern', '')}" + (f" in {where}" if where else "")

    def paths(self, input: dict[str, Any]) -> list[str]:
        pattern = input.get("pattern")
        if isinstance(pattern, str) and pattern.startswith(("/", "~")) and not input.get("path"):
            return [glob_static_prefix(os.path.expanduser(pattern))[0]]
        path = input.get("path")
        return [path] if isinstance(path, str) and path else ["."]

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str_arg(input, "pattern").strip()
        if not pattern:
            raise ToolError("pattern is empty")
        path_arg = str_arg(input, "path", required=False)
        if pattern.startswith(("/", "~")):
            absolute = os.path.expanduser(pattern)
            if path_arg:
                raise ToolError("give either an absolute pattern or a path, not both")
            path_arg, pattern = glob_static_prefix(absolute)
            if not pattern:
                raise ToolError(f"the pattern {absolute!r} has no wildcard; use ls or read_file for one path")
        root = resolve_path(ctx.workspace, path_arg or ".")
        if not root.exists():
            raise missing_path_error(ctx.workspace, root)
        if not root.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, root)} is a file, not a directory")
        left_out = LeftOut(ctx.read_guard)
        matches = await asyncio.to_thread(_find, root, pattern.removeprefix("./"), ctx.workspace, left_out)
        where = display_path(ctx.workspace, root)
        note = f"\n({left_out.note()})" if left_out.paths else ""
        if not matches:
            place = "the workspace" if where == "." else where
            return ToolResult(output=f"No files match {pattern!r} in {place}.{note}", meta={"count": 0})
        shown = [display_path(ctx.workspace, p) for p in matches[:MAX_ENTRIES]]
        text = "\n".join(shown)
        if len(matches) > MAX_ENTRIES:
            text += (
                f"\n… {len(matches) - MAX_ENTRIES} more files not shown (limit {MAX_ENTRIES}); "
                "use a narrower pattern or path."
            )
        return ToolResult(output=text + note, meta={"count": len(matches)})


def _find(root: Path, pattern: str, workspace: Path, left_out: LeftOut) -> list[Path]:
    regex = glob_to_regex(pattern)
    found: list[tuple[float, str, Path]] = []
    for entry in walk(root, workspace):
        rel = entry.path.relative_to(root).as_posix()
        if left_out.keeps(entry.path) and regex.match(rel):  # every file judged: the count names no pattern
            try:
                mtime = entry.path.stat().st_mtime
            except OSError:
                mtime = 0.0
            found.append((-mtime, rel, entry.path))
    found.sort()
    return [p for _, _, p in found]


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A shell glob as a regex over '/'-separated relative paths.

    `*` and `?` stay inside one path component, `**` spans directories (`**/` may match nothing),
    `[abc]`/`[!abc]` are classes and `{a,b}` alternatives (nestable)."""
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and j < n and pattern[j] == "/":
                    out.append(r"(?:.*/)?")
                    i = j + 1
                    continue
                if at_start and j == n:
                    out.append(r".*")
                    i = j
                    continue
                out.append(r"[^/]*")
                i = j
                continue
            out.append(r"[^/]*")
        elif c == "?":
            out.append(r"[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^/' if negate else ''}{body}]")
                i = j
        elif c == "{":
            j, alternatives = _split_braces(pattern, i)
            if j == -1:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(_translate(a) for a in alternatives) + ")")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _split_braces(pattern: str, start: int) -> tuple[int, list[str]]:
    depth, parts, current = 0, [], []
    for j in range(start + 1, len(pattern)):
        c = pattern[j]
        if c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:
                parts.append("".join(current))
                return j, parts
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(c)
    return -1, []


def glob_static_prefix(pattern: str) -> tuple[str, str]:
    """Split an absolute (or `~`) glob into the directory before its first wildcard and the rest."""
    parts = pattern.split("/")
    static: list[str] = []
    for part in parts[:-1]:
        if any(ch in part for ch in "*?[{"):
            break
        static.append(part)
    rest = "/".join(parts[len(static) :])
    return "/".join(static) or "/", rest
