"""The Textual app: a transcript, a prompt, a status bar with the context gauge.

It talks to the agent only through `AgentBackend` (agent/api.py) and the events in core/events.py.
The app paints first and loads the backend in a worker; a prompt runs in a worker that routes each
event to a widget. Build it with `create_app`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Collapsible
from textual.worker import Worker, WorkerState

from agent_cli.agent.api import AgentBackend
from agent_cli.core.events import (
    CommandResult,
    ContextStatus,
    ContextUpdate,
    Event,
    PermissionRequest,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolStarted,
    TurnFinished,
    UsageUpdate,
)
from agent_cli.tui.backend_reader import BackendReader
from agent_cli.tui.command_views import CommandViews
from agent_cli.tui.commands import command_name, local_help, merged_commands
from agent_cli.tui.completion import argument_choices
from agent_cli.tui.double_press import DoublePress
from agent_cli.tui.driver import paste_driver_class
from agent_cli.tui.history_file import HistoryFile
from agent_cli.tui.key_actions import KeyActions
from agent_cli.tui.key_guard import KeyGuard
from agent_cli.tui.mentions import MentionActions
from agent_cli.tui.screens.permission_screen import ask_permission
from agent_cli.tui.screens.plan_screen import PlanScreen
from agent_cli.tui.screens.trust_screen import TrustQuestion, TrustScreen
from agent_cli.tui.shell_views import ShellViews
from agent_cli.tui.turn_renderer import TurnRenderer, user_text
from agent_cli.tui.widgets.activity_line import ActivityLine
from agent_cli.tui.widgets.context_warning import ContextWarning
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.prompt_input import PromptInput
from agent_cli.tui.widgets.status_bar import StatusBar
from agent_cli.tui.widgets.transcript import Transcript
from agent_cli.tui.widgets.user_message import UserMessage
from agent_cli.tui.widgets.welcome import WelcomeHeader, WelcomeInfo, no_model_line, welcome_info

BackendLoader = Callable[[], Awaitable[AgentBackend]]
BUSY_HINT = "working · Esc to interrupt"
PLAN_APPROVED = "The plan is approved: go ahead."


class AgentApp(CommandViews, KeyActions, ShellViews, MentionActions, App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "agent"
    BINDINGS = [
        Binding("escape", "interrupt", "interrupt", show=False, priority=True),
        Binding("ctrl+c", "ctrl_c", "interrupt / quit", show=False, priority=True),
        Binding("ctrl+l", "clear_screen", "clear screen", show=False),
        Binding("shift+tab", "cycle_mode", "permission mode", show=False, priority=True),
        Binding("pageup", "scroll_transcript(-1)", "scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", "scroll down", show=False, priority=True),
    ]
    long_text_lines = 40  # command output longer than this opens in the text viewer

    def __init__(
        self,
        *,
        backend: AgentBackend | None = None,
        backend_loader: BackendLoader | None = None,
        startup_error: str | None = None,
        initial_prompt: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        quit_window: float = 2.0,
        trust_question: TrustQuestion | None = None,
        status: ContextStatus | None = None,
        history_file: HistoryFile | None = None,
    ) -> None:
        super().__init__(driver_class=paste_driver_class())  # big pastes parsed at once
        self._history_file = history_file  # the person's prompts of earlier sessions, and for later ones
        self._first_status = status  # the gauge before a session is open (no key, or loading)
        self.backend = backend
        self._loader = backend_loader
        self._trust_question = trust_question
        self.startup_error = startup_error
        self._initial_prompt = initial_prompt
        self._quit_press = DoublePress(quit_window, clock)
        self._rewind_press = DoublePress(1.0, clock)
        self._clock = clock
        self._last_prompt_key: float | None = None  # when the person last typed in the prompt
        self._finished: TurnFinished | None = None
        self._loading = False
        self._turn: Worker[None] | None = None
        self._pending: list[str] = []
        self._shown: dict[str, str] = {}  # a prompt with a pasted chip -> the text with the chip
        self._interrupting = False
        self.renderer: TurnRenderer | None = None

    # -- layout ------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        yield ContextWarning(id="context-warning")
        yield ActivityLine(id="activity")
        yield PromptInput(id="prompt", history_file=self._history_file)
        yield StatusBar(self._first_status, id="status-bar")

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def activity(self) -> ActivityLine:
        return self.query_one(ActivityLine)

    @property
    def turn_running(self) -> bool:
        return self._turn is not None and self._turn.state in (WorkerState.PENDING, WorkerState.RUNNING)

    async def on_mount(self) -> None:
        self.renderer = TurnRenderer(self.transcript)
        self.prompt.set_commands(merged_commands(None), argument_choices([]))
        self.prompt.focus_input()
        problem = no_model_line(self.startup_error) if self.startup_error else ""
        await self.transcript.add(WelcomeHeader(WelcomeInfo(workspace=str(Path.cwd()), problem=problem)))
        if self.startup_error:
            await self.transcript.add(ErrorMessage(self.startup_error, title="no model available"))
        if self.backend is not None:
            await self._backend_ready(self.backend)
        elif self._loader is not None:
            self._loading = True
            self.status_bar.loading = True
            if self._trust_question is not None:  # the session is built after the answer
                guard = KeyGuard(self._clock, last_key_at=self._last_prompt_key)
                self.push_screen(TrustScreen(self._trust_question, guard), callback=self._trusted)
            else:
                self.call_after_refresh(self._load_backend)
        elif not self.startup_error:
            self.startup_error = "no model provider was configured"
            self._header_problem(no_model_line(self.startup_error))
            await self.transcript.add(ErrorMessage(self.startup_error, title="no model available"))
        if self.backend is None and not self._loading and self._initial_prompt:
            self.prompt.history.add(self._initial_prompt)

    # -- the backend -------------------------------------------------------------------------------
    async def _trusted(self, trusted: bool | None) -> None:
        assert self._trust_question is not None
        line = self._trust_question.answer(bool(trusted))
        if line:
            await self.transcript.add(Notice(line, "info" if trusted else "warning"))
        self._load_backend()

    @work(group="backend", exit_on_error=False)
    async def _load_backend(self) -> None:
        assert self._loader is not None
        try:
            backend = await self._loader()
        except Exception as exc:  # the app stays open and says why
            self._loading = False
            self.status_bar.loading = False
            self.startup_error = str(exc) or type(exc).__name__
            self._header_problem("could not load the model (see below) · `agent --demo` runs offline")
            hint = (
                getattr(exc, "hint", "") or "check the configuration, or run `agent --demo` to try it offline"
            )
            await self.transcript.add(
                ErrorMessage(self.startup_error, hint, title="could not load the model")
            )
            # nothing typed is lost: Up brings it back (a submit always leaves the prompt empty)
            self.prompt.history.extend(p for p in [self._initial_prompt or "", *self._pending] if p)
            self._pending.clear()
            return
        self._loading = False
        self.status_bar.loading = False
        await self._backend_ready(backend)

    async def _backend_ready(self, backend: AgentBackend) -> None:
        self.backend = backend
        self._watch_shells()
        self._watch_notices()  # an MCP server's failure, as soon as it is known
        self._refresh_commands()
        self._refresh_status()
        self._refresh_cost()
        resumed = await self._paint_conversation()
        self._welcome(resumed)
        # What exists now (the SDK's models, a resumed session's widgets) lives as long as the app:
        # keep it out of the collector's full passes, which otherwise stall streaming for ~0.3 s.
        self.call_after_refresh(gc.freeze)
        # e.g. a malformed agent definition, settings or command file
        for warning in getattr(backend, "warnings", ()):
            await self.transcript.add(Notice(warning, "warning"))
        initial, self._initial_prompt = self._initial_prompt, None
        if initial:  # as if typed: `agent --resume` passes "/resume", which opens the picker
            await self.handle_input(initial)
        await self._run_next_pending()

    @property
    def reader(self) -> BackendReader | None:
        return None if self.backend is None else BackendReader(self.backend, self._backend_error)

    def _backend_error(self, text: str) -> None:
        self.notify(text, title="backend error", severity="error")

    def _refresh_commands(self) -> None:
        if (reader := self.reader) is not None:
            self.prompt.set_commands(*reader.commands())

    def _refresh_status(self) -> None:
        if (reader := self.reader) is None:
            return
        self.status_bar.model = reader.model
        self.status_bar.permission_mode = reader.permission_mode
        if (status := reader.status()) is not None:
            self._set_context(status)
        for header in self.query(WelcomeHeader):  # it says what holds now (/model, Shift+Tab)
            if header.info.model:
                header.follow(reader.model, status.budget if status else 0, reader.permission_mode)

    def _header_problem(self, problem: str) -> None:
        for header in self.query(WelcomeHeader):
            header.set_info(replace(header.info, problem=problem))

    def _refresh_cost(self) -> None:
        if (reader := self.reader) is not None and (cost := reader.cost()) is not None:
            self.status_bar.set_usage(*cost)

    def _set_context(self, status: ContextStatus) -> None:
        self.status_bar.set_context(status)
        self.query_one(ContextWarning).set_status(status)

    async def _paint_conversation(self) -> bool:
        """Paint the session's conversation so far; True when there was one (a resumed session)."""
        reader = self.reader
        assert reader is not None and self.renderer is not None
        messages = reader.conversation()
        if messages:
            await self.renderer.paint_conversation(messages)
            self.prompt.history.extend(t for m in messages if m.role == "user" and (t := user_text(m)))
        return bool(messages)

    def _welcome(self, resumed: bool) -> None:
        """Fill the welcome header in with what the backend knows."""
        if (reader := self.reader) is not None and (headers := self.query(WelcomeHeader)):
            workspace = getattr(self.backend, "workspace", "") or Path.cwd()
            headers.first().set_info(welcome_info(reader, str(workspace), resumed))

    # -- prompts and commands ----------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        message.stop()
        if message.display != message.text:  # a pasted chip: the transcript shows the chip
            self._shown[message.text] = message.display
        self.transcript.anchor()  # what was just sent, and its answer, are what the person looks at
        await self.handle_input(message.text)

    async def handle_input(self, text: str) -> None:
        stripped = text.strip()
        if stripped.startswith("/"):
            name, arg = command_name(stripped)
            if name in ("quit", "exit"):
                self.exit()
                return
            if name == "context":
                await self._show_context()
                return
            if name == "shells":
                await self._show_shells()
                return
            if name == "resume" and not arg:
                await self._pick_session()
                return
            if name == "help" and self.backend is None:
                note = f"**No model is available:** {self.startup_error}" if self.startup_error else ""
                await self._show_text("help", local_help(merged_commands(None), note))
                return
        await self.run_prompt(text)

    async def run_prompt(self, text: str, echo: bool = True) -> None:
        """Run what the person sent (`echo`: shown in the transcript; a key's own command is not)."""
        if self.backend is None:
            if self._loading:
                self._pending.append(text)
                await self.transcript.add(Notice("the model provider is loading; this runs when it is ready"))
                return
            self.prompt.history.add(text)  # nothing typed is lost: Up brings it back
            hint = "only /help and /quit work until a model is available · Up brings your prompt back"
            await self.transcript.add(ErrorMessage(self.startup_error or "no model available", hint))
            return
        if self.turn_running:
            self._pending.append(text)
            await self.transcript.add(Notice("queued: runs after the current turn (Esc interrupts it)"))
            return
        shown = self._shown.pop(text, text)
        if echo:
            await self.transcript.add(UserMessage(shown))
        self._turn = self._run_turn(text)

    async def _after_turn(self) -> None:
        """Queued messages run first; else a finished plan-mode turn offers its plan for approval."""
        finished, backend = self._finished, self.backend
        if self._pending or backend is None or finished is None or backend.permission_mode != "plan":
            await self._run_next_pending()
            return
        if finished.stop_reason != "end_turn" or not finished.result.strip():
            return
        back_to = getattr(backend, "mode_before_plan", "ask") or "ask"

        def answered(approved: bool | None) -> None:
            if approved:
                self._set_mode(back_to)
                self.call_later(self.run_prompt, PLAN_APPROVED)
            else:
                self.prompt.focus_input()

        guard = KeyGuard(self._clock, last_key_at=self._last_prompt_key)
        self.push_screen(PlanScreen(finished.result, back_to, guard), callback=answered)

    async def _run_next_pending(self) -> None:
        if self._pending and not self.turn_running and self.backend is not None:
            await self.run_prompt(self._pending.pop(0))

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, text: str) -> None:
        backend, renderer = self.backend, self.renderer
        assert backend is not None and renderer is not None
        self._interrupting = False
        self._finished = None
        self.activity.show(BUSY_HINT, busy=True)
        await renderer.begin_turn()
        finished = False
        try:
            async for event in backend.submit(text):
                await self._dispatch(event)
                finished = finished or isinstance(event, TurnFinished)
        except Exception as exc:
            await renderer.finish_streams()
            hint = getattr(exc, "hint", "") or "the conversation is saved; try again, or /resume later"
            await renderer.add(ErrorMessage(f"{type(exc).__name__}: {exc}", hint, kind="internal"))
            finished = True
        finally:
            if not finished:  # cancelled (a second interrupt) or the stream just ended
                await renderer.end_turn(None if self._interrupting else TurnFinished(stop_reason="end_turn"))
            self.activity.show("")
            self._refresh_status()
            self.call_later(self._after_turn)

    async def _dispatch(self, event: Event) -> None:
        assert self.renderer is not None
        if isinstance(event, PermissionRequest):
            renderer = self.renderer
            await renderer.permission_pending(event)
            guard = KeyGuard(self._clock, last_key_at=self._last_prompt_key)
            ask_permission(self, event, lambda decision: renderer.permission_answered(event, decision), guard)
        elif isinstance(event, UsageUpdate):
            self.status_bar.set_usage(event.cost_usd, event.cache_hit_rate)
        elif isinstance(event, ContextUpdate):
            self._set_context(event.status)
        elif isinstance(event, CommandResult):
            await self._command_result(event)
        else:
            if isinstance(event, TurnFinished):
                self._finished = event
            elif isinstance(event, Retrying):  # said where the spinner is, until an answer comes
                self.activity.retrying(event.reason, event.attempt)
            elif self.activity.retry_shown and isinstance(event, TextDelta | ThinkingDelta | ToolStarted):
                self.activity.show(BUSY_HINT, busy=True)
            await self.renderer.handle(event)

    @on(events.Click)
    @on(Collapsible.Toggled)
    def _refocus_prompt(self) -> None:
        """A click in the transcript (expanding a tool call, say) leaves typing in the prompt."""
        if len(self.screen_stack) == 1:
            self.call_after_refresh(self.prompt.focus_input)


def create_app(
    *,
    backend: AgentBackend | None = None,
    backend_loader: BackendLoader | None = None,
    startup_error: str | None = None,
    initial_prompt: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    trust_question: TrustQuestion | None = None,
    status: ContextStatus | None = None,
    history_file: HistoryFile | None = None,
) -> AgentApp:
    """The TUI. Give a ready `backend`, or a `backend_loader` the app awaits after its first paint;
    `startup_error` (e.g. no API key) is shown prominently and the prompt still takes /help and /quit;
    a `trust_question` is asked before the loader runs; `status` is the gauge until a session is open."""
    return AgentApp(
        backend=backend,
        backend_loader=backend_loader,
        startup_error=startup_error,
        initial_prompt=initial_prompt,
        clock=clock,
        trust_question=trust_question,
        status=status,
        history_file=history_file,
    )
