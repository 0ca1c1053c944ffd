"""ls: a tree of a directory, gitignore-aware, capped breadth first so the top levels always show."""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.surrogates import shown_name
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.denied_reads import LeftOut
from agent_cli.tools.fs import (
    Entry,
    display_path,
    missing_path_error,
    reports_tool_errors,
    resolve_path,
    str_arg,
    walk,
)

MAX_ENTRIES = 1000
MAX_WALKED = 50_000  # stop counting in huge unignored trees


class LsTool:
    name = "ls"
    description = (
        "List a directory as an indented tree (directories end with `/`), recursively. Files ignored by "
        f".gitignore (and .git/) are left out. At most {MAX_ENTRIES} entries: shallow levels are listed "
        "first and a directory whose contents were cut says how many entries it holds beyond those "
        "shown; list that directory to see them. `path` defaults to the workspace."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (default: the workspace)."},
        },
        "required": [],
    }
    read_only = True
    compactable = True

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("path") or ".")

    def paths(self, input: dict[str, Any]) -> list[str]:
        path = input.get("path")
        return [path] if isinstance(path, str) and path else ["."]

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        root = resolve_path(ctx.workspace, str_arg(input, "path", required=False) or ".")
        if not root.exists():
            raise missing_path_error(ctx.workspace, root)
        if not root.is_dir():
            raise ToolError(f"{display_path(ctx.workspace, root)} is a file, not a directory (use read_file)")
        left_out = LeftOut(ctx.read_guard)
        walked = (e for e in walk(root, ctx.workspace, include_dirs=True) if left_out.keeps(e.path))
        entries = await asyncio.to_thread(lambda: list(itertools.islice(walked, MAX_WALKED + 1)))
        partial = len(entries) > MAX_WALKED
        text = render_tree(root, display_path(ctx.workspace, root), entries[:MAX_WALKED], MAX_ENTRIES)
        if partial:
            text += f"\n(stopped counting after {MAX_WALKED} entries; the tree is larger)"
        if left_out.paths:
            text += f"\n({left_out.note('entry', 'entries')})"
        return ToolResult(output=text, meta={"entries": len(entries[:MAX_WALKED])})


def render_tree(root: Path, title: str, entries: list[Entry], cap: int) -> str:
    """The tree of `entries` (walk order), keeping the `cap` shallowest ones."""
    head = title.rstrip("/") + "/"
    if not entries:
        return f"{head}\n  (empty)"
    order = sorted(range(len(entries)), key=lambda i: (entries[i].depth, i))
    keep = set(order[:cap])
    shown = {entries[i].path for i in keep}
    hidden: dict[Path, int] = defaultdict(int)
    for i, entry in enumerate(entries):
        if i in keep:
            continue
        parent = entry.path.parent
        while parent != root and parent not in shown:
            parent = parent.parent
        hidden[parent] += 1
    lines = [head]
    children: dict[Path, list[Entry]] = defaultdict(list)
    for i, entry in enumerate(entries):
        if i in keep:
            children[entry.path.parent].append(entry)

    def emit(directory: Path, depth: int) -> None:
        indent = "  " * depth
        for entry in children.get(directory, []):
            lines.append(f"{indent}{shown_name(entry.path.name)}{'/' if entry.is_dir else ''}")
            if entry.is_dir:
                emit(entry.path, depth + 1)
        if hidden.get(directory):
            lines.append(f"{indent}… {hidden[directory]} more entries")

    emit(root, 1)
    total = len(entries)
    if total > cap:
        lines.append(f"({total} entries; {cap} shown — list a subdirectory to see the rest)")
    return "\n".join(lines)
