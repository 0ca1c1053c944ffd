"""Text from elsewhere, made safe to show on a terminal: the one sanitizer of what we paint or print.

The model's words, a tool call's input, a tool's output, a file or server name may hold what a
terminal obeys instead of showing: escape sequences that write the clipboard (OSC 52), set the
window title (OSC 0/2), make a link (OSC 8), clear the screen or move the cursor, and the other C0
and C1 control characters; or bidi controls that make a line show in another order than the one it
is read and run in (`"rm -rf ~ \\u202e gnp.exe"`). Whatever the TUI paints and `agent -p` prints to
a terminal that the program did not write itself goes through one of these two:

- `printable(text)`, to read (answers, thinking, tool output, notices): a complete escape sequence
  goes whole (a colour code in a tool's output leaves nothing behind), then every other control
  character but \\n and \\t; \\r\\n becomes \\n, and a lone \\r goes (it returns to the start of
  the line, and what follows prints over what was there).
- `revealed(text)`, to judge (the permission question, a tool call's line): nothing goes, each
  control character but \\n and \\t is shown as its escape (`\\x1b`, `\\r`), so the person sees
  the command as bash will get it, ESC and all.

Both show bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) as `\\u202e`;
`revealed` also shows every other invisible format character so (zero-width spaces and joiners,
U+FEFF, the soft hyphen, tag characters): a name that looks like another must not pass for it.
Prose keeps those, or emoji sequences and scripts that need joiners would break.
"""

from __future__ import annotations

import re
import unicodedata

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but \t and \n, DEL, C1
# a complete escape sequence, 7-bit or 8-bit: CSI; OSC, DCS, SOS, PM and APC up to their terminator
# (one never terminated is not removed: its ESC goes and the rest shows); any other ESC + final byte
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
_UNSAFE = re.compile(f"[{_CONTROLS}{_BIDI}]")
_CONTROL = re.compile(f"[{_CONTROLS}]")
_SHOWN_BIDI = re.compile(f"[{_BIDI}]")


def printable(text: str) -> str:
    """`text` to read on a terminal: escape sequences and control characters removed (\\n and \\t
    kept, \\r\\n as \\n), bidi controls shown as `\\u202e`."""
    if not _UNSAFE.search(text):
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _SHOWN_BIDI.sub(_escape, _CONTROL.sub("", text))


def revealed(text: str) -> str:
    """`text` to judge on a terminal: every control character but \\n and \\t, bidi control and
    invisible format character shown as its escape; nothing removed."""
    if text.isprintable():  # \n, \t and every format character are not
        return text
    return "".join(_escape_char(ch) if _hidden(ch) else ch for ch in text)


def _hidden(ch: str) -> bool:
    if ch in "\n\t":
        return False
    return ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def _escape(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch == "\r":
        return "\\r"
    if code < 0xA0:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
