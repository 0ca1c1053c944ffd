"""bash_output and kill_shell: the model's handles on the background shells `bash` started.

`bash_output` returns what a shell printed since the last read (with `filter`, only the new lines
that match; the others are read too), then a status line. What it returns enters the context under
the usual caps (tools/capture.py: whole up to the inline limit, else a head+tail preview with a ref);
the shell's whole output stays in the store under the shell's id for `recall`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.persisted import join_preview, persisted_element, split_preview
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.capture import Captured, OutputCapture
from agent_cli.tools.fs import reports_tool_errors, str_arg
from agent_cli.tools.patterns import Matcher
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shells.manager import Shell, ShellManager
from agent_cli.tools.shells.output import DROPPED, Dropped

MARGIN = 400  # chars: a read past the storage ceiling holds the line that says so


class BashOutputTool:
    name = "bash_output"
    description = (
        "The new output of a background shell (bash with run_in_background) since the last call, then "
        "its status: running, or its exit code once it has ended. `filter`: a regular expression; only "
        "the new lines that match are returned (the rest is read too). recall(ref=<ID>) has all of it."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "bash_id": {"type": "string", "description": "The shell's ID (bash_1)."},
            "filter": {"type": "string", "description": "Return only the new lines matching this regex."},
        },
        "required": ["bash_id"],
    }
    read_only = True
    compactable = True

    def __init__(self, shells: ShellManager) -> None:
        self.shells = shells

    def target(self, input: dict[str, Any]) -> str:
        pattern = input.get("filter")
        shell_id = str(input.get("bash_id", ""))
        return f"{shell_id} /{pattern}/" if isinstance(pattern, str) and pattern else shell_id

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shell_id = str_arg(input, "bash_id").strip()
        pattern = input.get("filter")
        regex = Matcher(pattern, "filter") if isinstance(pattern, str) and pattern else None
        shell = self.shells.get(shell_id)
        if shell is None:
            raise ToolError(self.shells.unknown(shell_id, ctx.store))
        if shell.final_read:
            raise ToolError(
                f"{shell.id} has finished ({shell.status_text()}) and all its output has been read; "
                f"the whole output: recall ref {shell.id}"
            )
        return read_new(shell, regex, ctx)


def read_new(shell: Shell, regex: Matcher | None, ctx: ToolContext) -> ToolResult:
    """What `shell` printed since the model's last read (matching lines only, with `regex`), with its
    status after it. A running shell's unfinished last line waits for its end when filtering."""
    running = shell.running
    out = shell.output
    start = shell.cursor
    end = out.total if regex is None or not running else max(start, out.last_newline)
    counts = _Counts()
    if regex is None and end <= out.head_chars:
        body, ref = _span(shell, start, end, ctx, counts), (shell.id if end - start > _inline(ctx) else "")
    else:
        captured = _captured(shell, start, end, regex, ctx, counts)
        body, ref = captured.text, captured.ref
    shell.cursor = end
    status = _status(shell, regex, counts, end < out.total)
    if not running:
        shell.final_read = shell.told_end = True
    meta: dict[str, Any] = {"shell": shell.id, "status": shell.status, "output_chars": out.total}
    if not running:
        meta["exit_code"] = shell.exit_code
    if ref:
        meta["output_ref"] = ref
    text = f"{body.rstrip(chr(10))}\n{status}" if body else status
    failed = shell.status == "exited" and shell.exit_code != 0  # a kill is no failure
    return ToolResult(text, is_error=not running and failed, meta=meta)


def _inline(ctx: ToolContext) -> int:
    return max(1, ctx.limits.inline_chars)


def _span(shell: Shell, start: int, end: int, ctx: ToolContext, counts: _Counts) -> str:
    """An unfiltered read the file holds whole: inline when small, else a preview that points into the
    shell's own ref (no second copy in the store)."""
    out = shell.output
    for piece in out.read(start, end):
        counts.chars += len(piece)  # type: ignore[arg-type] - the head has no Dropped
        counts.lines += piece.count("\n")  # type: ignore[union-attr]
    if end - start <= _inline(ctx):
        return out.text(start, end)
    size = max(2, min(ctx.limits.preview_chars, _inline(ctx)))
    head = split_preview(out.text(start, start + size), size)[0]
    tail = split_preview(out.text(end - size, end), size)[1]
    lines = counts.lines + (0 if out.text(end - 1, end) == "\n" else 1)
    body = join_preview(head, end - start - len(head) - len(tail), tail)
    element = persisted_element(shell.id, body, chars=end - start, lines=lines, path=str(out.path))
    return f"{element}\nThis read is chars {start:,}-{end:,} of {shell.id}: recall it from offset={start}."


def _captured(
    shell: Shell, start: int, end: int, regex: Matcher | None, ctx: ToolContext, counts: _Counts
) -> Captured:
    """A filtered read (or one past the storage ceiling) under the usual caps (tools/capture.py)."""
    out = shell.output
    room = dataclasses.replace(ctx.limits, ceiling_chars=ctx.limits.ceiling_chars + MARGIN)
    capture = OutputCapture(dataclasses.replace(ctx, limits=room))  # the drop line fits past the ceiling
    partial = ""
    for piece in out.read(start, end):
        if isinstance(piece, Dropped):
            counts.dropped += piece.chars
            if regex is None:
                capture.feed(DROPPED.format(dropped=piece.chars, ceiling=out.ceiling))
            elif partial:
                counts.line(partial, regex, capture)
                partial = ""
            continue
        counts.chars += len(piece)
        if regex is None:
            counts.lines += piece.count("\n")
            capture.feed(piece)
            continue
        lines = (partial + piece).split("\n")
        partial = lines.pop()
        for line in lines:
            counts.line(line, regex, capture)
    if partial and regex is not None:
        counts.line(partial, regex, capture)
    return capture.finish()


class _Counts:
    def __init__(self) -> None:
        self.chars = self.lines = self.matched = self.dropped = 0

    def line(self, line: str, regex: Matcher, capture: OutputCapture) -> None:
        self.lines += 1
        if regex.search(line):
            self.matched += 1
            capture.feed(line + "\n")


def _status(shell: Shell, regex: Matcher | None, counts: _Counts, held_back: bool) -> str:
    parts = [f"{shell.id}: {shell.status_text()}"]
    if not counts.chars and not counts.dropped:
        parts.append("no new output")
    elif regex is None:
        parts.append(f"{counts.chars:,} new chars ({counts.lines:,} lines)")
    else:
        s = "s" if counts.lines != 1 else ""
        parts.append(f"{counts.matched:,} of {counts.lines:,} new line{s} match /{regex.pattern}/")
    if held_back:
        parts.append("its unfinished last line waits for the next read")
    if counts.dropped:
        parts.append(f"{counts.dropped:,} chars were dropped at the storage ceiling")
    if shell.running:
        parts.append(f"all of it: recall ref {shell.id}")
    else:
        parts.append(f"it has ended; all of it: recall ref {shell.id}")
    line = "[" + " · ".join(parts) + "]"
    notes = [n for n in (shell.note[shell.note_told :].strip(), shell.output.error) if n]
    shell.note_told = len(shell.note)  # what the sandbox set aside is said once
    return "\n".join([line, *notes])


class KillShellTool:
    name = "kill_shell"
    description = "Stop a background shell and everything it started. Its output stays readable."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"shell_id": {"type": "string", "description": "The shell's ID (bash_1)."}},
        "required": ["shell_id"],
    }
    read_only = True  # it ends only a shell this session started; nothing else is touched
    compactable = True

    def __init__(self, shells: ShellManager) -> None:
        self.shells = shells

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("shell_id", ""))

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shell_id = str_arg(input, "shell_id").strip()
        line, killed = await self.shells.kill(shell_id, ctx.store)
        if not killed:
            raise ToolError(line)
        shell = self.shells.get(shell_id)
        if shell is not None:
            shell.told_end = True  # the model ended it: no reminder needed
        meta = {"shell": shell_id, "status": shell.status if shell else "killed"}
        return ToolResult(f"{line} Its output is kept: recall ref {shell_id}.", meta=meta)


SHELL_TOOLS = ("bash_output", "kill_shell")


def install_shell_tools(tools: ToolRegistry, shells: ShellManager) -> None:
    """bash_output and kill_shell on `shells`, when bash is among `tools`. They can be called at once;
    their schemas are offered from the first background shell on, so a session that never starts one
    does not pay for them in every request (the start's result names them)."""
    if "bash" not in tools or any(name in tools for name in SHELL_TOOLS):
        return
    tools.add([BashOutputTool(shells), KillShellTool(shells)], deferred=True)
    shells.subscribe(lambda _event: tools.reveal(SHELL_TOOLS))
