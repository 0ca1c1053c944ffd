"""A bash line read whole: scan.py finds what bashlex does not look at, bashlex parses the structure,
expansions.py reads the pieces, wrappers.py and programs.py what each simple command runs.

Every simple command is listed: in lists and pipelines, subshells, `{ …; }`, loops and function
bodies, command and process substitutions wherever they are (in words, redirects, `${…}`, subscripts,
arithmetic, here-document bodies), the scripts of `bash -c` and `eval`, and what wrappers run. Every
redirect that writes or reads a file is listed with its target. A line bashlex cannot parse (`[[ ]]`,
`case`, `(( ))`, arrays) is still split into commands as well as it can be, for deny and ask rules,
and gets a doubt, so no allow rule but a bare `Bash` allows it.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from agent_cli.tools.shell.expansions import analyse
from agent_cli.tools.shell.model import ShellLine, SimpleCommand, Word
from agent_cli.tools.shell.scan import ScanError, Scanned, scan
from agent_cli.tools.shell.words import unquote, unquoted_glob
from agent_cli.tools.shell.wrappers import meaning

# Redirect targets that write nothing a person would call a file.
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_READ_REDIRECTS = frozenset({"<", "<>"})
_SUBSCRIPT_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[.*\]\+?=", re.S)
_RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case", "esac", "select",
     "function", "time", "coproc", "!", "[[", "]]", "{", "}"}
)  # fmt: skip
MAX_DEPTH = 12


def parse_shell(command: str) -> ShellLine:
    """Everything the rules need of a bash line; `doubts` says what could not be read with certainty."""
    reader = _Reader()
    if not command.strip():
        reader.doubt("the command is empty")
    else:
        try:
            reader.script(command)
        except RecursionError:
            reader.doubt("it is nested too deep to read")
        except (AttributeError, TypeError, ValueError, IndexError) as exc:  # a tree bashlex built oddly
            reader.doubt(f"it could not be read ({type(exc).__name__})")
    return reader.line()


class _Reader:
    """The sink every part of the reading reports to (see model.Sink)."""

    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.writes: list[str] = []
        self.reads: list[str] = []
        self.doubts: list[str] = []
        self.depth = 0
        self.moved = False

    # -- the sink ----------------------------------------------------------------------------------
    def command(self, command: SimpleCommand) -> None:
        self.commands.append(command)

    def doubt(self, reason: str) -> None:
        if reason not in self.doubts:
            self.doubts.append(reason)

    def changes_directory(self) -> None:
        self.moved = True

    def script(self, text: str) -> None:
        if self.depth >= MAX_DEPTH:
            self.doubt("substitutions nested too deep to follow")
            return
        self.depth += 1
        try:
            self._read(text)
        finally:
            self.depth -= 1

    # -- reading -----------------------------------------------------------------------------------
    def _read(self, text: str) -> None:
        if not text.strip():
            return
        try:
            scanned = scan(text)
        except ScanError as exc:
            self.doubt(f"it cannot be read with certainty ({exc})")
            self._fallback(text, None)
            return
        for doubt in scanned.doubts:
            self.doubt(doubt)
        import bashlex  # imported here: only permission checks of bash calls need it

        try:
            trees = bashlex.parse(scanned.text)
        except Exception as exc:  # noqa: BLE001 - ParsingError, NotImplementedError, MatchedPairError…
            self.doubt(
                f"it uses bash syntax this check does not follow ({scanned.restore(_first_line(exc))})"
            )
            self._fallback(scanned.text, scanned)
        else:
            walker = _Walker(scanned, self)
            for tree in trees:
                walker.visit(tree)
        for piece in scanned.pieces:
            analyse(piece, self)

    def _fallback(self, text: str, scanned: Scanned | None) -> None:
        """Commands split out of a line that does not parse, for deny and ask rules only."""
        names = scanned.names if scanned else {}
        restore = scanned.restore if scanned else str
        text = re.sub(r"\$\{(__agent_\w+)\}", lambda m: "\x01" + m.group(1) + "\x01", text)
        for segment in re.split(r"\|\||&&|[;&|()\n{}`]|\$\(|<\(|>\(", text):
            try:
                words = shlex.split(segment, comments=True)
            except ValueError:
                words = segment.split()
            found = [
                Word(
                    restore(re.sub("\x01(\\w+)\x01", lambda m: names.get(m.group(1), "$"), w)),
                    "\x01" in w or "$" in w,
                )
                for w in words
                if w not in _RESERVED
            ]
            assigns = []
            while found and re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=", found[0].text):
                assigns.append(found.pop(0))
            if found or assigns:
                meaning(assigns, found, self)

    def line(self) -> ShellLine:
        if self.moved and any(not t.startswith(("/", "~")) for t in self.writes + self.reads):
            self.doubt("it changes directory, so a relative redirect target cannot be checked")
        if not self.commands and not self.writes and not self.doubts:
            self.doubt("it runs no command")
        return ShellLine(tuple(self.commands), tuple(self.writes), tuple(self.reads), tuple(self.doubts))


class _Walker:
    def __init__(self, scanned: Scanned, reader: _Reader) -> None:
        self.scanned = scanned
        self.reader = reader

    def visit(self, node: Any) -> None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            self._command(node)
        elif kind == "redirect":
            self._redirect(node)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.reader.doubt("a substitution the scan did not see")  # scan.py replaces every one
            self.visit(node.command)
        elif kind == "for":
            self._for(node)
        else:
            for child in _children(node):
                self.visit(child)

    def _word(self, node: Any) -> Word:
        start, end = node.pos
        raw = self.scanned.text[start:end]
        dynamic = self.scanned.has_placeholder(raw) or any(
            getattr(p, "kind", "") != "tilde" for p in getattr(node, "parts", []) or []
        )
        return Word(self.scanned.restore(unquote(raw)), dynamic, unquoted_glob(raw))

    def _command(self, node: Any) -> None:
        assigns: list[Word] = []
        words: list[Word] = []
        redirects: list[Any] = []
        for part in node.parts:
            kind = getattr(part, "kind", "")
            if kind == "redirect":
                redirects.append(part)
            elif kind in ("word", "assignment"):
                word = self._word(part)
                if not words and (kind == "assignment" or _SUBSCRIPT_ASSIGNMENT.match(word.text)):
                    assigns.append(word)
                else:
                    words.append(word)  # (an assignment after the command name is an argument)
        meaning(assigns, words, self.reader)
        for redirect in redirects:
            self._redirect(redirect)

    def _for(self, node: Any) -> None:
        parts = node.parts
        for i, part in enumerate(parts):
            if (
                getattr(part, "kind", "") == "reservedword"
                and part.word == "for"
                and i + 1 < len(parts)
                and not self.scanned.has_placeholder(getattr(parts[i + 1], "word", ""))
            ):
                meaning([Word(f"{parts[i + 1].word}=…", True)], [], self.reader)
        for child in parts:
            self.visit(child)

    def _redirect(self, node: Any) -> None:
        output = node.output
        if output is None or isinstance(output, int) or node.type in ("<<", "<<-", "<<<"):
            return
        if isinstance(output, str):  # `1>&-` and the like: bashlex gives the bare text, no word
            if not (node.type == ">&" and (output.isdigit() or output == "-")):
                self.reader.doubt(f"it redirects to `{output}` in a way the reader cannot place")
            return
        word = self._word(output)
        if node.type == ">&" and (word.text.isdigit() or word.text == "-"):
            return
        whole = re.fullmatch(r"\$\{(__agent_\w+)\}", self.scanned.text[output.pos[0] : output.pos[1]])
        if whole and self.scanned.names.get(whole[1], "").startswith(("<(", ">(")):
            return  # `< <(cmd)`, `> >(cmd)`: a pipe to a process substitution, read as a script
        writes, reads = node.type in _WRITE_REDIRECTS, node.type in _READ_REDIRECTS
        if word.dynamic or word.glob:
            verb = "writes" if writes else "reads"
            self.reader.doubt(
                f"it {verb} a file named by an expansion (`{word.text}`), which no rule can check"
            )
            return
        if writes and word.text not in HARMLESS_TARGETS:
            self.reader.writes.append(word.text)
        if reads:
            self.reader.reads.append(word.text)


def _children(node: Any) -> list[Any]:
    out: list[Any] = []
    for name in ("parts", "list", "redirects"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(value)
    return out


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:80]
