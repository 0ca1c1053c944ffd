"""`agent -p`'s output, in Claude Code's formats: the answer as text, one result object (`json`), or
one message a line (`stream-json`: `system`/`init`, `assistant`, `user`, … then `result`).

stdout carries the answer (or the JSON); what goes wrong, and every warning, goes to stderr in every
format, so a script reading JSON still sees it; progress notes go to stderr only in text mode.

What reaches a terminal holds no escape sequence, control or bidi character the model or a tool put
there (core/printable.py): stderr's lines are always for a person, so always cleaned; the text
answer is cleaned when stdout is a terminal, and left as the model wrote it for a pipe or a file
(the answer is then data, as Claude Code's `-p` gives it; JSON escapes every control character).
Every failure, one that stops the run before it starts included, still prints a result object in the
JSON formats.
"""

from __future__ import annotations

import json
import sys
from typing import Literal, TextIO

from agent_cli.api.result import Result, failure
from agent_cli.api.wire import SessionFacts, init_message, stream_message
from agent_cli.core.events import (
    ContextStatus,
    ContextUpdate,
    ErrorEvent,
    Event,
    Notice,
    PermissionDenied,
    Retrying,
)
from agent_cli.core.printable import printable, revealed

OutputFormat = Literal["text", "json", "stream-json"]
FORMATS: tuple[OutputFormat, ...] = ("text", "json", "stream-json")


class Output:
    """Writes one run (or, with stream-json input, several prompts of one session)."""

    def __init__(self, fmt: OutputFormat, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.fmt = fmt
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.session_id = ""
        self.model = ""
        self.cwd = "."
        self._context: ContextStatus | None = None

    def _line(self, data: dict[str, object]) -> None:
        self.out.write(json.dumps(data, default=str) + "\n")
        self.out.flush()

    def init(self, facts: SessionFacts) -> None:
        """The stream's first line: Claude Code's `system`/`init`."""
        self.session_id, self.model, self.cwd = facts.session_id, facts.model, facts.cwd
        if self.fmt == "stream-json":
            self._line(init_message(facts))

    def event(self, event: Event) -> None:
        if isinstance(event, ContextUpdate):
            if event.status == self._context:
                return  # the loop refreshes the gauge often; a stream reports each change once
            self._context = event.status
        if self.fmt == "stream-json" and (
            line := stream_message(event, self.session_id, self.model, self.cwd)
        ):
            self._line(line)
        warning = isinstance(event, Notice) and event.level != "info"
        if (
            isinstance(event, ErrorEvent | PermissionDenied)
            or warning
            or (self.fmt == "text" and isinstance(event, Notice | Retrying))
        ):
            print(printable(describe(event)), file=self.err)

    def result(self, result: Result, *, text: bool = True) -> None:
        """The run's end: the result object, or in text mode the answer (when `text`)."""
        if self.fmt == "json":
            self.out.write(json.dumps(result.to_json(), indent=2) + "\n")
        elif self.fmt == "stream-json":
            self.out.write(json.dumps(result.to_json()) + "\n")
        elif text and result.result:
            answer = result.result.rstrip()
            self.out.write((printable(answer) if _is_terminal(self.out) else answer) + "\n")
        self.out.flush()

    def failure(self, message: str, hint: str = "", code: int = 2) -> int:
        """A run that could not start: one line (and the hint) on stderr, and in the JSON formats
        the result object saying it. Returns the exit code."""
        print(printable(f"agent: {message}" + (f"\n  {hint}" if hint else "")), file=self.err)
        if self.fmt != "text":
            self.result(failure(message, self.session_id))
        return code


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def describe(event: Event) -> str:
    if isinstance(event, ErrorEvent):
        return f"error ({event.error_kind}): {event.message}" + (f"\n  {event.hint}" if event.hint else "")
    if isinstance(event, PermissionDenied):
        target = revealed(event.target)  # what was asked for, ESC and all, as the TUI's question shows it
        return f"denied: {event.call.name if event.call else '?'} {target} — {event.reason}"
    if isinstance(event, Notice):
        return f"{event.level}: {event.text}"
    if isinstance(event, Retrying):
        dropped = " (the partial answer so far is discarded)" if event.discarded else ""
        return f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.reason}{dropped}"
    return str(event)
