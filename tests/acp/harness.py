"""An ACP client for the tests, on the SDK's client side: it spawns the real `agent acp`, records
every session update, answers permission questions from a queue, and serves `fs` reads and writes
from its own "editor buffers" (written through to the disk, as an editor saves). `in_process` is
the fast way: our AcpAgent in this process, the Editor its connection (no JSON-RPC framing)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

AGENT = (sys.executable, "-m", "agent_cli.cli", "acp")
WAIT = 120.0  # seconds: only so that a broken agent fails the test instead of hanging it


class Editor:
    """acp.Client: what an editor does for the agent."""

    def __init__(self, buffers: dict[str, str] | None = None) -> None:
        self.buffers = dict(buffers or {})  # path -> unsaved text
        self.updates: list[Any] = []
        self.questions: list[Any] = []
        self.answers: deque[str] = deque()
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self._changed = asyncio.Condition()
        self.stderr: Path | None = None  # the agent's stderr, once spawned

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **_: Any):
        self.questions.append((tool_call, [o.option_id for o in options]))
        answer = self.answers.popleft()
        await self._notify()
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        await self._notify()

    async def read_text_file(self, session_id: str, path: str, line=None, limit=None, **_: Any):
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text()
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any):
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content)  # the editor saves its buffer
        return WriteTextFileResponse()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def until(self, condition: Callable[[], Any]) -> Any:
        """Wait until `condition()` is true (checked at each update); its value."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(condition), WAIT)
        return condition()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind) if getattr(u.content, "text", None))

    def tool_status(self, tool_call_id: str) -> str | None:
        status = None
        for update in self.updates:
            if getattr(update, "tool_call_id", None) == tool_call_id and update.status:
                status = update.status
        return status


@contextlib.asynccontextmanager
async def connected(
    editor: Editor, workspace: Path, env: dict[str, str], *, fs: bool = True, args: tuple[str, ...] = ()
) -> AsyncIterator[tuple[Any, Any]]:
    """`agent acp` spawned in `workspace`, initialized; (connection, process). Its stderr goes to
    `editor.stderr` (a file: a pipe nobody reads would fill and stop it)."""
    editor.stderr = workspace.parent / f"acp-stderr-{id(editor)}.txt"
    with editor.stderr.open("wb") as stderr:
        spawned = spawn_agent_process(
            editor, *AGENT, *args, env=env, cwd=workspace, transport_kwargs={"stderr": stderr}
        )
        async with spawned as (conn, process):
            caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
            initialize = conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
            conn.init = await asyncio.wait_for(initialize, WAIT)
            yield conn, process


@contextlib.asynccontextmanager
async def in_process(editor: Editor, options: Any, scratch: Path) -> AsyncIterator[Any]:
    """`agent acp`'s AcpAgent, started with `options` (api.Options, as the command builds them) and
    initialized, calling `editor` as its client; the sessions closed afterwards."""
    from agent_cli.acp.server import AcpAgent

    agent = AcpAgent(options, scratch)
    agent.on_connect(editor)
    await agent.initialize(protocol_version=PROTOCOL_VERSION)
    try:
        yield agent
    finally:
        await agent.close()
