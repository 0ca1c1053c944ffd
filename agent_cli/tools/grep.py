"""grep: search file contents with ripgrep (or a pure-Python fallback with the same output)."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.denied_reads import LeftOut, rg_exclusions
from agent_cli.tools.fs import (
    SNIFF_BYTES,
    display_path,
    int_arg,
    missing_path_error,
    reports_tool_errors,
    resolve_path,
    str_arg,
    walk,
)
from agent_cli.tools.glob import glob_to_regex

MAX_RESULTS = 250
MAX_LINE_CHARS = 500
Mode = Literal["content", "files_with_matches", "count"]
MODES: tuple[Mode, ...] = ("content", "files_with_matches", "count")


def find_rg() -> str | None:
    """The `rg` binary: next to the running Python (the `ripgrep` wheel puts it there), else on PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file():
        return str(beside)
    return shutil.which("rg")


class GrepTool:
    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Respects .gitignore and skips "
        "binary files. `path` is a file or directory (default: the workspace); `glob` filters files "
        "(`*.py`, `src/**/*.{ts,tsx}`). `output_mode`: `files_with_matches` (default, paths only), "
        "`content` (matching lines as `line:text`, context lines as `line-text`, grouped by file; "
        "`context` adds lines around each match) or `count` (matching lines per file). At most "
        f"{MAX_RESULTS} results (`max_results` lowers it); the output says how many more there are, "
        "so narrow the pattern, path or glob to see them."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for."},
            "path": {
                "type": "string",
                "description": "File or directory to search (default: the workspace).",
            },
            "glob": {"type": "string", "description": "Only search files matching this glob, e.g. `*.py`."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search (default false)."},
            "output_mode": {"type": "string", "enum": list(MODES), "description": "What to return."},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": 20,
                "description": "Lines of context around each match (content mode).",
            },
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
        },
        "required": ["pattern"],
    }
    read_only = True
    compactable = True

    def __init__(self, finder: Any = None) -> None:
        self._finder = finder

    def target(self, input: dict[str, Any]) -> str:
        where = input.get("path") or ""
        return f"{input.get('pattern', '')}" + (f" in {where}" if where else "")

    def paths(self, input: dict[str, Any]) -> list[str]:
        path = input.get("path")
        return [path] if isinstance(path, str) and path else ["."]

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = str_arg(input, "pattern")
        if not pattern:
            raise ToolError("pattern is empty")
        root = resolve_path(ctx.workspace, str_arg(input, "path", required=False) or ".")
        if not root.exists():
            raise missing_path_error(ctx.workspace, root)
        glob = str_arg(input, "glob", required=False) or None
        mode = input.get("output_mode") or "files_with_matches"
        if mode not in MODES:
            raise ToolError(f"output_mode must be one of {', '.join(MODES)}, got {mode!r}")
        ignore_case = input.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise ToolError(f"ignore_case must be true or false, got {ignore_case!r}")
        context = int_arg(input, "context", 0, 0, 20) if mode == "content" else 0
        cap = int_arg(input, "max_results", MAX_RESULTS, 1, MAX_RESULTS)
        out = Collector(ctx.workspace, mode, cap, context)
        left_out = LeftOut(ctx.read_guard)  # what deny rules keep out: before the collector sees it
        rg = (self._finder or find_rg)()
        if rg is not None:
            await _search_rg(rg, pattern, root, glob, ignore_case, mode, context, out, left_out)
        else:
            search = functools.partial(_search_python, ctx=ctx, left_out=left_out)
            await asyncio.to_thread(search, pattern, root, glob, ignore_case, mode, context, out)
        if note := left_out.note():
            out.notes.append(note)
        where = display_path(ctx.workspace, root)
        return ToolResult(output=out.render(pattern, where), meta={"matches": out.total, "files": out.files})


class Collector:
    """Receives results file by file (both engines feed it the same way) and renders them capped."""

    def __init__(self, workspace: Path, mode: Mode, cap: int, context: int) -> None:
        self.workspace, self.mode, self.cap, self.context = workspace, mode, cap, context
        self.total = 0  # matching lines (content/count) or files (files_with_matches)
        self.files = 0
        self.shown = 0
        self.hidden_files = 0
        self.notes: list[str] = []
        self._parts: list[str] = []
        self._lines: list[tuple[int, str, bool]] = []
        self._last_shown_match = 0

    def _name(self, path: str) -> str:
        return display_path(self.workspace, Path(path))

    def file(self, path: str, count: int = 0) -> None:
        """A file with matches (files_with_matches and count modes)."""
        self.files += 1
        self.total += count if self.mode == "count" else 1
        if self.shown >= self.cap:
            self.hidden_files += 1
            return
        self.shown += 1
        self._parts.append(f"{self._name(path)}:{count}" if self.mode == "count" else self._name(path))

    def begin(self) -> None:
        self._lines = []
        self._last_shown_match = 0

    def line(self, number: int, text: str, is_match: bool) -> None:
        if is_match:
            self.total += 1
            if self.shown < self.cap:
                self.shown += 1
                self._last_shown_match = number
                self._lines.append((number, text, True))
        elif self.shown < self.cap or 0 < number - self._last_shown_match <= self.context:
            self._lines.append((number, text, False))

    def end(self, path: str) -> None:
        """The end of a file in content mode."""
        self.files += 1
        lines = self._lines
        while lines and not lines[-1][2] and lines[-1][0] - self._last_shown_match > self.context:
            lines.pop()  # leading context of a match past the cap
        if not any(is_match for _, _, is_match in lines):
            self.hidden_files += 1
            return
        out = [self._name(path)]
        previous = None
        for number, text, is_match in lines:
            if previous is not None and number > previous + 1:
                out.append("--")
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + f"… [{len(text) - MAX_LINE_CHARS} more chars]"
            out.append(f"{number}{':' if is_match else '-'}{text}")
            previous = number
        self._parts.append("\n".join(out))

    def render(self, pattern: str, where: str) -> str:
        if self.total == 0 and self.files == 0:
            text = f"No matches for {pattern!r} in {'the workspace' if where == '.' else where}."
        else:
            text = ("\n\n" if self.mode == "content" else "\n").join(self._parts)
            if self.mode == "count":
                text += f"\n({self.total} matching line{'s' * (self.total != 1)} in {self.files} files)"
            more = self.hidden_files if self.mode == "count" else self.total - self.shown
            if more > 0:
                unit = "matches" if self.mode == "content" else "files"
                in_files = f" in {self.hidden_files} more files" if self.mode == "content" else ""
                text += (
                    f"\n… {more} more {unit}{in_files} not shown (limit {self.cap}); "
                    "narrow the pattern, path or glob to see them."
                )
        for note in self.notes:
            text += f"\n({note})"
        return text


# -- ripgrep -----------------------------------------------------------------------------------------


async def _search_rg(
    rg: str,
    pattern: str,
    root: Path,
    glob: str | None,
    ignore_case: bool,
    mode: Mode,
    context: int,
    out: Collector,
    left_out: LeftOut,
) -> None:
    walk = [rg, "--no-config", "--color", "never", "--hidden", "--no-require-git", "--no-ignore-dot"]
    walk += ["--no-ignore-global", "--glob", "!.git", "--glob", "!.agent"]
    cwd = root if root.is_dir() else root.parent  # --glob is relative to the working directory
    args = [*walk, "--sort", "path"]
    if left_out.active:  # every file it walks that a deny rule covers, whatever the pattern: not read
        denied = [path for path in await _rg_files(walk, root, cwd) if not left_out.keeps(path)]
        args += [f"--glob={exclusion}" for exclusion in rg_exclusions(cwd, denied)]
    if glob and "/" not in glob:
        # A type filter, not --glob: rg's --glob overrides .gitignore, a type does not.
        args += ["--type-add", f"agentglob:{glob}", "--type", "agentglob"]
    if ignore_case:
        args.append("--ignore-case")
    if mode == "content":
        args.append("--json")
        if context:
            args += ["--context", str(context)]
    elif mode == "count":
        args += ["--count", "--null"]
    else:
        args += ["--files-with-matches", "--null"]
    args += ["--regexp", pattern, "--", str(root)]
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.create_task(proc.stderr.read())
    try:
        glob_keeps = _path_filter(root, glob)
        parser = _RgParser(mode, out, lambda path: left_out.keeps(path) and glob_keeps(path))
        separator = b"\n" if mode != "files_with_matches" else b"\0"
        pending = b""
        while chunk := await proc.stdout.read(65_536):
            pending += chunk
            *records, pending = pending.split(separator)
            for record in records:
                parser.feed(record)
        if pending:
            parser.feed(pending)
        await proc.wait()
        stderr = (await stderr_task).decode("utf-8", errors="replace").strip()
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        stderr_task.cancel()
        await asyncio.shield(proc.wait())
        raise
    if proc.returncode == 2 and "No files were searched" not in stderr:
        if "regex parse error" in stderr or "error parsing" in stderr:
            raise ToolError(f"invalid regular expression {pattern!r}:\n{stderr.removeprefix('rg: ')}")
        if out.files == 0:
            raise ToolError(f"grep failed: {stderr or 'ripgrep exited with status 2'}")
        first = stderr.splitlines()[0] if stderr else ""
        out.notes.append(f"some files could not be searched: {first}")


async def _rg_files(walk: list[str], root: Path, cwd: Path) -> list[Path]:
    """The files a search of `root` walks (`rg --files`, the same ignore rules), whatever it looks for."""
    proc = await asyncio.create_subprocess_exec(
        *walk,
        "--files",
        "--null",
        "--",
        str(root),
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        listed, _ = await proc.communicate()
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
        await asyncio.shield(proc.wait())
        raise
    return [Path(name) for name in listed.decode("utf-8", errors="surrogateescape").split("\0") if name]


class _RgParser:
    """Feeds rg's output records to the collector, dropping files the filter rejects (the glob, and
    the deny rules on reading)."""

    def __init__(self, mode: Mode, out: Collector, keep: Callable[[str], bool]) -> None:
        self.mode, self.out, self.keep = mode, out, keep
        self.skipping = False

    def feed(self, record: bytes) -> None:
        if not record.strip():
            return
        if self.mode == "files_with_matches":
            path = record.decode("utf-8", errors="surrogateescape").strip("\n")
            if self.keep(path):
                self.out.file(path)
            return
        if self.mode == "count":
            raw, _, count = record.rpartition(b"\0")
            path = raw.decode("utf-8", errors="surrogateescape")
            if self.keep(path):
                self.out.file(path, int(count or 0))
            return
        message = json.loads(record)
        kind, data = message.get("type"), message.get("data", {})
        if kind == "begin":
            self.skipping = not self.keep(_rg_text(data.get("path", {}), "surrogateescape"))
            if not self.skipping:
                self.out.begin()
        elif self.skipping:
            return
        elif kind in ("match", "context"):
            text = _rg_text(data.get("lines", {})).rstrip("\n").removesuffix("\r")
            self.out.line(int(data.get("line_number") or 0), text, kind == "match")
        elif kind == "end":
            self.out.end(_rg_text(data.get("path", {}), "surrogateescape"))


def _path_filter(root: Path, glob: str | None) -> Callable[[str], bool]:
    """Whether a result path passes `glob` (relative to a directory root; a file root takes no glob)."""
    if not glob or not root.is_dir():
        return lambda path: True
    matcher = _glob_matcher(glob)

    def keep(path: str) -> bool:
        try:
            return matcher(Path(path).relative_to(root).as_posix())
        except ValueError:
            return True

    return keep


def _rg_text(value: dict[str, Any], errors: str = "replace") -> str:
    """rg's text, or its bytes when they are not UTF-8 (a path's keep theirs, as os.fsdecode does)."""
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors=errors)


# -- pure-Python fallback ----------------------------------------------------------------------------


def _search_python(
    pattern: str,
    root: Path,
    glob: str | None,
    ignore_case: bool,
    mode: Mode,
    context: int,
    out: Collector,
    *,
    ctx: ToolContext,
    left_out: LeftOut,
) -> None:
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        raise ToolError(f"invalid regular expression {pattern!r}: {e}") from e
    keep = _path_filter(root, glob)
    walked = [root] if root.is_file() else [e.path for e in walk(root, ctx.workspace)]
    files = [path for path in walked if left_out.keeps(path) and keep(str(path))]  # every one counted
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\x00" in data[:SNIFF_BYTES]:
            continue
        lines = [line.removesuffix("\r") for line in data.decode("utf-8", errors="replace").split("\n")]
        if lines and lines[-1] == "":
            lines.pop()
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            continue
        if mode == "files_with_matches":
            out.file(str(path))
        elif mode == "count":
            out.file(str(path), len(hits))
        else:
            out.begin()
            wanted = sorted(
                {j for i in hits for j in range(max(0, i - context), min(len(lines), i + context + 1))}
            )
            hit_set = set(hits)
            for j in wanted:
                out.line(j + 1, lines[j], j in hit_set)
            out.end(str(path))


def _glob_matcher(glob: str) -> Callable[[str], bool]:
    """ripgrep's --glob rule: a glob without '/' matches a file name at any depth."""
    if "/" not in glob.rstrip("/"):
        regex = glob_to_regex(glob)
        return lambda rel: bool(regex.match(rel.rsplit("/", 1)[-1]))
    regex = glob_to_regex(glob.lstrip("/"))
    return lambda rel: bool(regex.match(rel))
