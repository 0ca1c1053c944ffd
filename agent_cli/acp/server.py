"""The ACP agent: the requests an ACP client sends, answered on `api.Session` (live.py).

`initialize` says what the agent can do: load sessions, take images and embedded context in a
prompt, use the client's MCP servers (stdio, http, sse). `session/new` and `session/load` open a
session in the client's cwd with the client's MCP servers added to the person's own; load replays
the conversation first. The slash commands are advertised once a session is open. The client's
`fs` methods are the file tools' view of files when it offers both read and write (an editor's
unsaved buffers are what the model reads); bash always runs in our sandbox (the client's terminal
would run it outside bubblewrap and the seccomp filter, which only this process can hand it).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.helpers import update_available_commands
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)

from agent_cli.acp.client import ClientFiles
from agent_cli.acp.history import replay
from agent_cli.acp.inputs import Attachments, mcp_servers, to_prompt
from agent_cli.acp.live import ACP_MODES, Live
from agent_cli.acp.updates import CompactionUpdate
from agent_cli.api import Options

log = logging.getLogger("agent.acp")


def opened_warnings(live: Live) -> list[str]:
    """What opening the session found, taken from the backend (which would say it at the first
    prompt): to be said now, once."""
    backend = live.session.backend
    warnings = list(getattr(backend, "warnings", ()))
    if warnings:
        backend.warnings = []
    return warnings


class AcpAgent:
    """acp.Agent for `agent acp`. `base` are the options the command was started with (model,
    permission mode, …); each session gets them with the client's cwd and MCP servers."""

    def __init__(self, base: Options, scratch: Path) -> None:
        self.base = base
        self.conn: Any = None
        self.capabilities = ClientCapabilities()
        self.compaction_updates = False  # the client declared the draft `session.compaction`
        self.sessions: dict[str, Live] = {}
        self._told: set[asyncio.Task] = set()
        self.attachments = Attachments(scratch)  # a private folder of this process

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def saw(self, message: dict[str, Any]) -> None:
        """Every raw message from the client (the connection's observer): a capability the SDK's
        types do not know yet (`clientCapabilities.session.compaction`) is read here."""
        if message.get("method") == "initialize":
            caps = (message.get("params") or {}).get("clientCapabilities") or {}
            session = caps.get("session") if isinstance(caps, dict) else None
            self.compaction_updates = isinstance(session, dict) and isinstance(
                session.get("compaction"), dict
            )

    # -- requests -----------------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **_: Any
    ) -> InitializeResponse:
        from agent_cli import __version__

        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="agent", title="agent", version=__version__),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        live, problems = await self._open(cwd, mcp_servers, None)
        self._later(live, problems)
        return NewSessionResponse(session_id=live.id, modes=live.modes())

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> LoadSessionResponse:
        live = self.sessions.get(session_id)
        problems: list[str] = []
        if live is None:
            live, problems = await self._open(cwd, mcp_servers, session_id)
            # before its history: that it is someone else's (no seal), or what else opening it found
            for warning in opened_warnings(live):
                await self.send(live.id, update_agent_message_text(f"[warning] {warning}\n\n"))
        assert live.updates is not None
        for update in replay(live.session.backend.conversation(), live.updates):
            await self.send(live.id, update)
        self._later(live, problems)
        return LoadSessionResponse(modes=live.modes())

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        live = self._live(session_id)
        text, problems = to_prompt(prompt, self.attachments)
        for problem in problems:
            await self.send(session_id, update_agent_message_text(f"[warning] {problem}\n\n"))
        if not text.strip():
            raise RequestError.invalid_params({"message": "the prompt is empty"})
        return await live.prompt(text)

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> None:
        await self._live(session_id).set_mode(mode_id)

    # -- the rest -----------------------------------------------------------------------------------
    async def _open(self, cwd: str, servers: list[Any] | None, resume: str | None) -> tuple[Live, list[str]]:
        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, got {cwd!r}"})
        extra, problems = mcp_servers(servers)
        options = replace(
            self.base,
            cwd=cwd,
            resume=resume,
            mcp_servers={**self.base.mcp_servers, **extra},
            mcp_servers_origin="editor",
            permission_modes=ACP_MODES,  # yolo only when the command started in it
        )
        fs = self.capabilities.fs
        both = fs is not None and bool(fs.read_text_file) and bool(fs.write_text_file)
        files = ClientFiles(self.conn) if both else None
        live = await Live(
            self.conn, options, self.send, files=files, compaction_updates=self.compaction_updates
        ).open()
        self.sessions[live.id] = live
        return live, problems

    def _live(self, session_id: str) -> Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} is open here"})
        return live

    def _later(self, live: Live, problems: list[str]) -> None:
        """After the response: the session's slash commands, and what was left out of it."""

        async def tell() -> None:
            try:
                await self.send(live.id, update_available_commands(live.commands()))
                for problem in problems:
                    await self.send(live.id, update_agent_message_text(f"[warning] {problem}\n\n"))
            except (ConnectionError, RequestError):
                pass  # the client has gone
            except Exception:
                log.exception("could not tell the client the session's commands")

        task = asyncio.get_running_loop().create_task(tell())
        self._told.add(task)  # held until done (the loop keeps only a weak reference)
        task.add_done_callback(self._told.discard)

    async def send(self, session_id: str, update: Any) -> None:
        """One session/update; the draft compaction update goes as it is (the SDK has no type)."""
        if isinstance(update, CompactionUpdate):
            connection = getattr(self.conn, "_conn", None)  # the SDK's JSON-RPC connection
            if connection is not None:
                await connection.send_notification(
                    "session/update", {"sessionId": session_id, "update": update.to_json()}
                )
            return
        await self.conn.session_update(session_id=session_id, update=update)

    async def close(self) -> None:
        """The client has gone: every session's turn ends and its log closes (resumable)."""
        for live in list(self.sessions.values()):
            await live.close()
        self.sessions.clear()
