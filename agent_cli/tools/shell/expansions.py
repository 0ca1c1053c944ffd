"""The pieces of a bash line that scan.py found (`$(…)`, backticks, `<(…)`, `$((…))`, `${…}`, the
expansions in a here-document body), read for what they run.

A command or process substitution is a script of its own. Arithmetic and parameter expansions run
a command in two ways: a substitution inside them (`${x:-$(cmd)}`, `"${a[$(cmd)]}"`, `$(( $(cmd) ))`),
read here as a script; and bash evaluating a value as an arithmetic expression, whose array
subscripts run command substitutions (`x='a[$(cmd)]'; echo $((x))`, `${a[x]}`, `${s:x}`, `${!x}`,
`${x@P}` prompt-expands its value). What can evaluate a variable's value is a doubt: the value is
only known when the line runs.
"""

from __future__ import annotations

import re

from agent_cli.tools.shell.env import runs_code
from agent_cli.tools.shell.model import Sink
from agent_cli.tools.shell.scan import Piece, ScanError, expanding_pieces

# An arithmetic expression of numbers and operators only: nothing in it names a variable.
_PLAIN_ARITH = re.compile(r"[\s0-9+\-*/%()<>=!&|^~?:,]*")
_PARAM = re.compile(
    r"(?P<bang>!?)(?P<hash>#?)(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!\-])(?P<rest>.*)", re.S
)


def analyse(piece: Piece, sink: Sink) -> None:
    if piece.kind in ("command", "backtick", "process"):
        sink.script(piece.inner)
    elif piece.kind == "arith":
        arithmetic(piece.inner, sink, piece.raw)
    elif piece.kind == "param":
        parameter(piece.inner, sink, piece.raw)


def nested(text: str, sink: Sink) -> bool:
    """Read the substitutions inside `text` (expanded as in double quotes); whether it had any but
    plain arithmetic (`$((2))`), whose value is a number."""
    try:
        pieces, doubts = expanding_pieces(text)
    except ScanError as exc:
        sink.doubt(f"it cannot be read with certainty ({exc})")
        return True
    for doubt in doubts:
        sink.doubt(doubt)
    for piece in pieces:
        analyse(piece, sink)
    return any(p.kind != "arith" or not _PLAIN_ARITH.fullmatch(p.inner) for p in pieces)


def _without_arithmetic(text: str) -> str:
    """`text` with each `$((…))` in it as a number (nested() judged them)."""
    try:
        pieces, _ = expanding_pieces(text)
    except ScanError:
        return text
    for piece in pieces:
        text = text.replace(piece.raw, "0") if piece.kind == "arith" else text
    return text


def arithmetic(expression: str, sink: Sink, raw: str) -> None:
    had_pieces = nested(expression, sink)
    if had_pieces or not _PLAIN_ARITH.fullmatch(_without_arithmetic(expression)):
        sink.doubt(
            f"`{_short(raw)}` evaluates a value as arithmetic, and an array subscript in that value can run a command"
        )


def parameter(body: str, sink: Sink, raw: str) -> None:
    match = _PARAM.fullmatch(body)
    if not match:
        nested(body, sink)
        sink.doubt(f"`{_short(raw)}` is a parameter expansion this check cannot read")
        return
    name, rest = match["name"], match["rest"]
    subscript = ""
    if rest.startswith("["):
        end = _bracket_end(rest)
        if end < 0:
            sink.doubt(f"`{_short(raw)}` has an unterminated subscript")
            return
        subscript, rest = rest[1:end], rest[end + 1 :]
        if subscript not in ("@", "*"):
            arithmetic_subscript(subscript, sink, raw)
    if match["bang"] and not (rest in ("*", "@") or (subscript in ("@", "*") and not rest)):
        sink.doubt(f"`{_short(raw)}` expands the variable named by a value, which can run a command")
    if match["hash"] and match["bang"]:
        sink.doubt(f"`{_short(raw)}` is a parameter expansion this check cannot read")
    if not rest:
        return
    if rest.startswith("@"):
        if "P" in rest:
            sink.doubt(f"`{_short(raw)}` expands a value as a prompt, which runs the commands in it")
        return
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
        offsets = rest[1:]
        if nested(offsets, sink) or not re.fullmatch(r"[\s0-9:+\-]*", offsets):
            sink.doubt(
                f"`{_short(raw)}` evaluates an offset as arithmetic, which can run a command hidden in a value"
            )
        return
    operator = re.match(r":?[-=?+]|##?|%%?|//?|/#|/%|\^\^?|,,?", rest)
    if operator is None:
        sink.doubt(f"`{_short(raw)}` is a parameter expansion this check cannot read")
        nested(rest, sink)
        return
    if operator.group(0).endswith("=") and runs_code(name):
        sink.doubt(f"`{_short(raw)}` sets {name}, which can make a later command run another program")
    nested(rest[operator.end() :], sink)


def arithmetic_subscript(subscript: str, sink: Sink, raw: str) -> None:
    """An indexed array's subscript is arithmetic (an associative one's is a string: either way its
    substitutions run)."""
    had_pieces = nested(subscript, sink)
    if had_pieces or not re.fullmatch(r"\s*-?[0-9]+\s*", subscript):
        sink.doubt(f"`{_short(raw)}` evaluates a subscript as arithmetic, which can run a command")


def _bracket_end(text: str) -> int:
    depth = 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
