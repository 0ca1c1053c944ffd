"""A bash command line as the permission rules see it: its simple commands and the files it writes.

Parsed with `bashlex` (a port of bash's own parser), so `echo hi; rm f`, `a | b`, `x && y`, `$(…)`,
backticks, `<(…)`, subshells, `{ …; }`, loops and functions are all seen: every simple command in
them is listed, including those inside substitutions, and every redirect that writes a file is listed
with its target. A line bashlex cannot parse (or a construct it does not implement, such as `[[ ]]`,
`$(( ))` or `case`) gives None: the caller treats it as "cannot be judged" and asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Redirect targets that write nothing a person would call a file.
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]  # the command and its arguments, quotes removed; `VAR=x` prefixes dropped

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class ShellLine:
    commands: tuple[SimpleCommand, ...]  # in order, substitutions included; assignment-only ones left out
    writes: tuple[str, ...]  # targets of redirects that write a file (`> f`, `>> f`, `&> f`), as written


def parse_shell(command: str) -> ShellLine | None:
    """The simple commands and written files of `command`; None when it cannot be parsed."""
    if not command.strip():
        return None
    import bashlex  # imported here: only permission checks of bash calls need it

    try:
        trees = bashlex.parse(command)
    except Exception:  # noqa: BLE001 - bashlex raises ParsingError, NotImplementedError, MatchedPairError…
        return None
    walker = _Walker()
    for tree in trees:
        walker.visit(tree)
    if walker.unsure:
        return None
    return ShellLine(tuple(walker.commands), tuple(walker.writes))


class _Walker:
    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.writes: list[str] = []
        self.unsure = False

    def visit(self, node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            self._command(node)
        elif kind == "redirect":
            self._redirect(node)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.visit(node.command)
        else:
            for child in _children(node):
                self.visit(child)

    def _command(self, node: Any) -> None:
        words: list[str] = []
        inner: list[Any] = []  # substitutions inside the words, visited after the command itself
        redirects: list[Any] = []
        for part in node.parts:
            kind = getattr(part, "kind", "")
            if kind == "redirect":
                redirects.append(part)
                continue
            if kind == "word" or (kind == "assignment" and words):
                words.append(part.word)  # (an assignment after the command name is an argument)
            inner.extend(getattr(part, "parts", []) or [])
        if words:
            self.commands.append(SimpleCommand(tuple(words)))
        for child in inner:
            self.visit(child)
        for redirect in redirects:
            self._redirect(redirect)

    def _redirect(self, node: Any) -> None:
        output = node.output
        if node.type in _WRITE_REDIRECTS and not isinstance(output, int):
            target = getattr(output, "word", None)
            if target is None:
                self.unsure = True
            elif target not in HARMLESS_TARGETS:
                self.writes.append(target)
        if output is not None and not isinstance(output, int):
            for child in getattr(output, "parts", []) or []:
                self.visit(child)


def _children(node: Any) -> list[Any]:
    out: list[Any] = []
    for name in ("parts", "list", "redirects"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(value)
    return out
