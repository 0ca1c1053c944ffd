"""A headless run (`agent -p`), as `claude -p` runs: the prompt from the arguments and whatever is
piped in, a session from the Python API (api.Session), the output in the format asked for
(headless.py). With `--input-format stream-json` the prompts are user messages read from stdin, one
a line, each run in turn in the same session."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import stat
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from agent_cli.core.printable import printable
from agent_cli.core.surrogates import scrub
from agent_cli.core.tags import escape_tags

if TYPE_CHECKING:
    from agent_cli.api import Options, Session
    from agent_cli.cli.headless import Output, OutputFormat
    from agent_cli.session.signals import SignalStop

STDIN_WAIT_SECONDS = 3.0  # with a prompt given, how long a pipe that says nothing is waited for


class PromptError(ValueError):
    pass


def fail(message: str, code: int = 2) -> None:
    print(printable(f"agent: {message}"), file=sys.stderr)
    raise SystemExit(code)


def report(text: str, level: str) -> None:
    """MCP problems and the trust notice, headless: one line each on stderr, as they happen (a
    server's name and message are the workspace's words: no escape sequence reaches the terminal)."""
    print(printable(f"agent: {text}"), file=sys.stderr)


def read_prompt(words: list[str], stdin: TextIO, wait: float = STDIN_WAIT_SECONDS) -> str:
    """The prompt: what was piped in (a terminal is never read), then the words given. `-` alone
    means: the prompt is stdin. Piped text is escaped like any text from outside (core/tags.py)."""
    given = scrub(" ".join(words))  # an argument that is not UTF-8 comes with lone surrogates
    if given == "-":
        given, piped = "", _piped(stdin, None)
    else:
        piped = _piped(stdin, wait if given.strip() else None)
    if not (piped + given).strip():
        raise PromptError('no prompt: give one (agent -p "fix the test") or pipe it in (echo … | agent -p)')
    from agent_cli.core.prompt import Prompt, PromptPart

    # what was piped in is data, as a paste is: no `@` mention, `!` or `#` is read in it
    glue = "\n\n" if piped and given else ""
    return Prompt([PromptPart(piped, pasted=True), PromptPart(glue + given)])


def _piped(stdin: TextIO, wait: float | None) -> str:
    """stdin's text when it is a pipe or a file. With `wait`, a pipe that stays silent that long is
    left alone (a parent that never closes its end must not hang the run), and that is said."""
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return ""
    if os.isatty(fd):
        return ""
    mode = os.fstat(fd).st_mode
    if wait is not None and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            print(
                f"agent: nothing came on stdin within {wait:g} s; running without it "
                "(give `< /dev/null` to skip the wait)",
                file=sys.stderr,
            )
            return ""
    data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
    return escape_tags(data.decode("utf-8", errors="replace").rstrip("\n"))


def headless(
    options: Options, words: list[str], fmt: OutputFormat, input_format: str = "text", *, pick: bool = False
) -> int:
    """Run `agent -p`; the process's exit code (0 done, 1 the run failed, 2 it could not start,
    128 + N stopped by signal N). `pick`: `--resume` came without an id."""
    from agent_cli.cli.headless import Output

    output = Output(fmt)
    prompt: str | None = None
    if pick:
        return output.failure("--resume needs a session id with -p (see `agent sessions`), or use --continue")
    if options.fork_session and not (options.resume or options.continue_session):
        return output.failure("--fork-session needs --continue or --resume ID (the session to copy)")
    if input_format == "stream-json":
        if fmt != "stream-json":
            return output.failure("--input-format stream-json needs --output-format stream-json")
        if words:
            return output.failure(
                "with --input-format stream-json the prompts come from stdin, not arguments"
            )
    else:
        try:
            prompt = read_prompt(words, sys.stdin)
        except PromptError as exc:
            return output.failure(str(exc))
    try:
        return asyncio.run(_headless(options, prompt, output))
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        return 130


async def _headless(options: Options, prompt: str | None, output: Output) -> int:
    from agent_cli.api import Session
    from agent_cli.core.errors import AgentError
    from agent_cli.session.signals import HEADLESS, SignalStop, exit_code

    session = Session(options=options, report=report)
    try:
        await session.open()
    except AgentError as exc:
        message = str(exc).replace("run `agent` again", "run `agent -p` again")
        return output.failure(message, "" if "\n" in message else exc.hint)
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    stop = SignalStop(session.backend, lambda _: lines.put_nowait(None), HEADLESS).install()
    try:
        output.init(session.facts())
        if prompt is not None:
            failed = await _prompt(session, prompt, output, stop)
        else:
            failed = await _prompts(session, output, stop, lines)
    finally:
        stop.uninstall()
        await session.close()
    if stop.signum is not None:
        return exit_code(stop.signum)
    return 1 if failed else 0


async def _prompt(session: Session, prompt: str, output: Output, stop: SignalStop) -> bool:
    """Run one prompt and print its end; whether it failed."""
    async for event in session.send(prompt):
        output.event(event)
    result = session.result
    assert result is not None
    log_failure = getattr(session.backend.log, "failure", None)
    if log_failure is not None:  # one line that says what and where; the rest of what failed is its echo
        print(f"agent: {log_failure}", file=output.err)
    if stop.signum is not None:
        name = signal.Signals(stop.signum).name
        print(f"agent: stopped by {name}; the session is saved (agent --continue goes on)", file=output.err)
        result = result.failed(f"interrupted: agent received {name}", "interrupted")
    output.result(result, text=stop.signum is None and log_failure is None)
    return result.is_error


async def _prompts(session: Session, output: Output, stop: SignalStop, lines: asyncio.Queue) -> bool:
    """`--input-format stream-json`: each line of stdin a user message, run in turn until stdin
    ends (or a signal); a line that is not one is said, by its number, and skipped."""
    from agent_cli.api.wire import BadInput, user_prompt

    loop = asyncio.get_running_loop()

    def pump() -> None:  # a daemon thread: a stdin that never ends must not keep the process
        # bytes, decoded as piped stdin is: a line that is not UTF-8 must not end the thread (the
        # run would wait for ever), nor keep its bad bytes (api/wire.py scrubs escaped ones)
        for raw in getattr(sys.stdin, "buffer", sys.stdin):
            text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
            loop.call_soon_threadsafe(lines.put_nowait, text)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, daemon=True, name="stream-json-input").start()
    failed, number = False, 0
    while stop.signum is None and (line := await lines.get()) is not None:
        number += 1
        if not line.strip():
            continue
        try:
            prompt = user_prompt(line)
        except BadInput as exc:
            print(f"agent: stream-json input line {number}: {exc}; skipped", file=output.err)
            failed = True
            continue
        failed = await _prompt(session, prompt, output, stop) or failed
    return failed
