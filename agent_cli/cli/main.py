"""`agent`: the entry point. Imports are lazy: `--version` and `--help` load neither textual nor the
anthropic SDK, and a headless run starts the SDK's import before anything else.

The rest of the command line is a package of its own: `commands.py` (flags, config, subcommands),
`launch.py` (a headless run) and `headless.py` (its output), `tui_launch.py` (the TUI). Both open
their session through the Python API (`agent_cli.api`), over its one composition root.
"""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading


def main(argv: list[str] | None = None) -> None:
    as_program = argv is None  # not called from Python: the process may end right after the answer
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["-V"]):
        from agent_cli import __version__

        print(f"agent {__version__}")
        return
    try:
        os.getcwd()
    except FileNotFoundError:  # the folder was removed under the shell: every path would be a traceback
        print(
            "agent: the current directory no longer exists; cd to your project and run agent again",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    headless = _headless_run(argv)
    if headless and _may_use_sdk(argv):
        _warm_sdk()  # ~1.5 s of imports: start them before anything else (typer, config, engine)
    import typer

    from agent_cli.cli.commands import normalize, typer_app

    app = typer_app()
    fmt = _json_format(argv) if headless else None
    try:
        if fmt is None:
            app(args=normalize(argv, typer.main.get_command(app)), prog_name="agent")
        else:  # a usage error is the result object too (claude -p's contract: every failure prints it)
            raise SystemExit(_run_json(app, normalize(argv, typer.main.get_command(app)), fmt))
    except SystemExit as done:
        if headless and as_program:
            _exit_now(done.code)
        raise


def _json_format(argv: list[str]) -> str | None:
    """`json` or `stream-json` when argv asks for one of them (`--output-format X` or `=X`)."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--output-format" and i + 1 < len(argv) else arg.partition("=")[2]
        if (arg == "--output-format" or arg.startswith("--output-format=")) and value in (
            "json",
            "stream-json",
        ):
            return value
    return None


def _run_json(app: object, args: list[str], fmt: str) -> int:
    import typer

    from agent_cli.cli.headless import Output

    # typer bundles its own click; its UsageError (a bad or unknown option) is BadParameter's base
    usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    try:
        code = app(args=args, prog_name="agent", standalone_mode=False)  # type: ignore[operator]
    except usage_error as exc:
        return Output(fmt).failure(exc.format_message(), "see `agent --help`")
    except typer.Abort:
        return 130
    return code if isinstance(code, int) else 0


def _headless_run(argv: list[str]) -> bool:
    options = argv[: argv.index("--")] if "--" in argv else argv
    return any(a in ("-p", "--print") or a.startswith("--print=") for a in options)


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


def _warm_sdk() -> "threading.Thread":
    """Import the SDK on a thread of its own, with the cyclic collector paused until it is done.

    The import builds ~1,400 pydantic classes and a few hundred thousand objects, none of them
    garbage; the collector's passes over them are ~20% of the import (bench/startup.py: ~950 ->
    ~800 ms for `import anthropic` alone). When the import is done, what exists is frozen (later
    passes skip it, as the TUI does after start-up) and the collector runs again."""
    import gc
    import threading

    def load() -> None:
        try:
            import anthropic  # noqa: F401
        except Exception:  # noqa: BLE001 - the real import reports it
            pass
        finally:
            gc.freeze()
            gc.enable()

    gc.disable()
    thread = threading.Thread(target=load, daemon=True, name="warm-anthropic")
    thread.start()
    return thread
