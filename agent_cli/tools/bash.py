"""bash: run a shell command in its own process group; its full output is kept in the store while it
streams and the context gets it whole, or a head+tail preview with a ref (tools/capture.py)."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import dataclasses
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.binary_output import RawOutput
from agent_cli.tools.capture import OutputCapture
from agent_cli.tools.fs import reports_tool_errors, str_arg
from agent_cli.tools.sandbox.bwrap import ESCAPE_PARAM, Launch, wants_escape
from agent_cli.tools.sandbox.seccomp import filter_fd

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
DRAIN_GRACE = 1.0  # after the shell exits, how long background children may keep the pipe open

_ENV_OVERRIDES = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb"}


class BashTool:
    name = "bash"
    description = (
        "Run a command with /bin/bash -c in the workspace directory. stdout and stderr are merged; "
        "stdin is empty, so interactive programs will not wait for input. `timeout` is in seconds "
        f"(default {DEFAULT_TIMEOUT:.0f}, max {MAX_TIMEOUT:.0f}); on timeout the command and everything "
        "it started are killed. Long output is kept in full for the recall tool and shown as a head+tail "
        "preview with its ref and size, so filter long output (grep, head, tail) yourself. A non-zero exit ends the output with `exit code N`. Each call starts a fresh shell: "
        "`cd` and variables do not carry over. Prefer the read_file, grep, glob and ls tools over "
        "cat, grep, find and ls. "
        "When the sandbox is on, commands can write only in the workspace and a private /tmp (not git's "
        "config and hooks, .agent, .claude, .vscode, .mcp.json or shell start-up files: edit those with "
        "edit_file, which asks the person), and have no network nor unix sockets; in plan mode nothing "
        f"is writable. `{ESCAPE_PARAM}: true` asks the person to run one command outside it."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is killed (default {DEFAULT_TIMEOUT:.0f}).",
            },
            "description": {"type": "string", "description": "What the command does, in a few words."},
            "run_in_background": {
                "type": "boolean",
                "description": "For a server or watcher: its ID comes back at once, no timeout; "
                "bash_output reads it, kill_shell stops it.",
            },
            ESCAPE_PARAM: {
                "type": "boolean",
                "description": "Run outside the sandbox (asks the person; refused in yolo mode). Only "
                "after the sandbox blocked a command that must write elsewhere or use the network.",
            },
        },
        "required": ["command"],
    }
    read_only = False
    compactable = True

    def target(self, input: dict[str, Any]) -> str:
        command = str(input.get("command", "")).strip()
        first = command.splitlines()[0] if command else ""
        if len(first) > 80:
            first = first[:79] + "…"
        elif first != command:
            first += " …"
        return f"[outside the sandbox] {first}" if wants_escape(input) else first

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str_arg(input, "command")
        if not command.strip():
            raise ToolError("command is empty")
        timeout = _timeout(input.get("timeout"))
        if not ctx.workspace.is_dir():
            raise ToolError(f"the workspace {ctx.workspace} is not a directory")
        background = bool(input.get("run_in_background"))
        if background and ctx.shells is None:
            raise ToolError("background shells are not available here: run it without run_in_background")
        launch = launch_for(ctx, input)
        if launch.refusal:
            raise ToolError(launch.refusal)
        if background and ctx.shells is not None:
            try:
                return await ctx.shells.start(command, ctx, launch, str(input.get("description") or ""))
            except ToolError:  # it never started: what its launch watches is let go
                if launch.confined and ctx.sandbox is not None:
                    ctx.sandbox.settle(launch)
                raise
        note = ""
        try:
            result = await run_command(command, timeout, ctx, launch.prefix, launch.seccomp)
        finally:  # interrupted too: what the command made at a protected path is set aside
            if launch.confined and ctx.sandbox is not None:
                note = ctx.sandbox.settle(launch)
        return annotate(result, launch, ctx, note)


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"timeout must be a number of seconds, got {value!r}")
    if value <= 0:
        raise ToolError(f"timeout must be positive, got {value}")
    return float(min(value, MAX_TIMEOUT))


async def run_command(
    command: str, timeout: float, ctx: ToolContext, prefix: tuple[str, ...] = (), seccomp: bytes = b""
) -> ToolResult:
    """Run `command` with /bin/bash -c, under `prefix` (the sandbox's bwrap argv) when given, with
    the `seccomp` BPF program handed to bwrap on an inherited file descriptor."""
    buffer = OutputCapture(ctx)
    raw = RawOutput()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def on_data(data: bytes) -> None:
        raw.feed(data)
        chunk = decoder.decode(data)
        if chunk:
            buffer.feed(chunk)
            if ctx.on_output is not None:
                with contextlib.suppress(Exception):
                    ctx.on_output(chunk)

    transport, capture = await spawn(command, ctx, Capture(on_data), prefix, seccomp)
    pgid = transport.get_pid()  # start_new_session: the shell leads its own process group
    if ctx.processes is not None:
        ctx.processes.started(pgid, command)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(capture.exited.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await kill_group(pgid, capture)
        # The shell is gone; children it left in the background may still hold the pipe open.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(capture.eof.wait(), DRAIN_GRACE)
    except asyncio.CancelledError:
        buffer.abort()
        await asyncio.shield(kill_group(pgid, capture))
        raise
    finally:
        transport.close()
        if ctx.processes is not None:
            ctx.processes.ended(pgid)
    buffer.feed(decoder.decode(b"", final=True))
    captured = buffer.finish()
    output = raw.placeholder(ctx.store) if raw.is_binary() else captured.text
    if raw.is_binary() and captured.ref and ctx.store is not None:
        # what streamed under the call's own ref is the bytes decoded with U+FFFD in place of most:
        # lossy, and a model that recalls a call's id would get it; it says where the dump is instead
        with contextlib.suppress(OSError):
            pointer = ctx.store.open_output(captured.ref)
            pointer.write(output)
            pointer.close()
        captured = dataclasses.replace(captured, total_chars=len(output))
    code = transport.get_returncode()
    meta: dict[str, Any] = {"exit_code": code, "command": command}
    if captured.ref:
        meta.update(output_ref=captured.ref, output_chars=captured.total_chars)
    if captured.dropped_chars:
        meta["dropped_chars"] = captured.dropped_chars
    if timed_out:
        meta["timed_out"] = True
        text = (output.rstrip("\n") + "\n" if output else "") + f"timed out after {_seconds(timeout)}"
        return ToolResult(output=text, is_error=True, meta=meta)
    if code != 0:
        status = f"exit code {code}" if code is not None and code >= 0 else signal_name(code)
        text = (output.rstrip("\n") + "\n" if output else "") + status
        return ToolResult(output=text, is_error=True, meta=meta)
    return ToolResult(output=output if output else "(no output)", meta=meta)


async def spawn(
    command: str, ctx: ToolContext, capture: Capture, prefix: tuple[str, ...] = (), seccomp: bytes = b""
) -> tuple[asyncio.SubprocessTransport, Capture]:
    """Start `command` with /bin/bash -c in the workspace, in a process group of its own, stdout and
    stderr merged into `capture`, under `prefix` (the sandbox's bwrap argv) when given, with the
    `seccomp` BPF program handed to bwrap on an inherited file descriptor."""
    loop = asyncio.get_running_loop()
    fd = filter_fd(seccomp) if seccomp and prefix else None
    try:
        starting = asyncio.ensure_future(
            loop.subprocess_exec(
                lambda: capture,
                *prefix,
                *(("--seccomp", str(fd)) if fd is not None else ()),
                "/bin/bash",
                "-c",
                command,
                cwd=str(ctx.workspace),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env={**ctx.child_env.build(), **_ENV_OVERRIDES},  # no agent keys, no secret-looking names
                pass_fds=(fd,) if fd is not None else (),
            )
        )
        try:
            transport, _ = await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Interrupted while starting: let it finish starting, then end its whole group. (asyncio's
            # own clean-up kills only the process it started: bwrap's sandbox child, forked by then,
            # was left running without a parent, holding the pipe, and the turn never ended.)
            with contextlib.suppress(Exception):
                transport, _ = await starting
                await kill_group(transport.get_pid(), capture)
                transport.close()
            raise
    finally:
        if fd is not None:
            os.close(fd)  # bwrap has its own copy
    return transport, capture


class Capture(asyncio.SubprocessProtocol):
    """Hands output to `on_data` as it arrives and marks the shell's exit and the pipe's end apart:
    a background child can keep the pipe open long after the shell has exited."""

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        self.on_data = on_data
        self.exited = asyncio.Event()
        self.eof = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.on_data(data if isinstance(data, bytes) else data.encode())

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.eof.set()

    def process_exited(self) -> None:
        self.exited.set()


async def kill_group(pgid: int, capture: Capture) -> None:
    """SIGTERM the command's process group, give the shell a moment, then SIGKILL whatever is left."""
    _signal_group(pgid, signal.SIGTERM)
    try:
        await asyncio.wait_for(capture.exited.wait(), TERM_GRACE)
    except TimeoutError:
        pass
    finally:
        _signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(capture.exited.wait(), TERM_GRACE)
    deadline = time.monotonic() + TERM_GRACE  # the shell's children die of the SIGKILL a moment later
    while _group_alive(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _seconds(value: float) -> str:
    return f"{value:g}s"


def signal_name(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    try:
        return f"killed by {signal.Signals(-code).name} (exit code {code})"
    except ValueError:
        return f"exit code {code}"


def launch_for(ctx: ToolContext, input: dict[str, Any]) -> Launch:
    """How bash runs this call in this context (no sandbox in the context: unconfined, as before)."""
    if ctx.sandbox is None:
        return Launch()
    return ctx.sandbox.launch(_mode(ctx), wants_escape(input))


def annotate(result: ToolResult, launch: Launch, ctx: ToolContext, note: str = "") -> ToolResult:
    """`result` with `sandboxed` in its meta and, when the sandbox seems to have stopped the command,
    a hint that says so and what can be done; `note`: what the sandbox set aside after it."""
    if ctx.sandbox is None:
        return result
    hint = "\n".join(h for h in (ctx.sandbox.hint(result.output, launch, _mode(ctx)), note) if h)
    output = f"{result.output.rstrip(chr(10))}\n{hint}" if hint else result.output
    return dataclasses.replace(result, output=output, meta={**result.meta, "sandboxed": launch.confined})


def _mode(ctx: ToolContext) -> str:
    return ctx.permission_mode() if ctx.permission_mode is not None else "ask"
