"""How bash reads a word: quote removal, ANSI-C strings (`$'\\x72m'` is `rm`), and whether an unquoted
glob or brace expansion may make it other words."""

from __future__ import annotations

import re


def unquote(raw: str) -> str:
    """A word's value after bash's quote removal (bashlex's is wrong for `'a'\\''b'`)."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(raw):
        char = raw[i]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
        elif char == "\\":
            nxt = raw[i + 1 : i + 2]
            if nxt == "\n":
                pass  # a line continuation
            elif quote == '"' and nxt not in ('"', "\\", "$", "`"):
                out.append(char + nxt)
            else:
                out.append(nxt)
            i += 2
            continue
        elif char == '"':
            quote = "" if quote else '"'
        elif char == "'" and not quote:
            quote = "'"
        else:
            out.append(char)
        i += 1
    return "".join(out)


def unquoted_glob(raw: str) -> bool:
    """Whether a word as written has an unquoted `*`, `?`, `[` or a brace expansion (`{a,b}`, `{1..3}`)."""
    quote = ""
    i = 0
    brace = -1
    while i < len(raw):
        char = raw[i]
        if char == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "*?" or (char == "[" and "]" in raw[i + 1 :]):
            return True
        elif char == "{":
            brace = i
        elif char == "}" and brace >= 0:
            inside = raw[brace + 1 : i]
            if "," in inside or ".." in inside:
                return True
        i += 1
    return False


_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S)


def decode_ansi_c(text: str) -> str:
    """The value of `$'text'` as bash computes it."""

    def one(match: re.Match[str]) -> str:
        esc = match.group(1)
        head = esc[0]
        if head in _ANSI_SIMPLE and len(esc) == 1:
            return _ANSI_SIMPLE[head]
        if head in "xuU" and len(esc) > 1:
            return chr(int(esc[1:], 16))
        if head.isdigit() and head in "01234567":
            return chr(int(esc, 8) & 0xFF)
        if head == "c" and len(esc) == 2:
            return chr(ord(esc[1].upper()) & 0x1F)
        return "\\" + esc  # an unknown escape stays as written

    return _ANSI_ESCAPE.sub(one, text)
