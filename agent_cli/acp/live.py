"""One ACP session: an `api.Session` opened for the client, and its turn.

The session is interactive: each question the permission layer asks goes to the client
(`session/request_permission`) and its answer resolves the question's future. `session/cancel`
interrupts the turn as Esc does (open tool calls get an "interrupted" result) and withdraws a
question still waiting. A client that goes away mid-turn ends the turn the same way, and the
session stays on disk, resumable (`agent --resume ID`, `session/load`).

The turn's stop reason is the spec's: a model that stopped on its token limit (`max_tokens`) or
refused (`refusal`) says so; an API error that ended the turn is the prompt's JSON-RPC error (-32603,
its message in `data`), since ACP v1 has no stop reason for a failure. A refused prompt stays in our
conversation (the spec lets the client expect it left out of the next prompt; we do not drop it).
The session's permission mode is the client's mode: it may switch among `permission_modes` (ask,
auto-edit, plan, and the mode `agent acp` started in), by `session/set_mode` or `/permissions MODE`
alike, and every change, by any path, is sent as `current_mode_update`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError
from acp.helpers import update_current_mode
from acp.schema import AvailableCommand, AvailableCommandInput, PromptResponse, SessionMode, SessionModeState
from acp.schema import UnstructuredCommandInput as CommandInput

from agent_cli.acp import client
from agent_cli.acp.updates import Updates
from agent_cli.api import Options, Session
from agent_cli.core.errors import AgentError
from agent_cli.core.events import ErrorEvent, Event, PermissionDecision, PermissionRequest, TurnFinished
from agent_cli.tools.permissions import CYCLE

Send = Callable[[str, Any], Awaitable[None]]  # (session id, update): one session/update to the client
STOP = {  # ours -> ACP's (else end_turn); "error" is the prompt's JSON-RPC error
    "interrupted": "cancelled",
    "max_turns": "max_turn_requests",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}
ACP_MODES = CYCLE  # what a session may switch to over ACP, besides the mode it started in (never yolo)
HIDDEN = ("quit", "resume", "shells")  # the TUI's own: leaving, switching the session, its shells panel
MODE_NAMES = {"ask": "Ask", "auto-edit": "Auto-edit", "plan": "Plan", "yolo": "Yolo"}
MODE_TEXT = {
    "ask": "asks before edits and commands",
    "auto-edit": "edits without asking; asks before commands",
    "plan": "reads and plans; changes nothing",
    "yolo": "runs everything without asking (bash stays in the sandbox)",
}


class Live:
    def __init__(
        self,
        conn: Any,
        options: Options,
        send: Send,
        *,
        files: client.ClientFiles | None,
        compaction_updates: bool,
    ) -> None:
        self.conn = conn
        self.send = send
        self.files = files
        self.session = Session(options=options, can_use_tool=self.ask, files=files)
        self.compaction_updates = compaction_updates
        self.id = ""
        self.updates: Updates | None = None
        self.asking: set[asyncio.Task] = set()  # permission questions waiting for the client
        self.turn: asyncio.Lock = asyncio.Lock()
        self.cancelled = False  # this turn's cancel came: no more questions go out
        self.told_mode = ""  # the mode the client was last told

    async def open(self) -> Live:
        """Open the session; RequestError with what is wrong (no key, a session in use, no such one)."""
        try:
            await self.session.open()
        except AgentError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            raise RequestError.invalid_params({"message": f"{exc}{hint}"}) from exc
        backend = self.session.backend
        self.id = backend.session_id
        self.told_mode = backend.permission_mode
        if self.files is not None:
            self.files.session_id = self.id
        self.updates = Updates(
            backend.workspace,
            backend.status,
            lambda: backend.todo,
            compaction_updates=self.compaction_updates,
        )
        return self

    # -- what the client sees of it -----------------------------------------------------------------
    def modes(self) -> SessionModeState:
        """The permission modes as ACP session modes: those the session may switch to."""
        backend = self.session.backend
        return SessionModeState(
            current_mode_id=backend.permission_mode,
            available_modes=[
                SessionMode(id=m, name=MODE_NAMES.get(m, m), description=MODE_TEXT.get(m))
                for m in backend.permission_modes
            ],
        )

    async def set_mode(self, mode: str) -> None:
        """`session/set_mode`: the same rule as `/permissions MODE` (the session's own check)."""
        try:
            self.session.backend.set_permission_mode(mode)
        except ValueError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from exc
        await self.tell_mode()

    async def tell_mode(self) -> None:
        """`current_mode_update` when the mode is not the one the client was last told."""
        mode = self.session.backend.permission_mode
        if mode != self.told_mode:
            self.told_mode = mode
            await self.send(self.id, update_current_mode(mode))

    def commands(self) -> list[AvailableCommand]:
        """The slash commands (built-in, custom, skills) a client may offer on `/`."""
        out = []
        for spec in self.session.backend.commands():
            if spec.name in HIDDEN:
                continue
            hint = AvailableCommandInput(root=CommandInput(hint=spec.args)) if spec.args else None
            out.append(AvailableCommand(name=spec.name, description=spec.help or spec.name, input=hint))
        return out

    # -- a turn -------------------------------------------------------------------------------------
    async def prompt(self, text: str) -> PromptResponse:
        """Run `text` to its end, each event sent as it comes; the reason it stopped."""
        if self.turn.locked():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        async with self.turn:
            self.cancelled = False
            stop, errors = "end_turn", []
            async with contextlib.aclosing(self.session.send(text)) as events:
                async for event in events:
                    await self.show(event)
                    if isinstance(event, ErrorEvent):
                        errors.append(event.message + (f" ({event.hint})" if event.hint else ""))
                    if isinstance(event, TurnFinished):
                        stop = STOP.get(event.stop_reason, event.stop_reason)
                        errors = errors or [event.result or "the turn failed"]  # a crash says its own
            if stop == "error":
                raise RequestError.internal_error({"message": "; ".join(errors)})
            return PromptResponse(stop_reason=stop if stop in STOP.values() else "end_turn")

    async def show(self, event: Event) -> None:
        assert self.updates is not None
        for update in self.updates.of(event):
            await self.send(self.id, update)
        await self.tell_mode()  # a `/permissions MODE` in the prompt, say

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        """api.Session's `can_use_tool`: the question to the client, after the call it is about."""
        assert self.updates is not None
        if self.cancelled:
            return "deny"
        await self.show(request)  # the tool call, pending: clients show the question on it
        return await client.ask(self.conn, self.id, self.updates.question(request), request.rule, self.asking)

    def cancel(self) -> None:
        """`session/cancel`: stop the turn as Esc does; a question still waiting is withdrawn."""
        self.cancelled = True
        self.session.interrupt()
        for task in list(self.asking):
            task.cancel()

    async def close(self) -> None:
        self.cancel()
        with contextlib.suppress(Exception):
            await self.session.close()
