"""An agent session: the loop, the engine, the log and the tools put together behind `AgentBackend`.

`submit` runs a prompt or a slash command as a task that feeds a queue of events; `interrupt`
cancels that task, and the loop closes whatever was open so the conversation stays valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_cli.agent.api import CommandSpec, SessionInfo
from agent_cli.agent.commands import offered_commands, run_command
from agent_cli.agent.input.calls import PersonCalls
from agent_cli.agent.input.mentions import MentionInfo, Mentions
from agent_cli.agent.input.router import PersonInput
from agent_cli.agent.memory_schedule import MemorySchedule
from agent_cli.agent.parts import SessionParts, SessionSetup, check_mode, offered_modes
from agent_cli.agent.prompt_commands import custom_turn
from agent_cli.agent.side_requests import complete_metered, summarize
from agent_cli.agent.workspace_reads import read_for_reattach, seen_read
from agent_cli.context.intake import reminder
from agent_cli.context.model import Summarizer
from agent_cli.context.prompts import load_prompt
from agent_cli.context.store import DirStore
from agent_cli.core.events import ContextStatus, Event, EvictionReport, Notice, TurnFinished
from agent_cli.core.types import Message, ModelInfo, Totals
from agent_cli.extensions.hooks import HookRunner
from agent_cli.extensions.hooks.lifecycle import SessionHooks
from agent_cli.extensions.hooks.runner import HookIdentity
from agent_cli.llm.base import Request
from agent_cli.llm.models import ModelFit
from agent_cli.session.git_exclude import ensure_git_exclude
from agent_cli.session.lock import SessionLock
from agent_cli.session.log import conversation, read_events, replay_into
from agent_cli.session.opening import (
    close_orphans,
    last_billed_input,
    open_log,
    restore_state,
    restore_totals,
)
from agent_cli.session.rewind import Rewinder
from agent_cli.session.timeline import PromptPoint, RewindMode, effective_events, is_prompt
from agent_cli.tools.base import ToolContext
from agent_cli.tools.mentions.index import FileIndex
from agent_cli.tools.shells.reminders import ShellReminders


class AgentSession:
    """Implements agent.api.AgentBackend. Coordinates the parts api/compose.py built: it opens logs,
    runs turns and switches models and modes; it constructs nothing from config."""

    def __init__(self, parts: SessionParts, setup: SessionSetup):
        self.parts = parts
        self.builder = parts.builder  # the engine and loop of each log opened, and of each sub-agent
        self.config = parts.config  # values read at each turn (max tokens, context window, summarizer)
        self.provider = parts.provider
        self.workspace = setup.workspace.resolve()
        self.interactive = setup.interactive
        self.trusted = setup.trusted
        self.clock = parts.clock
        self.tools = parts.tools
        self.subagents = parts.subagents
        self.subagents.host = self
        self.tools.on_change(lambda: self.engine.set_tools(self.tools.schemas()))
        self.mcp = parts.mcp  # MCP servers (extensions/mcp/): their tools join self.tools between turns
        self.store = parts.store
        self.model = parts.config.model
        self.permissions = parts.permissions
        self.permission_mode = self.permissions.mode
        self.permission_modes = offered_modes(setup.permission_modes, self.permission_mode)
        self.rule_warnings = [*parts.rule_warnings, *parts.rule_notes]
        self.warnings: list[str] = list(parts.rule_warnings)
        self.mode_before_plan = "ask"  # where approving a plan returns to
        self.models = parts.models
        self._model_notices: list[str] = []  # an unknown model's warning, for the TUI's next turn
        self._warned_models: set[str] = set()
        self._task: asyncio.Task | None = None
        self.totals = Totals()
        self.sandbox = parts.sandbox
        self.shells = parts.shells  # background shells: they outlive /clear, end with the session
        self.hooks: HookRunner = parts.hooks(self._hook_identity, self._record)
        self.custom = parts.commands
        self.skills = parts.skills  # for /skills; a loaded skill's allowed-tools end with the turn
        self.lifecycle = SessionHooks(self.hooks, "resume" if setup.resume_id else "startup")
        files = parts.files or FileIndex(self.workspace)
        self.person = PersonInput(self, Mentions(self, files))  # `@`, `!` and `#` (agent/input/)
        excluded = ensure_git_exclude(self.workspace)
        self._open(setup.resume_id, fork=setup.fork)
        self.warnings += [*parts.warnings, *([excluded] if excluded else [])]

    # -- construction ------------------------------------------------------------------------------
    def _open(
        self,
        resume_id: str | None,
        *,
        fork: bool = False,
        lock: SessionLock | None = None,
        running: asyncio.Task | None = None,  # a note update under way in the session left behind
    ) -> None:
        """Open a session for writing: a new one (on disk at its first prompt), or an earlier one —
        locked, its torn tail set aside — or a copy of an earlier one (`fork`)."""
        opened = open_log(
            self.store, self.workspace, self.model, self.clock(), resume_id, fork=fork, lock=lock
        )
        self.session_id, self.session_dir, self.log = opened.session_id, opened.session_dir, opened.log
        self.model, self.processes = opened.model, opened.processes
        self.warnings += opened.warnings
        events = opened.events
        self.info = self._model_info(self.model)
        self.dir_store = DirStore(self.session_dir)
        build = self.parts.builder
        self.engine = build.engine(
            model=self.info,
            system_prompt=self.parts.system_prompt,
            tools=self.tools,
            store=self.dir_store,
            summarizer=self._summarize,
            file_reader=lambda path: read_for_reattach(self.workspace, path),
        )
        self.todo: list[dict[str, Any]] = []
        self.tool_ctx = ToolContext(
            self.workspace,
            self.session_dir,
            self.dir_store,
            self.todo,
            sandbox=self.sandbox,
            permission_mode=lambda: self.permissions.mode,
            seen_read=lambda path, output: seen_read(self.workspace, self.engine.messages, path, output),
            limits=build.output_limits(),
            processes=self.processes,
            child_env=self.parts.child_env,
            side_model=functools.partial(self._summarize, purpose="web_fetch"),
            shells=self.shells,
            files=self.parts.file_access,
            read_guard=self.permissions,  # grep, glob and ls leave out what a deny rule keeps from reading
        )
        self.engine.sources.append(ShellReminders(self.shells, load_prompt("background_shells")))
        restore_totals(events, self.totals, lambda m, u: self.models.info(m).cost(u), self.model)
        events = effective_events(events)  # what a rewind removed is not in any view
        self.warnings += replay_into(events, self.engine)  # what a lost log line left is mended
        self.engine.resume_usage(last_billed_input(events, self.model))  # the gauge starts true
        restore_state(events, self.engine, self.todo)
        self.loop = build.loop(
            provider=self.provider,
            engine=self.engine,
            tools=self.tools,
            permissions=self.permissions,
            log=self.log,
            tool_ctx=self.tool_ctx,
            model=self.info,
            interactive=self.interactive,
            totals=self.totals,
            hooks=self.hooks,
        )
        self.loop.turn = sum(1 for e in events if is_prompt(e))
        self.rewinder = Rewinder(
            self.workspace,
            self.log,
            turn=lambda: self.loop.turn,
            reopen=lambda: self.switch(self.session_id),
            forget_note=lambda: self.memory.reset(),
        )
        self.loop.before_change = self.rewinder.checkpoint
        if orphaned := close_orphans(self.engine, self.log, self.loop.turn):
            self.warnings.append(orphaned)
        self.memory = build.memory(self.session_dir, self._summarize, self.engine)
        self.memory_schedule = MemorySchedule(
            self.memory,
            self.engine,
            self.log,
            spent=lambda: self.totals.usage,
            complete=self._complete_note,
            max_tokens=min(8_000, self.config.max_tokens),
            running=running,
        )

    def prompt_points(self) -> list[PromptPoint]:
        return self.rewinder.prompt_points()

    async def rewind(self, number: int, mode: RewindMode) -> str:
        """Back to before prompt `number`: code (from its checkpoint), conversation, or both."""
        return await self.rewinder.rewind(number, mode)

    async def rewind_undo(self) -> str:
        """The code as it was before the last code rewind."""
        return await self.rewinder.undo()

    async def _summarize(self, system: str, content: str, purpose: str = "summary") -> str:
        args = (self.provider, self.config, self.models, self.model, self.totals, self.log)
        return await summarize(*args, system, content, purpose)

    async def _complete_note(self, request: Request) -> str:
        """Send a session-memory request (the main model: the cached prefix is the main model's)."""
        args = (self.provider, request, self.totals, self.models, self.log)
        return (await complete_metered(*args, purpose="memory")).text

    @property
    def summarizer(self) -> Summarizer:
        return self._summarize

    # -- AgentBackend ------------------------------------------------------------------------------
    def status(self) -> ContextStatus:
        return self.engine.status()

    def breakdown(self) -> dict[str, int]:
        return self.engine.breakdown()

    def eviction(self) -> EvictionReport:
        return self.engine.ghosts.report()

    def sessions(self) -> list[SessionInfo]:
        return list(self.store.list())

    def sessions_passed_over(self) -> str:
        return self.store.passed_over()

    def conversation(self) -> list[Message]:
        if not self.log.started:
            return []
        return conversation(effective_events(read_events(self.log.path).events))

    @property
    def counter(self):  # the engine's token counter, for what a mention costs
        return self.engine.counter

    async def complete_files(self, query: str) -> list[str]:
        """Workspace paths for `@query`, best first."""
        return await self.person.complete(query)

    async def describe_mentions(self, text: str) -> list[MentionInfo]:
        """The prompt's `@` mentions with their token cost, or why one will not be attached."""
        return await self.person.describe(text)

    def commands(self) -> list[CommandSpec]:
        return offered_commands(self) + self.custom.specs(self.workspace)

    def cost(self) -> dict[str, Any]:
        totals = self.totals  # the session's totals win over this process's view (the engine's)
        money = {"total_cost_usd": round(totals.cost_usd, 6), "usage": totals.usage.to_json()}
        hits = {"cache_hit_rate": round(totals.cache_hit_rate(), 4)}
        return {**self.engine.metrics(), **money, **totals.request_counts(), **hits}

    def interrupt(self, reason: str = "") -> None:
        """Cancel the running turn; the model reads `reason` in the results of cut tools."""
        if self._task and not self._task.done():
            self.loop.interrupt_reason = reason
            self._task.cancel()

    async def idle(self) -> None:
        """Wait until the running turn (if any) has ended and logged its end."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(self._task)

    async def submit(self, text: str) -> AsyncIterator[Event]:
        queue: asyncio.Queue[Event] = asyncio.Queue()
        for warning in self.warnings:  # what opening the session found, told once
            queue.put_nowait(Notice(warning, "warning"))
        self.warnings = []
        emit = self.lifecycle.notifying(queue.put_nowait)
        if custom := self.custom.find(text):
            work = custom_turn(self, self._turn, *custom, text, emit)
        elif text.startswith("/") and not text.startswith("//"):
            work = run_command(self, text, emit)
        else:
            work = self.person.turn(text.removeprefix("/") if text.startswith("//") else text, emit)
        self._task = asyncio.ensure_future(work)
        self._task.add_done_callback(lambda t: _surface(t, queue.put_nowait))
        while True:
            event = await queue.get()
            yield event
            if isinstance(event, TurnFinished):
                break
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task

    async def _turn(
        self,
        prompt: str,
        emit: Callable[[Event], None],
        user_message: Message | None = None,
        calls: PersonCalls | None = None,
    ) -> TurnFinished:
        if self.permission_mode == "plan":
            self.engine.inject(reminder(load_prompt("plan_mode")))
        try:
            await self._before_turn(emit)
            await self.lifecycle.start(emit, self.engine.inject)
            return await self.loop.run(prompt, emit, user_message=user_message, calls=calls)
        finally:
            if self.skills is not None:
                self.skills.grants.end_turn()
            if failed := await self.rewinder.end_turn():  # said with the next prompt: this turn is over
                self.warnings.append(failed)
            self._after_turn(emit)

    def _model_info(self, name: str) -> ModelInfo:
        """The registry's facts; an unknown model is said once (stderr headless, a Notice in the TUI)."""
        window = self.config.context_window or None
        warning = self.models.warning(name, window)
        if warning and name not in self._warned_models:
            self._warned_models.add(name)
            (self._model_notices if self.interactive else self.warnings).append(warning)
        return self.models.info(name, window)

    async def _before_turn(self, emit: Callable[[Event], None]) -> None:
        """Tools of MCP servers that connected since the last turn join now, never within a turn."""
        for text in self._model_notices:
            emit(Notice(text, "warning"))
        self._model_notices.clear()
        if self.mcp is None:
            return
        notices = await self.mcp.before_turn(self.tools, self.engine.status().budget, self.engine.counter)
        for text, level in notices:
            emit(Notice(text, level))

    async def restart_hooks(self, reason: str) -> None:
        """/clear: SessionEnd hooks run now, SessionStart ones before the next prompt (as Claude Code)."""
        await self.lifecycle.restart(reason)

    def _hook_identity(self) -> HookIdentity:
        return HookIdentity(self.session_id, self.log.path, self.permission_mode)

    def _record(self, kind: str, **fields: Any) -> None:
        self.log.append(kind, **fields)

    def _after_turn(self, emit: Callable[[Event], None]) -> None:
        if self.todo:
            self.log.append("todo", todos=list(self.todo))
        if self.interactive:  # a headless run ends with its answer: a note written now would go unread
            self.schedule_memory(emit)

    def schedule_memory(self, emit: Callable[[Event], None], force: bool = False) -> asyncio.Task | None:
        """Update the session-memory note in the background when §7's thresholds say so."""
        return self.memory_schedule.schedule(emit, force)

    async def wait_background(self) -> None:
        await self.memory_schedule.wait()

    def switch_model(self, name: str) -> ModelFit:
        """/model NAME: switched unless the provider cannot serve it (`refused` says why). Claude
        Code's aliases (`sonnet`) switch to the id they name."""
        if refusal := self.models.refusal(name):
            return ModelFit(refused=refusal)
        name = self.models.resolve(name)
        routes = getattr(self.provider, "routes_any_model", True)
        fit = self.models.fit(name, self.provider.name, routes, self.config.context_window or None)
        if not fit.refused:
            self._warned_models.add(name)  # the fit's note says it now, not before the next turn
            self.set_model(name)
        return fit

    def set_model(self, name: str) -> None:
        self.model = name
        self.info = self._model_info(name)
        self.engine.set_model(self.info)
        self.loop.model = self.info
        self.loop.max_tokens = min(self.config.max_tokens, self.info.max_output_tokens)
        self.log.append("config", model=name)

    def set_permission_mode(self, mode: str) -> None:
        """Switch modes (ModeRefused on one not offered); entering or leaving plan mode tells the model."""
        check_mode(mode, self.permission_modes)
        before = self.permission_mode
        self.permissions.set_mode(mode)  # type: ignore[arg-type]
        self.permission_mode = mode
        self.log.append("config", permission_mode=mode)
        if mode == "plan" and before != "plan":
            self.mode_before_plan = before
        elif before == "plan" and mode != "plan":
            self.engine.inject(reminder(load_prompt("plan_approved").replace("{mode}", mode)))

    def switch(self, session_id: str | None) -> None:
        """/resume ID or /clear into a new session: reopen everything on that log. Another
        session's lock is taken before this one is let go, so a refusal leaves this one open."""
        lock = None
        if session_id is not None:
            resolved = self.store.resolve(session_id)
            if resolved != self.session_id:
                lock = SessionLock(self.store.path(resolved), resolved)
                lock.acquire()  # raises SessionLocked: nothing changed
            session_id = resolved
        self.log.close()
        self.totals = Totals()
        self.warnings = []
        self.lifecycle.reopened("resume" if session_id else "clear")
        self._open(session_id, lock=lock, running=self.memory_schedule.task)

    def close(self, reason: str = "other") -> None:
        """End the session from sync code: SessionEnd hooks run (bounded by their timeouts), the log closes."""
        self.shells.close()
        self.lifecycle.end_sync(reason)
        self.log.close()

    async def aclose(self, reason: str = "other") -> None:
        """Stop the MCP servers (on the loop they run on), run SessionEnd hooks, then close the log."""
        await self.shells.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.lifecycle.end(reason)
        self.log.close()


def _surface(task: asyncio.Task, emit: Callable[[Event], None]) -> None:
    """A crash in the turn's task still ends the turn, visibly, instead of hanging the front end."""
    if task.cancelled():
        emit(TurnFinished("interrupted", "", 0, False))
        return
    exc = task.exception()
    if exc is not None:
        emit(Notice(f"internal error: {type(exc).__name__}: {exc}", "error"))
        emit(TurnFinished("error", str(exc), 0, True))
