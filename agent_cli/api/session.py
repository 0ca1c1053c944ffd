"""`api.Session` and `api.run`: a session on the one composition root (api/compose.py), driven from
Python. `agent -p` and the TUI's launch open their sessions through it too.

    async with api.Session(cwd="repo", can_use_tool=ask) as session:
        async for event in session.send("fix the failing test"):
            ...                                 # core.events values, as the TUI gets them
        print(session.result.total_cost_usd)    # the Result of that prompt

Without `can_use_tool` a session is headless: what the permissions would ask about is refused and
listed in the Result's `permission_denials`, as `agent -p` does. With it, each question is handed to
the callback, which answers "allow_once", "allow_always" or "deny".
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.agent.side_requests import measure_prefix
from agent_cli.api.compose import open_session
from agent_cli.api.options import NO_KEY, Options, Prepared, has_key, prepare
from agent_cli.api.result import Result, Tally, failure
from agent_cli.api.wire import SessionFacts
from agent_cli.core.errors import AgentError, ConfigError
from agent_cli.core.events import Event, Notice, PermissionDecision, PermissionRequest, TurnFinished

if TYPE_CHECKING:
    from agent_cli.agent.runner import AgentSession
    from agent_cli.tools.base import FileAccess

PermissionCallback = Callable[[PermissionRequest], Awaitable[PermissionDecision]]
Report = Callable[[str, str], None]  # (text, level): problems as they happen (headless: stderr)
DECISIONS = ("allow_once", "allow_always", "deny")


class Session:
    """One agent session. Give the options as keywords (`model=…`, `permission_mode=…`, any field
    of `Options`) or as `options=`; `prepared=` is options already resolved (the TUI's launch).

    `interactive` is for front ends that answer permission questions themselves from the events
    (the TUI); a `can_use_tool` callback makes a session interactive too. `report` gets problems as
    they happen (MCP servers, an untrusted workspace); without it they come as Notice events.
    `files` is where the file tools read and write text instead of the disk (an editor's buffers:
    `agent acp` passes the client's `fs` methods)."""

    def __init__(
        self,
        cwd: str | Path = ".",
        *,
        options: Options | None = None,
        prepared: Prepared | None = None,
        can_use_tool: PermissionCallback | None = None,
        interactive: bool = False,
        report: Report | None = None,
        files: FileAccess | None = None,
        **fields: Any,
    ) -> None:
        if (options is not None or prepared is not None) and (fields or str(cwd) != "."):
            raise TypeError("give the options as keywords or as options=/prepared=, not both")
        self.options = options or Options(cwd=cwd, **fields)
        self._prepared = prepared
        self.can_use_tool = can_use_tool
        self.interactive = interactive or can_use_tool is not None
        self.report = report
        self._reported: list[str] = []  # what `report` was told since the last Result: its warnings too
        self.files = files
        self._backend: AgentSession | None = None
        self._current: AsyncGenerator[Event, None] | None = None  # the last send's events
        self.result: Result | None = None  # the last prompt's

    # -- opening -----------------------------------------------------------------------------------
    def prepare(self) -> Prepared:
        """The options resolved against the config files and the session store (once)."""
        if self._prepared is None:
            self._prepared = prepare(self.options)
        return self._prepared

    async def open(self, *, trusted: bool | None = None) -> Session:
        """Build the session (off the event loop: it reads files and imports the provider's SDK).
        `trusted` overrides the workspace-trust decision (the TUI passes the person's answer).
        Raises AgentError — ConfigError, SessionError — with what is wrong, e.g. no API key."""
        if self._backend is not None:
            return self
        prepared = self.prepare()
        if not has_key(prepared.config):
            error = ConfigError(NO_KEY)
            error.hint = "export ANTHROPIC_API_KEY=sk-ant-... or run with demo=True"
            raise error
        self._backend = await asyncio.to_thread(
            open_session,
            prepared.config,
            prepared.workspace,
            resume_id=prepared.resume_id,
            fork=prepared.fork,
            interactive=self.interactive,
            demo=prepared.demo,
            trusted=trusted,
            report=self._report if self.report is not None else None,
            file_access=self.files,
            permission_modes=self.options.permission_modes,
        )
        self._backend.warnings += prepared.notes  # told with what opening the session found
        backend = self._backend
        status = backend.engine.status()
        fresh = not backend.engine.messages
        if fresh and status.used >= status.budget:
            # by our estimate the system prompt and tools alone fill the budget: ask the provider's
            # count (free, and only then), so that the warning below is not our estimate's error
            await measure_prefix(backend.provider, backend.engine)
            status = backend.engine.status()
        if fresh and status.used >= status.budget:
            backend.warnings.append(
                f"the context budget ({status.budget:,} tokens) is no more than the system prompt and "
                f"tools alone ({status.used:,}): every request will be over it; give a larger "
                "--budget-tokens"
            )
        wanted = self.options.model  # `--resume ID --model M`: M, not the log's last /model
        if prepared.resume_id and wanted and self._backend.model != wanted:
            self._backend.set_model(wanted)
        if self._backend.mcp is not None:
            self._backend.mcp.start()  # on this loop: servers connect while the prompt is prepared
        return self

    def _report(self, text: str, level: str) -> None:
        """A problem as it happens (a server failed): to the caller's `report`, and kept for the
        next Result's `warnings`, where a run's JSON lists what went wrong."""
        assert self.report is not None
        self.report(text, level)
        if level != "info":
            self._reported.append(text)

    async def __aenter__(self) -> Session:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def backend(self) -> AgentSession:
        """The open session behind `agent.api.AgentBackend` (what the TUI drives)."""
        if self._backend is None:
            raise RuntimeError("the session is not open: use `async with api.Session(...)` or `await open()`")
        return self._backend

    @property
    def session_id(self) -> str:
        return self.backend.session_id

    def facts(self) -> SessionFacts:
        """Who and where the session is, with what tools: the stream's `system`/`init` message."""
        from agent_cli import __version__

        backend = self.backend
        servers = backend.mcp.manager.statuses() if backend.mcp is not None else []
        return SessionFacts(
            session_id=backend.session_id,
            cwd=str(backend.workspace),
            model=backend.model,
            permission_mode=backend.permission_mode,
            tools=tuple(backend.tools.names()),
            mcp_servers=tuple((s.name, s.state) for s in servers),
            slash_commands=tuple(c.name for c in backend.commands()),
            version=__version__,
        )

    # -- prompts -----------------------------------------------------------------------------------
    def send(self, prompt: str) -> AsyncIterator[Event]:
        """Run `prompt` (or a slash command); yields the events as they happen, ending with
        TurnFinished. `self.result` holds the prompt's Result once the iteration ends. A send left
        before its end (a `break`) has its turn interrupted — its open tool calls get an
        "interrupted" result — at the latest when the next prompt is sent or the session closes."""
        self._current = self._events(prompt, previous=self._current)
        return self._current

    async def _events(
        self, prompt: str, previous: AsyncGenerator[Event, None] | None
    ) -> AsyncIterator[Event]:
        backend = self.backend
        if previous is not None:
            try:
                await previous.aclose()  # a send left unread: its turn ends first
            except RuntimeError as exc:  # another task is still reading it
                raise RuntimeError("a prompt is already running in this session") from exc
        self.result = None
        tally = Tally(str(backend.workspace))
        finished = False
        try:
            async for event in backend.submit(prompt):
                if _echoes_log_failure(backend, event):
                    continue  # said once, in the Result
                tally.observe(event)
                if isinstance(event, PermissionRequest) and self.can_use_tool is not None:
                    for extra in await self._answer(event):
                        tally.observe(extra)
                        yield extra
                if isinstance(event, TurnFinished):
                    finished = True
                    if not self.interactive and event.stop_reason != "interrupted":
                        await backend.wait_background()  # what a slash command left running
                    tally.warnings[:0], self._reported = self._reported, []
                    self.result = tally.finish(backend, _log_failure(backend))
                yield event
        finally:
            if not finished:  # the caller stopped reading: end the turn, keep the session whole
                backend.interrupt()
                await backend.idle()

    async def _answer(self, request: PermissionRequest) -> list[Event]:
        """Ask `can_use_tool` and resolve the question; a callback that fails or answers nonsense
        denies, and says so."""
        future = request.future
        if future is None or future.done() or self.can_use_tool is None:
            return []
        try:
            decision = await self.can_use_tool(request)
        except Exception as exc:  # noqa: BLE001 - the caller's code; the turn goes on, denied
            future.set_result("deny")
            return [Notice(f"can_use_tool failed ({type(exc).__name__}: {exc}); denied", "error")]
        if decision not in DECISIONS:
            future.set_result("deny")
            return [Notice(f"can_use_tool answered {decision!r}; use one of {DECISIONS}: denied", "error")]
        if not future.done():
            future.set_result(decision)
        return []

    async def run(self, prompt: str) -> Result:
        """Run `prompt` to its end; its Result."""
        async for _ in self.send(prompt):
            pass
        assert self.result is not None
        return self.result

    def interrupt(self) -> None:
        """Stop the running turn, as Esc does: open tool calls get an "interrupted" result."""
        if self._backend is not None:
            self._backend.interrupt()

    async def close(self) -> None:
        """Stop MCP servers, run SessionEnd hooks and close the log. The session stays on disk:
        `Options(resume=session_id)` goes on from it."""
        if self._current is not None:
            current, self._current = self._current, None
            with contextlib.suppress(RuntimeError):
                await current.aclose()  # a send left unread: its turn ends now
        backend, self._backend = self._backend, None
        if backend is not None:
            with contextlib.suppress(Exception):  # a note update under way finishes before the log closes
                await backend.wait_background()
            await backend.aclose()


def _log_failure(backend: AgentSession) -> Exception | None:
    """The session log's failed write (disk full), if one happened."""
    return getattr(backend.log, "failure", None)


def _echoes_log_failure(backend: AgentSession, event: Event) -> bool:
    failure_ = _log_failure(backend)
    said = getattr(event, "text", "") or getattr(event, "message", "")
    return failure_ is not None and isinstance(said, str) and str(failure_) in said


def run(
    prompt: str,
    cwd: str | Path = ".",
    *,
    options: Options | None = None,
    can_use_tool: PermissionCallback | None = None,
    **fields: Any,
) -> Result:
    """Run one prompt in a new session (or the one `resume=` / `continue_session=True` names) and
    return its Result. Never raises for what goes wrong in the run — no key, a bad option, a failed
    request: the Result says it (`is_error`, `result`, `errors`). Call it outside an event loop; in
    async code use `Session.run`."""
    if options is None:
        options = Options(cwd=cwd, **fields)
    elif fields or str(cwd) != ".":
        raise TypeError("give the options as keywords or as options=, not both")
    return asyncio.run(_run(prompt, options, can_use_tool))


async def _run(prompt: str, options: Options, can_use_tool: PermissionCallback | None) -> Result:
    session = Session(options=options, can_use_tool=can_use_tool)
    try:
        await session.open()
    except AgentError as exc:
        return failure(str(exc))
    try:
        return await session.run(prompt)
    finally:
        with contextlib.suppress(AgentError):
            await session.close()
