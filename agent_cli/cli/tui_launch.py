"""The TUI's launch: refuse a session another process holds before painting, ask about trust
first when the workspace brings hooks or MCP servers, build the session off the UI's loop, and end
the process on SIGTERM/SIGHUP even if the terminal is gone."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from agent_cli.cli.launch import fail

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_cli.agent.runner import AgentSession
    from agent_cli.api import Options, Prepared

STOP_GRACE_SECONDS = 5.0  # after SIGTERM/SIGHUP, how long the TUI may take to close the terminal


def check_openable(prepared: Prepared) -> None:
    """Before the TUI paints: a session another process has open, or sessions that cannot be
    written here, end the run with one line (as `agent -p` does), not a screen with an error."""
    from agent_cli.api.compose import session_store
    from agent_cli.core.errors import AgentError
    from agent_cli.session.lock import SessionLocked, holder

    store = session_store(prepared.config, prepared.workspace)
    try:
        store.check_writable()
        if prepared.resume_id and not prepared.fork:
            pid = holder(store.path(prepared.resume_id))
            if pid is not None:
                raise SessionLocked(prepared.resume_id, pid if pid > 0 else None)
    except AgentError as exc:
        fail(str(exc))


def run_tui(options: Options, *, pick: bool = False, initial_prompt: str | None = None) -> None:
    """The TUI on the session `options` describe; `initial_prompt` is submitted once it is open
    (`agent "fix the test"`), `pick` opens the resume picker instead."""
    from agent_cli.api.options import has_key, prepare
    from agent_cli.core.errors import AgentError
    from agent_cli.session.signals import SignalStop, exit_code

    try:
        prepared = prepare(options)
    except AgentError as exc:
        fail(str(exc))
        raise
    if has_key(prepared.config):
        check_openable(prepared)
    if not is_terminal():  # a script without -p: the full-screen UI would wait for keys for ever
        fail('the interactive UI needs a terminal; use -p for scripts (agent -p "PROMPT")')

    def stopped(signum: int) -> None:
        app.exit(return_code=exit_code(signum))
        # Textual's driver can deadlock closing a terminal that hung up (its writer queue waits
        # forever; seen after tmux kill-session). The log is fsynced per event and the session lock
        # dies with the process, so if the app has not ended within a few seconds, leave anyway.
        import threading

        watchdog = threading.Timer(STOP_GRACE_SECONDS, os._exit, args=(exit_code(signum),))
        watchdog.daemon = True
        watchdog.start()

    def on_session(session: AgentSession) -> None:
        # SIGTERM/SIGHUP: end the running tool, log the interruption, then leave with 143/129
        SignalStop(session, stopped).install()

    app = tui_app(prepared, pick=pick, initial_prompt=initial_prompt, on_session=on_session)
    app.run()
    close = getattr(app.backend, "close", None)
    if callable(close):
        close("prompt_input_exit")  # SessionEnd hooks run, the log is closed
    if line := way_back(app.backend):
        print(line)
    if app.return_code:
        raise SystemExit(app.return_code)


def is_terminal() -> bool:
    """Whether stdin and stdout are both a terminal, as the full-screen UI needs."""
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # closed, or not a real file
        return False


def way_back(backend: object) -> str:
    """What to type to go on in the session just left (nothing when no prompt made it exist)."""
    session_id = getattr(backend, "session_id", "")
    log = getattr(backend, "log", None)
    if not session_id or not getattr(log, "started", False):
        return ""
    return f"To go on in this session: agent --resume {session_id}"


def tui_app(
    prepared: Prepared,
    *,
    pick: bool = False,
    initial_prompt: str | None = None,
    on_session: Callable[[AgentSession], None] | None = None,
    **app_args: Any,
):
    """The TUI for this workspace: it asks about trust first (when it must), then opens its session
    through the Python API (api.Session, interactive: the TUI answers permission questions)."""
    from agent_cli.api import Session
    from agent_cli.api.compose import starting_status, trust_decision
    from agent_cli.api.options import NO_KEY, has_key
    from agent_cli.core.surrogates import scrub
    from agent_cli.tui.app import create_app
    from agent_cli.tui.history_file import HistoryFile, history_path

    startup_error = None if has_key(prepared.config) else NO_KEY
    workspace = prepared.workspace
    trust = trust_decision(prepared.config, workspace)
    trusted = trust.trusted

    def answer(yes: bool) -> str:
        """The person's answer to the trust question: remembered on yes."""
        nonlocal trusted
        trusted = yes
        if not yes:
            return (
                f"not trusted: not using {trust.not_used(workspace)} (asked again next time; "
                "--trust-workspace uses them once)"
            )
        from agent_cli.settings.trust import TrustStore

        try:
            TrustStore.default().trust(workspace)
        except OSError as exc:
            return f"trusted for this session only: could not remember it ({exc})"
        return f"trusted {workspace}: its hooks, MCP servers and settings are used"

    async def loader():
        import gc

        session = Session(prepared=prepared, interactive=True)
        gc.disable()  # as for `agent -p` (main._warm_sdk): the SDK's import makes no garbage
        try:
            await session.open(trusted=trusted)  # built off the UI's loop; MCP servers start on it
        finally:
            gc.enable()  # the app freezes what exists once the session is painted
        from agent_cli.agent.side_requests import measure_prefix

        backend = session.backend  # the gauge's first number, as billed
        await measure_prefix(backend.provider, backend.engine)
        if on_session is not None:
            on_session(session.backend)
        return session.backend

    question = None
    if trust.ignored and not startup_error:
        from agent_cli.tui.screens.trust_screen import TrustQuestion

        question = TrustQuestion(
            workspace,
            trust.ignored,
            answer,
            uses={
                f.path: f.uses + (f" (its {f.applies} apply either way)" if f.applies else "")
                for f in trust.files
            },
            broken=tuple(f"{f.path.relative_to(workspace)} ({f.problem})" for f in trust.broken),
        )
    app = create_app(
        backend_loader=None if startup_error else loader,
        startup_error=startup_error,
        initial_prompt="/resume" if pick else initial_prompt and scrub(initial_prompt),  # not UTF-8: U+FFFD
        trust_question=question,
        status=starting_status(prepared.config),  # the gauge with no key, or while the session loads
        history_file=HistoryFile(history_path()),  # Up brings back prompts of earlier sessions
        **app_args,  # tests: clock
    )
    return app
