"""The composition root: config -> provider, tools, engine, loop -> TUI or headless.

Imports are lazy: `--version` and `--help` load neither textual nor the anthropic SDK.
"""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_cli.agent.config import Config
    from agent_cli.agent.runner import AgentSession
    from agent_cli.llm.base import Provider

NO_KEY = (
    "No API key found. Set one with\n\n"
    "    export ANTHROPIC_API_KEY=sk-ant-...\n\n"
    "(or point ANTHROPIC_BASE_URL at an Anthropic-compatible server), then run `agent` again.\n"
    "To try agent without a key, run `agent --demo` (a scripted model, offline)."
)
PICK = "@pick"
STOP_GRACE_SECONDS = 5.0  # after SIGTERM/SIGHUP, how long the TUI may take to close the terminal


def main(argv: list[str] | None = None) -> None:
    as_program = argv is None  # not called from Python: the process may end right after the answer
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["-V"]):
        from agent_cli import __version__

        print(f"agent {__version__}")
        return
    headless = _headless_run(argv)
    if headless and _may_use_sdk(argv):
        _warm_sdk()  # ~1.5 s of imports: start them before anything else (typer, config, engine)
    app = _typer_app()
    try:
        app(args=_normalize(argv), prog_name="agent")
    except SystemExit as done:
        if headless and as_program:
            _exit_now(done.code)
        raise


def _headless_run(argv: list[str]) -> bool:
    return any(a in ("-p", "--print") or a.startswith("--print=") for a in argv) and "--" not in argv


def _may_use_sdk(argv: list[str]) -> bool:
    """False when the flags already say the run will not talk through the anthropic SDK."""
    if "--demo" in argv or "--script" in argv or any(a.startswith("--script=") for a in argv):
        return False
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--provider" and i + 1 < len(argv) else None
        if arg.startswith("--provider="):
            value = arg.split("=", 1)[1]
        if value is not None and value != "anthropic":
            return False
    return True


def _exit_now(code: object) -> None:
    """End a headless run the moment its answer is out. By now the session is closed: every log
    event was fsynced as it was written and the log is closed, MCP servers are stopped, background
    work was awaited, and stdout/stderr are flushed below. What is skipped is the interpreter's
    teardown — collecting the SDK's thousands of pydantic classes, finalizing modules, joining the
    import thread — which kept the process alive ~0.5 s after the answer (bench/startup.py)."""
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int) and code is not None:
        print(code, file=sys.stderr)  # SystemExit("message") prints it; so do we
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(status)


def _normalize(argv: list[str]) -> list[str]:
    """`--resume` with no id means: pick one (typer options cannot take an optional value)."""
    out = []
    for index, arg in enumerate(argv):
        out.append(arg)
        if arg in ("--resume", "-r"):
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-"):
                out.append(PICK)
    return out


def _typer_app():
    import typer

    app = typer.Typer(
        add_completion=False,
        invoke_without_command=True,
        no_args_is_help=False,
        help="agent — a terminal coding agent with a context engine.",
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def run(
        ctx: typer.Context,
        prompt: str | None = typer.Option(
            None,
            "-p",
            "--print",
            metavar="TASK",
            help="Run this task headless and print the answer ('-' reads stdin).",
        ),
        output_format: str = typer.Option(
            "text", "--output-format", metavar="FORMAT", help="text | json | stream-json (with -p)."
        ),
        resume: str | None = typer.Option(
            None, "--resume", "-r", metavar="[ID]", help="Resume a session by id (or pick one)."
        ),
        continue_: bool = typer.Option(
            False, "--continue", "-c", metavar="", help="Continue the latest session here."
        ),
        fork_session: bool = typer.Option(
            False,
            "--fork-session",
            metavar="",
            help="With --continue/--resume: go on in a copy (a new session).",
        ),
        model: str | None = typer.Option(None, "--model", "-m", metavar="NAME", help="Model name."),
        provider: str | None = typer.Option(
            None, "--provider", metavar="NAME", help="anthropic | scripted | openai."
        ),
        permission_mode: str | None = typer.Option(
            None, "--permission-mode", metavar="MODE", help="ask | auto-edit | plan | yolo."
        ),
        budget_tokens: int | None = typer.Option(
            None, "--budget-tokens", metavar="N", help="Context budget in tokens."
        ),
        max_turns: int | None = typer.Option(
            None, "--max-turns", metavar="N", help="Model calls per prompt."
        ),
        script: str | None = typer.Option(
            None, "--script", metavar="FILE", help="Script for the scripted provider."
        ),
        demo: bool = typer.Option(
            False, "--demo", metavar="", help="A scripted model, offline, no key needed."
        ),
        debug: bool = typer.Option(
            False, "--debug", metavar="", help="Check context invariants after every change."
        ),
        allowed_tools: list[str] = typer.Option(
            [],
            "--allowed-tools",
            "--allowedTools",
            metavar="RULES",
            help='Rules to allow, e.g. "Bash(git diff:*) Edit".',
        ),
        disallowed_tools: list[str] = typer.Option(
            [],
            "--disallowed-tools",
            "--disallowedTools",
            metavar="RULES",
            help='Rules to deny, e.g. "Bash(rm:*)".',
        ),
        trust_workspace: bool = typer.Option(
            False, "--trust-workspace", metavar="", help="Use this workspace's .mcp.json, hooks and settings."
        ),
        version: bool = typer.Option(False, "--version", "-V", metavar="", help="Print the version."),
    ) -> None:
        if version:
            from agent_cli import __version__

            typer.echo(f"agent {__version__}")
            raise typer.Exit()
        if ctx.invoked_subcommand is not None:
            return
        if output_format not in ("text", "json", "stream-json"):
            raise typer.BadParameter("use text, json or stream-json", param_hint="--output-format")
        overrides: dict[str, Any] = {
            "model": model,
            "provider": "scripted" if demo or script else provider,
            "permission_mode": permission_mode,
            "max_turns": max_turns,
            "script": script,
            "debug": debug or None,
            "context.budget_tokens": budget_tokens,
            "trust_workspace": trust_workspace or None,
        }
        config = _with_flag_rules(_config(overrides), allowed_tools, disallowed_tools)
        workspace = Path.cwd()
        resume_id = _resume_id(config, workspace, resume, continue_)
        if prompt is not None and resume == PICK:
            _fail("--resume needs a session id with -p (see `agent sessions`), or use --continue")
        if fork_session and not resume_id:
            _fail("--fork-session needs --continue or --resume ID (the session to copy)")
        start = Start(resume_id, fork_session)
        if prompt is not None:
            code = _headless(config, workspace, prompt, output_format, start, demo)
            raise typer.Exit(code)
        _tui(config, workspace, start, demo, pick=resume == PICK)

    @app.command()
    def sessions() -> None:
        """List the sessions of this workspace: id, start time, turns, first prompt."""
        from agent_cli.agent.session import SessionStore

        config = _config({})
        store = SessionStore(config.sessions_root(Path.cwd()))
        _print_sessions(store, list(store.list()))

    mcp_app = typer.Typer(
        help="MCP servers from .mcp.json and config.toml (mcp_servers tables).", no_args_is_help=True
    )
    app.add_typer(mcp_app, name="mcp")

    @mcp_app.command("list")
    def mcp_list(
        ctx: typer.Context,
        trust_workspace: bool = typer.Option(
            False, "--trust-workspace", metavar="", help="Use this workspace's .mcp.json and config servers."
        ),
    ) -> None:
        """Start each MCP server, show its state, tool count and the tokens its schemas cost, stop it."""
        trusted = trust_workspace or bool(ctx.find_root().params.get("trust_workspace"))
        _mcp_list(_config({"trust_workspace": trusted or None}), Path.cwd())

    @app.command()
    def replay(
        file: Path = typer.Argument(
            ..., exists=True, dir_okay=False, help="Claude Code JSONL or our events.jsonl."
        ),
        policy: str = typer.Option(
            "default", "--policy", help="default | default+subtask | none | claude-code | masking."
        ),
        budget_tokens: int | None = typer.Option(
            None, "--budget-tokens", metavar="N", help="Context budget in tokens."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
        dump_requests: Path | None = typer.Option(
            None, "--dump-requests", help="Write each simulated request to this file, one JSON per line."
        ),
    ) -> None:
        """Drive the context engine over a recorded session and report tokens, cache and cost."""
        import json

        from agent_cli.replay.driver import ReplayError
        from agent_cli.replay.driver import replay as run_replay

        try:
            result = run_replay(file, policy=policy, budget_tokens=budget_tokens, dump_requests=dump_requests)
        except ReplayError as exc:
            _fail(f"replay: {exc}" + (f"\n  {exc.hint}" if exc.hint else ""))
            return
        if as_json:
            typer.echo(json.dumps(result.to_json(), indent=2))
        else:
            from rich.console import Console

            from agent_cli.replay.report import render_table

            render_table(result, Console())

    return app


def _mcp_list(config: "Config", workspace: Path) -> None:
    import asyncio

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from agent_cli.agent.mcp.runtime import probe, runtime_for, server_rows
    from agent_cli.context.tokens import TokenCounter

    trust = trust_decision(config, workspace)
    if trust.ignored:
        print(f"agent: {trust.notice(workspace)}", file=sys.stderr)
    runtime = runtime_for(config, workspace, trusted=trust.trusted, interactive=False, report=None)
    for problem in runtime.problems if runtime else ():
        print(f"agent: {problem}", file=sys.stderr)
    console = Console()
    if runtime is None or not runtime.servers:
        console.print("No MCP servers configured (.mcp.json, or [mcp_servers] in config.toml).", markup=False)
        return
    rows = server_rows(asyncio.run(probe(runtime)), TokenCounter(config.model))
    table = Table("server", "state", "tools", "schema tokens", "from")
    for name, origin, state, count, tokens in rows:
        table.add_row(escape(name), escape(state), str(count), f"{tokens:,}", escape(origin))
    console.print(table)
    total = sum(row[4] for row in rows)
    console.print(
        f"MCP schemas together: {total:,} tokens (above 10% of the context budget they load on demand)"
    )


def _report(text: str, level: str) -> None:
    """MCP problems, headless: one line each on stderr, as they happen."""
    print(f"agent: {text}", file=sys.stderr)


async def _run_headless(session: "AgentSession", prompt: str, fmt: str) -> int:
    from agent_cli.agent.headless import run_headless

    try:
        return await run_headless(session, prompt, fmt)  # type: ignore[arg-type]
    finally:
        await session.aclose()  # stops MCP servers on the loop they run on


class Start(NamedTuple):
    """Which session a run opens: a new one, `resume_id`, or a copy of it (`fork`)."""

    resume_id: str | None = None
    fork: bool = False


def _print_sessions(store: Any, infos: list[Any]) -> None:
    """A table on a terminal; plain tab-separated lines with full ids when piped. The person's words
    are shown as they are: never parsed as markup."""
    if not infos:
        print(f"No sessions in {store.root}")
        return
    if not sys.stdout.isatty():
        for info in infos:
            prompt = " ".join(info.first_prompt.split())[:200]
            print(f"{info.id}\t{info.started_at}\t{info.turns}\t{prompt}")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table("id", "started (UTC)", "turns", "first prompt")
    for info in infos:
        prompt = " ".join(info.first_prompt.split())[:70]
        table.add_row(Text(info.id, no_wrap=True), info.started_at, str(info.turns), Text(prompt))
    Console().print(table)


def _warm_sdk() -> None:
    import threading

    def load() -> None:
        try:
            import anthropic  # noqa: F401
        except Exception:  # noqa: BLE001 - the real import reports it
            pass

    threading.Thread(target=load, daemon=True, name="warm-anthropic").start()


def _config(overrides: dict[str, Any]) -> "Config":
    from agent_cli.agent.config import load_config
    from agent_cli.core.errors import ConfigError

    try:
        return load_config(Path.cwd(), overrides)
    except ConfigError as exc:
        _fail(f"configuration error: {exc}")
        raise


def _with_flag_rules(config: "Config", allowed: list[str], disallowed: list[str]) -> "Config":
    """--allowed-tools / --disallowed-tools (each repeatable, comma or space separated)."""
    if not allowed and not disallowed:
        return config
    from dataclasses import replace

    from agent_cli.agent.config import PermissionRules
    from agent_cli.tools.rules import split_rule_list

    allow = tuple(rule for text in allowed for rule in split_rule_list(text))
    deny = tuple(rule for text in disallowed for rule in split_rule_list(text))
    return replace(config, flag_permissions=PermissionRules(allow=allow, deny=deny))


def _fail(message: str, code: int = 2) -> None:
    print(f"agent: {message}", file=sys.stderr)
    raise SystemExit(code)


def _resume_id(config: "Config", workspace: Path, resume: str | None, continue_: bool) -> str | None:
    from agent_cli.agent.session import SessionStore
    from agent_cli.core.errors import SessionError

    store = SessionStore(config.sessions_root(workspace))
    if continue_:
        latest = store.latest()
        if latest is None:
            _fail(f"--continue: no earlier session in {store.root}")
        return latest
    if resume and resume != PICK:
        try:
            return store.resolve(resume)
        except SessionError as exc:
            _fail(str(exc))
    return None


def make_provider(config: "Config", demo: bool) -> "Provider":
    """The provider the config names. Raises ConfigError when it cannot be built."""
    if config.provider == "scripted":
        from agent_cli.llm.scripted import Script, ScriptedProvider, demo_provider

        if config.script:
            return ScriptedProvider(Script.load(Path(config.script)), model=config.model)
        return demo_provider()
    if config.provider == "openai":
        from agent_cli.llm.models import registry
        from agent_cli.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(config.openai, registry=registry(config.models))
    from agent_cli.llm.anthropic import AnthropicProvider

    return AnthropicProvider(base_url=config.base_url or None)


def _has_key(config: "Config") -> bool:
    if config.provider != "anthropic":
        return True
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def trust_decision(config: "Config", workspace: Path):
    """Whether the workspace's code-running files (.mcp.json, hooks, settings) may be used."""
    from agent_cli.agent.trust import TrustStore, decide_trust

    ext = config.workspace_extensions
    return decide_trust(
        workspace,
        flag=config.trust_workspace,
        store=TrustStore.default(),
        has_workspace_extensions=bool(ext.mcp_servers or ext.hooks),
    )


def _session(
    config: "Config",
    workspace: Path,
    start: Start,
    interactive: bool,
    demo: bool,
    trusted: bool | None = None,
) -> "AgentSession":
    from agent_cli.agent.runner import AgentSession, SessionSetup

    if demo and config.model == "claude-sonnet-5-5":
        from dataclasses import replace

        config = replace(config, model="scripted")
    provider = make_provider(config, demo)
    prepare = getattr(provider, "prepare", None)
    if interactive and callable(prepare):
        prepare()  # import the SDK here, off the UI's event loop (the TUI calls this in a thread)
    trust = trust_decision(config, workspace)
    if not interactive and trust.ignored:
        print(f"agent: {trust.notice(workspace)}", file=sys.stderr)
    trusted = trust.trusted if trusted is None else trusted
    from agent_cli.agent.mcp.runtime import runtime_for

    report = None if interactive else _report
    mcp = runtime_for(config, workspace, trusted=trusted, interactive=interactive, report=report)
    setup = SessionSetup(workspace, start.resume_id, interactive, trusted, fork=start.fork)
    return AgentSession(config, provider, setup, mcp=mcp)


def _headless(config: "Config", workspace: Path, prompt: str, fmt: str, start: Start, demo: bool) -> int:
    import asyncio

    from agent_cli.core.errors import AgentError

    if not _has_key(config):
        _fail(NO_KEY.replace("run `agent` again", "run `agent -p` again"))
    if prompt == "-":
        prompt = sys.stdin.read()
    try:
        session = _session(config, workspace, start, interactive=False, demo=demo)
    except AgentError as exc:
        _fail(str(exc))
        raise
    try:
        return asyncio.run(_run_headless(session, prompt, fmt))
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        return 130
    finally:
        session.close()


def _check_openable(config: "Config", workspace: Path, start: Start) -> None:
    """Before the TUI paints: a session another process has open, or sessions that cannot be
    written here, end the run with one line (as `agent -p` does), not a screen with an error."""
    from agent_cli.agent.lock import SessionLocked, holder
    from agent_cli.agent.session import SessionStore
    from agent_cli.core.errors import AgentError

    store = SessionStore(config.sessions_root(workspace))
    try:
        store.check_writable()
        if start.resume_id and not start.fork:
            pid = holder(store.path(start.resume_id))
            if pid is not None:
                raise SessionLocked(start.resume_id, pid if pid > 0 else None)
    except AgentError as exc:
        _fail(str(exc))


def _tui(config: "Config", workspace: Path, start: Start, demo: bool, pick: bool = False) -> None:
    from agent_cli.agent.signals import SignalStop, exit_code

    if _has_key(config):
        _check_openable(config, workspace, start)

    def stopped(signum: int) -> None:
        app.exit(return_code=exit_code(signum))
        # Textual's driver can deadlock closing a terminal that hung up (its writer queue waits
        # forever; seen after tmux kill-session). The log is fsynced per event and the session lock
        # dies with the process, so if the app has not ended within a few seconds, leave anyway.
        import threading

        watchdog = threading.Timer(STOP_GRACE_SECONDS, os._exit, args=(exit_code(signum),))
        watchdog.daemon = True
        watchdog.start()

    def on_session(session: "AgentSession") -> None:
        # SIGTERM/SIGHUP: end the running tool, log the interruption, then leave with 143/129
        SignalStop(session, stopped).install()

    app = tui_app(config, workspace, start, demo, pick, on_session=on_session)
    app.run()
    close = getattr(app.backend, "close", None)
    if callable(close):
        close("prompt_input_exit")  # SessionEnd hooks run, the log is closed
    if app.return_code:
        raise SystemExit(app.return_code)


def tui_app(
    config: "Config",
    workspace: Path,
    start: Start,
    demo: bool,
    pick: bool = False,
    on_session: "Callable[[AgentSession], None] | None" = None,
    **app_args: Any,
):
    """The TUI for this workspace: it asks about trust first (when it must), then builds the session."""
    from agent_cli.tui.app import create_app

    startup_error = None if _has_key(config) else NO_KEY
    trust = trust_decision(config, workspace)
    trusted = trust.trusted

    def answer(yes: bool) -> str:
        """The person's answer to the trust question: remembered on yes."""
        nonlocal trusted
        trusted = yes
        if not yes:
            names = ", ".join(str(p.relative_to(workspace)) for p in trust.ignored)
            return f"not trusted: ignoring {names} (asked again next time; --trust-workspace uses them once)"
        from agent_cli.agent.trust import TrustStore

        try:
            TrustStore.default().trust(workspace)
        except OSError as exc:
            return f"trusted for this session only: could not remember it ({exc})"
        return f"trusted {workspace}: its hooks, MCP servers and settings are used"

    async def loader():
        import asyncio

        session = await asyncio.to_thread(_session, config, workspace, start, True, demo, trusted)
        if session.mcp is not None:
            session.mcp.start()  # on the app's loop: servers connect while the person types
        if on_session is not None:
            on_session(session)
        return session

    question = None
    if trust.ignored and not startup_error:
        from agent_cli.tui.screens.trust_screen import TrustQuestion

        question = TrustQuestion(workspace, trust.ignored, answer)
    app = create_app(
        backend_loader=None if startup_error else loader,
        startup_error=startup_error,
        initial_prompt="/resume" if pick else None,
        trust_question=question,
        **app_args,  # tests: clock
    )
    return app


if __name__ == "__main__":
    main()
