"""A bash line read the way bash reads it before any command runs: quotes, here-documents, and every
expansion that can run a command, found by hand where bashlex does not look.

bashlex parses the structure of a line (lists, pipelines, simple commands, redirects) but it does not
look inside `${x:-$(…)}`, array subscripts, `$(( ))` or here-document bodies, it cannot parse a quoted
here-document delimiter (`<<'EOF'`), and it reads ANSI-C quoting (`$'…'`) wrongly, which can make code
look quoted. `scan` goes first: it finds every such piece (`$(…)`, backticks, `<(…)`/`>(…)`, `$((…))`,
`$[…]`, `${…}`, the body of a here-document whose delimiter is not quoted) and hands bashlex a line in
which each piece is a plain `${NAME}` placeholder, each here-document body is left out, and `$'…'` is
decoded and re-quoted. The caller analyses the pieces on their own (shell.py). What scan cannot read
with certainty becomes a doubt: no rule may then allow the line.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Literal

from agent_cli.tools.shell.words import decode_ansi_c

PieceKind = Literal["command", "backtick", "process", "arith", "param", "heredoc"]
_METACHARS = set(" \t\n;&|()<>")
_PARAM_SPECIAL = set("@*#?-$!0123456789")


class ScanError(Exception):
    """The line cannot be read with certainty; the message says why (one line)."""


@dataclass(frozen=True)
class Piece:
    kind: PieceKind
    inner: str  # what is inside the delimiters (a backtick's text with its escapes removed)
    raw: str  # the whole construct as written


@dataclass
class Scanned:
    text: str  # the line for bashlex: pieces as `${NAME}`, here-document bodies left out, `$'…'` decoded
    pieces: list[Piece] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # placeholder NAME -> the piece as written
    doubts: list[str] = field(default_factory=list)
    literals: dict[str, str] = field(default_factory=dict)  # MARKER -> a quoted string's value

    def restore(self, word: str) -> str:
        """A word of `text` (quotes removed) with its placeholders put back as written and its
        quoted strings' markers as their values."""
        if "__agent" not in word:
            return word
        for name, raw in self.names.items():
            word = word.replace("${" + name + "}", raw)
        for marker, value in self.literals.items():
            word = word.replace(marker, value)
        return word

    def has_placeholder(self, word: str) -> bool:
        return any(name in word for name in self.names)


def scan(text: str) -> Scanned:
    """`text` read as bash code (raises ScanError when it cannot be read with certainty)."""
    scanner = _Scanner(text)
    end = scanner.code(0, None)
    if end != len(text):
        raise ScanError("an unmatched `)`")
    return Scanned("".join(scanner.out), scanner.pieces, scanner.names, scanner.doubts, scanner.literals)


def expanding_pieces(text: str) -> tuple[list[Piece], list[str]]:
    """The pieces of text that bash expands as if in double quotes (a here-document body, a `${…}`
    word, an arithmetic expression), and the doubts. Single quotes do not protect here (in a
    double-quoted `${x:-'$(cmd)'}` they do not), so more is found rather than less."""
    scanner = _Scanner(text)
    scanner.expanding(0, None)
    return scanner.pieces, scanner.doubts


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.out: list[str] = []
        self.pieces: list[Piece] = []
        self.names: dict[str, str] = {}
        self.literals: dict[str, str] = {}
        self.doubts: list[str] = []
        self.nonce = secrets.token_hex(4)
        self.pending: list[
            tuple[str, bool, bool, str]
        ] = []  # here-docs: (delimiter, quoted, strip tabs, name)

    # -- emitting ----------------------------------------------------------------------------------
    def _piece(self, kind: PieceKind, inner: str, raw: str, emit: bool) -> None:
        if not emit:
            return
        self.pieces.append(Piece(kind, inner, raw))
        name = f"__agent_{self.nonce}_{len(self.names)}"
        self.names[name] = raw
        self.out.append("${" + name + "}")

    def _literal(self, value: str, quote: str, emit: bool) -> None:
        """A quoted string bashlex sees as a marker: its text never reaches bashlex (whose reading
        of quoted text has bugs: `'${esac\nx'for ` makes it allocate without end)."""
        if emit:
            marker = f"__agentq{self.nonce}_{len(self.literals)}"
            self.literals[marker] = value
            self.out.append(quote + marker + quote)

    def _doubt(self, reason: str) -> None:
        if reason not in self.doubts:
            self.doubts.append(reason)

    # -- code --------------------------------------------------------------------------------------
    def code(self, i: int, closer: str | None, emit: bool = True) -> int:
        """Scan code from `i` to the unmatched `closer` (`)`) or the end; returns where it stopped."""
        t, n = self.t, len(self.t)
        depth = 0
        word_start = True  # at the start of a word: only there does `#` begin a comment
        while i < n:
            c = t[i]
            at_word_start, word_start = word_start, False
            if c == ")" and depth == 0 and closer == ")":
                if self.pending:
                    raise ScanError("a here-document with no body")
                return i
            if c == "\\":
                self._copy(t[i : i + 2], emit)
                i += 2
            elif c == "'":
                end = t.find("'", i + 1)
                if end < 0:
                    raise ScanError("an unterminated single quote")
                self._literal(t[i + 1 : end], "'", emit)
                i = end + 1
            elif c == '"':
                end = _Scanner(t).expanding(i + 1, '"', emit=False)
                if not re.search(r"[$`\\]", t[i + 1 : end]):
                    self._literal(t[i + 1 : end], '"', emit)  # nothing in it is expanded
                    i = end + 1
                else:
                    self._copy('"', emit)
                    i = self.expanding(i + 1, '"', emit=emit) + 1
                    self._copy('"', emit)
            elif c == "$" and i + 1 < n and t[i + 1] == "'":
                i = self._ansi_c(i, emit)
            elif c == "$" and i + 1 < n and t[i + 1] == '"':
                self._doubt('a locale string ($"…") is translated before it is used')
                self._copy('"', emit)
                i = self.expanding(i + 2, '"', emit=emit) + 1
                self._copy('"', emit)
            elif c in "$`" or (c in "<>" and t.startswith("(", i + 1) and not t.startswith("<<", i)):
                i = self._expansion(i, emit)
            elif t.startswith("<<<", i):
                self._copy("<<<", emit)  # a here-string: its word is expanded like any other
                i += 3
            elif c == "<" and t.startswith("<<", i):
                i = self._heredoc_operator(i, emit)
            elif c == "#" and at_word_start:
                end = t.find("\n", i)
                i = n if end < 0 else end  # a comment: nothing in it runs
            elif c == "\n":
                self._copy("\n", emit)
                i = self._heredoc_bodies(i + 1, emit)
                word_start = True
            elif c == "(" and t.startswith("((", i) and (end := self._arith_end(i + 2)) is not None:
                self._doubt("an arithmetic command `(( ))` evaluates values, which can run a command")
                self._piece("arith", t[i + 2 : end], t[i : end + 2], emit)
                i = self._spans(i, end + 2)
            else:
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth < 0 and closer is None:
                        raise ScanError("an unmatched `)`")
                self._copy(c, emit)
                i += 1
                word_start = c in _METACHARS
        if closer is not None:
            raise ScanError(f"an unterminated `{closer}`")
        if self.pending:
            raise ScanError("a here-document with no body")
        return i

    def _copy(self, text: str, emit: bool) -> None:
        if emit:
            self.out.append(text)

    def expanding(self, i: int, closer: str | None, emit: bool = True) -> int:
        """Scan double-quote-like text from `i` to `closer` (`"`) or the end, collecting pieces (a
        single quote is an ordinary character here)."""
        t, n = self.t, len(self.t)
        while i < n:
            c = t[i]
            if closer is not None and c == closer:
                return i
            if c == "\\":
                self._copy(t[i : i + 2], emit)
                i += 2
            elif c in "$`":
                i = self._expansion(i, emit)
            else:
                self._copy(c, emit)
                i += 1
        if closer is not None:
            raise ScanError(f"an unterminated `{closer}`")
        return i

    # -- expansions --------------------------------------------------------------------------------
    def _expansion(self, i: int, emit: bool) -> int:
        """`$(…)`, `$((…))`, `${…}`, `$[…]`, a backtick, `<(…)`/`>(…)` at `i`; anything else is copied."""
        t = self.t
        if t[i] == "`":
            end = self._backtick_end(i + 1)
            inner = re.sub(r"\\([\\`$])", r"\1", t[i + 1 : end])
            self._piece("backtick", inner, t[i : end + 1], emit)
            return self._spans(i, end + 1)
        if t[i] in "<>":
            end = self._sub_end(i + 2)
            self._piece("process", t[i + 2 : end], t[i : end + 1], emit)
            return self._spans(i, end + 1)
        nxt = t[i + 1] if i + 1 < len(t) else ""
        if nxt == "(":
            if t.startswith("((", i + 1):
                end = self._arith_end(i + 3)
                if end is not None:
                    self._piece("arith", t[i + 3 : end], t[i : end + 2], emit)
                    return self._spans(i, end + 2)
            end = self._sub_end(i + 2)
            self._piece("command", t[i + 2 : end], t[i : end + 1], emit)
            return self._spans(i, end + 1)
        if nxt == "{":
            end = self._param_end(i + 2)
            self._piece("param", t[i + 2 : end], t[i : end + 1], emit)
            return self._spans(i, end + 1)
        if nxt == "[":
            end = self._bracket_end(i + 2)
            self._piece("arith", t[i + 2 : end], t[i : end + 1], emit)
            return self._spans(i, end + 1)
        self._copy("$", emit)
        return i + 1

    def _spans(self, start: int, end: int) -> int:
        if self.pending and "\n" in self.t[start:end]:
            self._doubt("a here-document begins inside an expansion that spans lines")
        return end

    def _sub_end(self, i: int) -> int:
        """The index of the `)` that closes a command or process substitution whose code starts at i."""
        return _Scanner(self.t).code(i, ")", emit=False)

    def _backtick_end(self, i: int) -> int:
        t = self.t
        while i < len(t):
            if t[i] == "\\":
                i += 2
            elif t[i] == "`":
                return i
            else:
                i += 1
        raise ScanError("an unterminated backtick")

    def _arith_end(self, i: int) -> int | None:
        """The index of the first `)` of the `))` that ends `$((` at depth 0; None when it is `$( (…) …)`."""
        t = self.t
        depth = 0
        while i < len(t):
            c = t[i]
            if c == "\\":
                i += 2
                continue
            if c in "'\"":
                end = t.find(c, i + 1)
                if end < 0:
                    return None
                i = end + 1
                continue
            if c == "`" or (c == "$" and t[i + 1 : i + 2] in ("(", "{", "[")):
                try:
                    i = _Scanner(t)._expansion(i, emit=False)
                except ScanError:
                    return None
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    return i if t.startswith("))", i) else None
                depth -= 1
            i += 1
        return None

    def _param_end(self, i: int) -> int:
        """The `}` that closes `${` (quotes and nested expansions skipped; a bare `{` is not counted:
        bash ends `${x:-{a}b}` at the first `}`)."""
        t = self.t
        while i < len(t):
            c = t[i]
            if c == "\\":
                i += 2
            elif c == "'":
                end = t.find("'", i + 1)
                if end < 0:
                    raise ScanError("an unterminated single quote in ${…}")
                i = end + 1
            elif c == '"':
                i = _Scanner(t).expanding(i + 1, '"', emit=False) + 1
            elif c == "`" or (c == "$" and t[i + 1 : i + 2] in ("(", "{", "[")):
                i = _Scanner(t)._expansion(i, emit=False)
            elif c == "}":
                return i
            else:
                i += 1
        raise ScanError("an unterminated ${")

    def _bracket_end(self, i: int) -> int:
        t = self.t
        depth = 0
        while i < len(t):
            c = t[i]
            if c == "[":
                depth += 1
            elif c == "]":
                if depth == 0:
                    return i
                depth -= 1
            elif c == "`" or (c == "$" and t[i + 1 : i + 2] in ("(", "{", "[")):
                i = _Scanner(t)._expansion(i, emit=False)
                continue
            i += 1
        raise ScanError("an unterminated $[")

    # -- ANSI-C quoting ----------------------------------------------------------------------------
    def _ansi_c(self, i: int, emit: bool) -> int:
        t = self.t
        j = i + 2
        while j < len(t):
            if t[j] == "\\":
                j += 2
            elif t[j] == "'":
                break
            else:
                j += 1
        else:
            raise ScanError("an unterminated $'…' string")
        self._literal(decode_ansi_c(t[i + 2 : j]), "'", emit)
        return j + 1

    # -- here-documents ----------------------------------------------------------------------------
    def _heredoc_operator(self, i: int, emit: bool) -> int:
        t = self.t
        op = "<<-" if t.startswith("<<-", i) else "<<"
        j = i + len(op)
        while j < len(t) and t[j] in " \t":
            j += 1
        start = j
        while j < len(t) and t[j] not in _METACHARS:
            if t[j] == "\\":
                j += 2
            elif t[j] in "'\"":
                end = t.find(t[j], j + 1)
                if end < 0:
                    raise ScanError("an unterminated quote in a here-document delimiter")
                j = end + 1
            else:
                j += 1
        word = t[start:j]
        if not word:
            raise ScanError("a here-document operator with no delimiter")
        quoted = any(q in word for q in "'\"\\")
        delimiter = re.sub(r"""\\(.)|['"]""", lambda m: m.group(1) or "", word.replace("$'", "'"))
        name = f"__agent_h{self.nonce}_{len(self.pending)}_{i}"
        self.pending.append((delimiter, quoted, op == "<<-", name))
        self._copy(f"{op}{name}", emit)
        return j

    def _heredoc_bodies(self, i: int, emit: bool) -> int:
        """Read the bodies of the here-documents whose operators ended the line just read."""
        t = self.t
        for delimiter, quoted, strip_tabs, name in self.pending:
            lines_start = i
            while True:
                if i >= len(t):
                    raise ScanError(f"a here-document not ended by {delimiter}")
                end = t.find("\n", i)
                line_end = len(t) if end < 0 else end
                line = t[i:line_end]
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body = t[lines_start:i]
                    i = line_end + 1 if end >= 0 else line_end
                    break
                i = line_end + 1
            if not quoted and emit:
                pieces, doubts = expanding_pieces(body)
                self.pieces.extend(pieces)
                for doubt in doubts:
                    self._doubt(doubt)
            self._copy(f"{name}\n", emit)
        self.pending = []
        return i
