"""The command line: flags, the config they override, and the subcommands (`sessions`, `doctor`,
`mcp list`, `replay`). The work itself is in launch.py, tui_launch.py and doctor.py."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.cli.argv import PICK, normalize  # noqa: F401 - the CLI's argv, re-exported
from agent_cli.cli.launch import fail, headless
from agent_cli.cli.tui_launch import run_tui

if TYPE_CHECKING:
    from agent_cli.settings.config import Config


def typer_app():
    import typer

    app = typer.Typer(
        add_completion=False,
        invoke_without_command=True,
        no_args_is_help=False,
        help=(
            "agent — a terminal coding agent with a context engine.\n\n"
            '`agent "PROMPT"` opens the TUI with that prompt sent; `agent -p "PROMPT"` runs it headless '
            "(what is piped in comes first)."
        ),
        options_metavar="[OPTIONS] [PROMPT]",
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def run(
        ctx: typer.Context,
        print_: bool = typer.Option(
            False,
            "-p",
            "--print",
            metavar="",
            help="Run headless: print the answer and exit. The prompt is the arguments, after what is piped in.",
        ),
        prompt: str | None = typer.Option(None, "--prompt", hidden=True),  # the words (normalize)
        output_format: str | None = typer.Option(
            None, "--output-format", metavar="FORMAT", help="text | json | stream-json (with -p)."
        ),
        input_format: str | None = typer.Option(
            None,
            "--input-format",
            metavar="FORMAT",
            help="text | stream-json: user messages on stdin (with -p).",
        ),
        verbose: bool = typer.Option(
            False,
            "--verbose",
            metavar="",
            help="Accepted as claude -p takes it; stream-json carries every message.",
        ),
        resume: str | None = typer.Option(
            None, "--resume", "-r", metavar="[ID]", help="Resume a session by id (or pick one)."
        ),
        continue_: bool = typer.Option(
            False, "--continue", "-c", metavar="", help="Continue the session used last here."
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
            None,
            "--permission-mode",
            metavar="MODE",
            help="ask | auto-edit | plan | yolo (or Claude Code's default | acceptEdits | bypassPermissions).",
        ),
        skip_permissions: bool = typer.Option(
            False, "--dangerously-skip-permissions", metavar="", help="The same as --permission-mode yolo."
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
        system_prompt: str | None = typer.Option(
            None, "--system-prompt", metavar="TEXT", help="The system prompt, in place of the built-in one."
        ),
        append_system_prompt: str | None = typer.Option(
            None, "--append-system-prompt", metavar="TEXT", help="Text added after the system prompt."
        ),
        mcp_config: list[str] = typer.Option(
            [],
            "--mcp-config",
            metavar="FILES",
            help="MCP servers of yours, from .mcp.json-shaped files or JSON.",
        ),
        settings: str | None = typer.Option(
            None, "--settings", metavar="FILE", help="A Claude Code settings file of yours (hooks, rules)."
        ),
        version: bool = typer.Option(False, "--version", "-V", metavar="", help="Print the version."),
    ) -> None:
        if version:
            from agent_cli import __version__

            typer.echo(f"agent {__version__}")
            raise typer.Exit()
        if ctx.invoked_subcommand is not None:
            return
        if output_format not in (None, "text", "json", "stream-json"):
            raise typer.BadParameter("use text, json or stream-json", param_hint="--output-format")
        if input_format not in (None, "text", "stream-json"):
            raise typer.BadParameter("use text or stream-json", param_hint="--input-format")
        if not print_:  # `agent hi --output-format json` from a script that forgot -p: not the TUI
            for flag, value in (("--output-format", output_format), ("--input-format", input_format)):
                if value is not None:
                    fail(f'{flag} needs -p (a headless run): agent -p {flag} {value} "PROMPT"')
        from agent_cli.api.options import Options

        options = Options(
            cwd=Path.cwd(),
            model=model,
            provider=provider,
            permission_mode="yolo" if skip_permissions else permission_mode,
            allowed_tools=tuple(allowed_tools),
            disallowed_tools=tuple(disallowed_tools),
            max_turns=max_turns,
            budget_tokens=budget_tokens,
            resume=None if resume == PICK else resume,
            continue_session=continue_,
            fork_session=fork_session,
            trust_workspace=trust_workspace,
            script=script,
            demo=demo,
            debug=debug,
            system_prompt=system_prompt,
            append_system_prompt=append_system_prompt,
            mcp_config=tuple(mcp_config),
            settings=settings,
        )
        words = [prompt] if prompt else []
        if print_:
            fmt, source = output_format or "text", input_format or "text"
            raise typer.Exit(headless(options, words, fmt, source, pick=resume == PICK))
        if fork_session and not (resume or continue_):
            fail("--fork-session needs --continue or --resume ID (the session to copy)")
        if resume == PICK and prompt:
            fail("--resume without an id opens the picker; give the prompt once the session is open")
        run_tui(options, pick=resume == PICK, initial_prompt=prompt)

    @app.command()
    def sessions() -> None:
        """List the sessions of this workspace: id, start time, turns, first prompt."""
        from agent_cli.api.compose import session_store

        store = session_store(_config({}), Path.cwd())
        print_sessions(store, list(store.list()))
        if passed := store.passed_over():
            print(f"note: {passed}", file=sys.stderr)

    @app.command()
    def doctor() -> None:
        """Say what bash's sandbox enforces on this machine and what it could not (checked live)."""
        from agent_cli.cli.doctor import doctor as report

        for line in report(_config({}), Path.cwd()):
            print(line)

    @app.command()
    def acp(
        ctx: typer.Context,
        model: str | None = typer.Option(None, "--model", "-m", metavar="NAME", help="Model name."),
        provider: str | None = typer.Option(
            None, "--provider", metavar="NAME", help="anthropic | scripted | openai."
        ),
        permission_mode: str | None = typer.Option(
            None,
            "--permission-mode",
            metavar="MODE",
            help="The sessions' mode at start (the client may switch it).",
        ),
        allowed_tools: list[str] = typer.Option([], "--allowed-tools", "--allowedTools", metavar="RULES"),
        disallowed_tools: list[str] = typer.Option(
            [], "--disallowed-tools", "--disallowedTools", metavar="RULES"
        ),
        trust_workspace: bool = typer.Option(
            False, "--trust-workspace", metavar="", help="Use the workspaces' .mcp.json, hooks and settings."
        ),
        script: str | None = typer.Option(
            None, "--script", metavar="FILE", help="Script for the scripted provider."
        ),
        demo: bool = typer.Option(
            False, "--demo", metavar="", help="A scripted model, offline, no key needed."
        ),
    ) -> None:
        """Serve the Agent Client Protocol on stdin/stdout: editors (Zed, JetBrains, Neovim) and toad
        start `agent acp` and drive its sessions."""
        from agent_cli.acp.main import serve
        from agent_cli.api.options import Options

        root = ctx.find_root().params  # `agent --model X acp` works too

        options = Options(
            cwd=Path.cwd(),
            model=model or root.get("model"),
            provider=provider or root.get("provider"),
            permission_mode=permission_mode or root.get("permission_mode"),
            allowed_tools=(*root.get("allowed_tools", ()), *allowed_tools),
            disallowed_tools=(*root.get("disallowed_tools", ()), *disallowed_tools),
            trust_workspace=trust_workspace or bool(root.get("trust_workspace")),
            script=script or root.get("script"),
            demo=demo or bool(root.get("demo")),
            debug=bool(root.get("debug")),
        )
        raise typer.Exit(serve(options))

    from agent_cli.cli.batch_command import add_batch

    add_batch(app)

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
            ...,
            exists=True,
            dir_okay=False,
            metavar="SESSION.jsonl",
            help="Claude Code JSONL or our events.jsonl.",
        ),
        policy: str = typer.Option(
            "default",
            "--policy",
            help="default | oracle | api-clear | api-compact | default+subtask | none | claude-code | masking | recorded.",
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
            fail(f"replay: {exc}" + (f"\n  {exc.hint}" if exc.hint else ""))
            return
        if as_json:
            typer.echo(json.dumps(result.to_json(), indent=2))
        else:
            from rich.console import Console

            from agent_cli.replay.report import render_table

            render_table(result, Console())

    for info in (*app.registered_commands, *mcp_app.registered_commands, *app.registered_groups):
        info.options_metavar = "[OPTIONS]"  # not the app's "[OPTIONS] [PROMPT]": they take no prompt
    return app


def _mcp_list(config: "Config", workspace: Path) -> None:
    import asyncio

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from agent_cli.api.compose import trust_decision
    from agent_cli.context.tokens import TokenCounter
    from agent_cli.core.printable import printable
    from agent_cli.extensions.mcp.runtime import probe, runtime_for, server_rows

    for warning in config.warnings:  # what the config files set that they may not
        print(printable(f"agent: {warning}"), file=sys.stderr)
    trust = trust_decision(config, workspace)
    if trust.ignored:
        print(printable(f"agent: {trust.notice(workspace)}"), file=sys.stderr)
    for problem in [] if trust.trusted else trust.problems(workspace):
        print(printable(f"agent: {problem}"), file=sys.stderr)
    runtime = runtime_for(config, workspace, trusted=trust.trusted, interactive=False, report=None)
    for problem in runtime.problems if runtime else ():
        print(printable(f"agent: {problem}"), file=sys.stderr)
    console = Console()
    if runtime is None or not runtime.servers:
        console.print(_no_servers(trust, workspace), markup=False, soft_wrap=True)
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


def _no_servers(trust: Any, workspace: Path) -> str:
    """Why `agent mcp list` has no server to show: nothing configured, or a `.mcp.json` not in use."""
    mcp_json = workspace / ".mcp.json"
    if not mcp_json.is_file():
        return "No MCP servers configured (.mcp.json, or [mcp_servers] in config.toml)."
    if any(f.path == mcp_json for f in trust.broken):
        return "No MCP servers in use: .mcp.json does not parse (see above)."
    if not trust.trusted:
        return (
            "No MCP servers in use: .mcp.json is there, but not used because this workspace is not "
            "trusted (pass --trust-workspace to use it)."
        )
    return "No MCP servers in use: .mcp.json names none that can start (see above)."


def print_sessions(store: Any, infos: list[Any]) -> None:
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


def _config(overrides: dict[str, Any]) -> "Config":
    from agent_cli.core.errors import ConfigError
    from agent_cli.settings.config import load_config

    try:
        return load_config(Path.cwd(), overrides)
    except ConfigError as exc:
        fail(f"configuration error: {exc}")
        raise
