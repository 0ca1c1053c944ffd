"""MCP servers, each on an asyncio task of its own that owns the SDK's context managers (anyio's
cancel scopes must be entered and left by one task): connecting -> connected -> dead, or failed.
`restart` stops a server's task and starts a fresh one (`/mcp reconnect`); a connected server that
sends `notifications/tools/list_changed` has its tools listed again by its task.

Calls come from the loop's task and race the server's end and a timeout, so a server that hangs or
exits mid-call gives a clear error, never a hang. Every change of state is reported once through
`on_change`. The SDK is imported inside the tasks, never at module level.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_cli.extensions.mcp import sdk_log
from agent_cli.extensions.mcp.config import ServerSpec
from agent_cli.extensions.mcp.tool import McpCallError, ToolInfo
from agent_cli.tools.sandbox.child_env import ChildEnv

State = Literal["connecting", "connected", "failed", "dead"]
STOP_GRACE = 8.0  # seconds for all servers to shut down before their tasks are cancelled


@dataclass(frozen=True)
class ServerStatus:
    name: str
    origin: str
    state: State
    reason: str  # why it failed or died; "" otherwise
    tools: tuple[ToolInfo, ...] = ()

    def describe(self) -> str:
        return f"{self.state}: {self.reason}" if self.reason else self.state


class _Conn:
    """One server's mutable state; only its own task changes `state`, `session` and `tools`."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.state: State = "connecting"
        self.reason = ""
        self.tools: tuple[ToolInfo, ...] = ()
        self.session: Any = None
        self.settled = asyncio.Event()  # left "connecting"
        self.ended = asyncio.Event()  # the connection is over (whatever the reason)
        self.wake = asyncio.Event()  # the owner should look: stop asked, the stream ended, tools changed
        self.stopping = False
        self.closed = False  # the transport's read stream ended
        self.stale = False  # the server said its tool list changed
        self.current = asyncio.Event()  # `tools` is the server's list as it last said it
        self.current.set()
        self.task: asyncio.Task[None] | None = None
        self.stderr: Any = None  # a temporary file with the server's stderr (stdio)
        self.notes: list[str] = []  # what the SDK logged about this connection (sdk_log.py)

    def status(self) -> ServerStatus:
        return ServerStatus(self.spec.name, self.spec.origin, self.state, self.reason, self.tools)

    def stream_ended(self) -> None:
        self.closed = True
        self.wake.set()

    async def on_message(self, message: Any) -> None:
        """The SDK's message handler: a tool-list change is noted for the owner task to re-list
        (a request cannot be awaited here, inside the session's receive loop)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.stale = True
            self.current.clear()
            self.wake.set()

    def stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        try:
            self.stderr.flush()
            self.stderr.seek(0)
            lines = [line.strip() for line in self.stderr.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][:300] if lines else ""

    def detail(self) -> str:
        """For a reason: the last line of the server's stderr, else the SDK's last word on it."""
        if tail := self.stderr_tail():
            return _detail(tail)
        return f" (mcp client: {self.notes[-1]})" if self.notes else ""


class McpManager:
    def __init__(
        self,
        specs: Iterable[ServerSpec],
        *,
        workspace: Path,
        connect_timeout: float = 30.0,
        call_timeout: float = 120.0,
        on_change: Callable[[ServerStatus], None] | None = None,
        child_env: ChildEnv | None = None,
    ) -> None:
        self.workspace = workspace
        self.child_env = child_env or ChildEnv()  # no agent keys, no secret-looking names
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.on_change = on_change
        self._conns = {spec.name: _Conn(spec) for spec in specs}
        self._started = False

    def __len__(self) -> int:
        return len(self._conns)

    def start(self) -> None:
        """Start every server on its own task (needs a running event loop; a second call does nothing)."""
        if self._started:
            return
        self._started = True
        for conn in self._conns.values():
            if conn.task is None:  # not already (re)started by `restart`
                conn.task = asyncio.ensure_future(self._own(conn, self._deadline()))

    async def wait(self, timeout: float) -> None:
        """Until every server has connected or failed, or `timeout` seconds passed."""
        self.start()
        await _all_set([c.settled for c in self._conns.values()], timeout)

    async def wait_current(self, timeout: float) -> None:
        """Until every server that said its tool list changed has been listed again (or ended)."""
        await _all_set([c.current for c in self._conns.values()], timeout)

    def statuses(self) -> list[ServerStatus]:
        return [conn.status() for conn in self._conns.values()]

    def names(self) -> list[str]:
        return list(self._conns)

    async def restart(self, name: str, timeout: float) -> ServerStatus:
        """Stop the server's task if it runs, start a fresh one, and wait up to `timeout` seconds for
        it to connect or fail. KeyError for an unknown name."""
        old = self._conns[name]
        await _stop([old])
        conn = self._conns[name] = _Conn(old.spec)
        conn.task = asyncio.ensure_future(self._own(conn, self._deadline()))
        try:
            await asyncio.wait_for(conn.settled.wait(), timeout)
        except TimeoutError:
            pass
        return conn.status()

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        conn = self._conns.get(server)
        if conn is None:
            raise McpCallError(f"there is no MCP server named {server!r}")
        session = conn.session
        if conn.state != "connected" or session is None:
            state = conn.status().describe()
            raise McpCallError(f"MCP server {server!r} is not available ({state}); its tools cannot run now")
        call = asyncio.ensure_future(session.call_tool(tool, arguments))
        ended = asyncio.ensure_future(conn.ended.wait())
        try:
            done, _ = await asyncio.wait(
                {call, ended}, timeout=self.call_timeout, return_when="FIRST_COMPLETED"
            )
        finally:
            ended.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        if call in done:
            try:
                return call.result()
            except Exception as exc:  # an MCP error answer, a closed connection, a bad result
                raise McpCallError(self._call_failure(conn, exc)) from None
        if ended in done:
            raise McpCallError(f"MCP server {server!r} exited during the call{_detail(conn.stderr_tail())}")
        raise McpCallError(
            f"no answer from MCP server {server!r} within {self.call_timeout:g} s (config mcp_call_timeout)"
        )

    async def aclose(self) -> None:
        """Stop every server: each task leaves its SDK contexts itself; the stubborn are cancelled."""
        await _stop(self._conns.values())

    # -- the owner task ---------------------------------------------------------------------------------
    def _deadline(self) -> float:
        """When a server started now has failed: from its task's start, the SDK's import (which can
        take a second) and the spawn included, so a wait begun with the start sees it fail."""
        return asyncio.get_running_loop().time() + self.connect_timeout

    async def _own(self, conn: _Conn, deadline: float) -> None:
        import anyio
        from mcp import ClientSession

        sdk_log.install()
        sdk_log.NOTES.set(conn.notes)  # this task's context, which the SDK's reader tasks inherit
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(conn))
                read = await stack.enter_async_context(_watched(read, conn.stream_ended))
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=conn.on_message)
                )
                try:
                    with anyio.fail_at(deadline):
                        await session.initialize()
                        tools = await _list_tools(session)
                except TimeoutError as exc:  # failed now: stopping the process takes seconds more
                    self._set(conn, "failed", self._why(conn, exc))
                    raise
                conn.session, conn.tools = session, tools
                self._set(conn, "connected")
                while True:
                    await conn.wake.wait()
                    conn.wake.clear()
                    if conn.stopping or conn.closed:
                        break
                    if conn.stale:  # the next turn's registry gets the new list (runtime.py)
                        conn.stale = False
                        with anyio.fail_after(self.connect_timeout):
                            conn.tools = await _list_tools(session)
                        if not conn.stale:
                            conn.current.set()
                conn.session = None
                if not conn.stopping:
                    self._set(conn, "dead", "the server exited" + _detail(conn.stderr_tail()))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of one server is that server's
            leaf = _leaf(exc)
            if leaf is None:
                raise
            if not conn.stopping and conn.state != "failed":  # a timeout was said when it struck
                was_connected = conn.state == "connected"
                self._set(conn, "dead" if was_connected else "failed", self._why(conn, leaf))
        finally:
            conn.session = None
            conn.current.set()
            conn.ended.set()
            conn.settled.set()
            if conn.stderr is not None:
                conn.stderr.close()
                conn.stderr = None

    def _transport(self, conn: _Conn) -> contextlib.AbstractAsyncContextManager[Any]:
        spec = conn.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            conn.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
            cwd = (self.workspace / spec.cwd) if spec.cwd else self.workspace
            params = StdioServerParameters(
                command=spec.command,
                args=list(spec.args),
                env={**self.child_env.build(), **spec.env},
                cwd=cwd,
            )
            return stdio_client(params, errlog=conn.stderr)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url, headers=dict(spec.headers) or None, timeout=self.connect_timeout)
        return _http(spec, self.connect_timeout)

    def _set(self, conn: _Conn, state: State, reason: str = "") -> None:
        conn.state, conn.reason = state, reason
        conn.settled.set()
        if self.on_change is not None:
            self.on_change(conn.status())

    def _why(self, conn: _Conn, exc: BaseException) -> str:
        spec = conn.spec
        if isinstance(exc, TimeoutError):
            what = "timed out connecting after" if conn.state == "connecting" else "no answer within"
            return f"{what} {self.connect_timeout:g} s (config mcp_connect_timeout)" + conn.detail()
        if isinstance(exc, FileNotFoundError) and spec.transport == "stdio":
            return f"command not found: {spec.command}"
        if isinstance(exc, PermissionError) and spec.transport == "stdio":
            return f"command not executable: {spec.command}"
        text = _message(exc)
        if "connection closed" in text.lower():
            return "the server exited before it was ready" + conn.detail()
        if spec.transport != "stdio" and (isinstance(exc, OSError) or "connect" in text.lower()):
            return f"cannot reach {spec.url}: {text}"
        return text + conn.detail()

    def _call_failure(self, conn: _Conn, exc: BaseException) -> str:
        text = _message(exc)
        if "connection closed" in text.lower():
            return f"MCP server {conn.spec.name!r} closed the connection during the call{_detail(conn.stderr_tail())}"
        return f"MCP server {conn.spec.name!r} answered with an error: {text}"


async def _all_set(events: list[asyncio.Event], timeout: float) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events if not e.is_set()]
    if not waits:
        return
    try:
        await asyncio.wait(waits, timeout=timeout)
    finally:
        for w in waits:
            w.cancel()


async def _stop(conns: Iterable[_Conn]) -> None:
    """Ask each owner task to leave its SDK contexts itself; cancel those that do not in time."""
    conns = list(conns)
    for conn in conns:
        conn.stopping = True
        conn.wake.set()
    tasks = [c.task for c in conns if c.task is not None and not c.task.done()]
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=STOP_GRACE)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=STOP_GRACE)


@contextlib.asynccontextmanager
async def _http(spec: ServerSpec, timeout: float) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(
        headers=dict(spec.headers) or None, timeout=httpx2.Timeout(timeout, read=300.0)
    )
    async with client, streamable_http_client(spec.url, http_client=client) as streams:
        yield streams[0], streams[1]


@contextlib.asynccontextmanager
async def _watched(read: Any, on_end: Callable[[], None]) -> AsyncIterator[Any]:
    """The transport's read stream, relayed, with `on_end` called when it ends: that is how an idle
    server's exit is noticed (the SDK closes the stream; nothing else says so)."""
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)

    async def relay() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            on_end()

    async with anyio.create_task_group() as group:
        group.start_soon(relay)
        try:
            yield receive
        finally:
            group.cancel_scope.cancel()


async def _list_tools(session: Any) -> tuple[ToolInfo, ...]:
    from mcp_types import PaginatedRequestParams

    out: list[ToolInfo] = []
    cursor = None
    for _ in range(100):  # a server that pages forever is cut off
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in page.tools:
            hint = getattr(tool.annotations, "read_only_hint", None) if tool.annotations else None
            out.append(ToolInfo(tool.name, tool.description or "", dict(tool.input_schema), hint is True))
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(out)


def _leaf(exc: BaseException) -> BaseException | None:
    """The first real error inside (nested) exception groups; None when there are only cancellations."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _leaf(inner)
            if found is not None:
                return found
        return None
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit | GeneratorExit):
        return None
    return exc


def _message(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    text = str(message if isinstance(message, str) else exc).strip()
    return text or type(exc).__name__


def _detail(stderr: str) -> str:
    return f" (stderr: {stderr})" if stderr else ""
