"""Text that UTF-8 cannot write: lone surrogates.

Python decodes bytes that are not UTF-8 with `surrogateescape` in the places the operating system
hands over names and words: the command line's arguments, file names (os.scandir), what a program
prints when read that way. Such text holds lone surrogates (U+DC80..U+DCFF), which no UTF-8 encoder
takes: one that reached the session log or a request would fail that request and every later one of
the session. So text is scrubbed where it comes in (`scrub`), a file name is shown with its odd
bytes as `\\xNN` (`shown_name`; `name_from_shown` finds the file again from what the model passes
back), and the log's writer and `Request` scrub whatever is left (`scrub_json`), as a backstop.

A file that is UTF-8 but for a few bytes is read with them as such surrogates (tools/encoding.py), so
that an edit writes them back as they were: the model sees them as `\\xNN` (`shown_bytes`), and what
it passes back is turned into them again (`bytes_from_shown`).
"""

from __future__ import annotations

import os
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")  # only what `shown_name` writes: bytes >= 0x80
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # a byte >= 0x80 decoded with surrogateescape


def has_surrogates(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")  # twice as fast as searching for one
    except UnicodeEncodeError:
        return True
    return False


def scrub(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, as a decoder with errors="replace" leaves bad bytes."""
    return _SURROGATE.sub("\ufffd", text) if has_surrogates(text) else text


def scrub_json(value: Any) -> Any:
    """A JSON-shaped value (dicts, lists, tuples, strings) with every string scrubbed, keys too.
    What needs nothing is given back as it is (the same object), so the common case copies nothing."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        pairs = [(scrub_json(k), scrub_json(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, list | tuple):
        items = [scrub_json(v) for v in value]
        if all(v is v0 for v, v0 in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    return value


def shown_name(name: str) -> str:
    """A file name or path as text: the bytes of it that are not UTF-8 written `\\xNN`
    (`caf\\xe9.txt`), which `name_from_shown` turns back into the name."""
    if not has_surrogates(name):
        return name
    try:
        raw = os.fsencode(name)
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return scrub(name)
    return raw.decode("utf-8", "backslashreplace")


def name_from_shown(shown: str) -> str | None:
    """The file name `shown_name` showed as `shown` (None when it holds no `\\xNN` of a byte that is
    not UTF-8)."""
    if "\\x" not in shown or not _BYTE_ESCAPE.search(shown):
        return None
    raw = _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), shown)
    try:
        return os.fsdecode(os.fsencode(raw))  # bytes that do make UTF-8 together become their character
    except UnicodeError:
        return None


def shown_bytes(text: str) -> str:
    """`text` with each byte that `surrogateescape` kept (U+DC80..U+DCFF) written `\\xNN`."""
    if not has_surrogates(text):
        return text
    return _ESCAPED_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)


def bytes_from_shown(text: str) -> str:
    """`text` with each `\\xNN` of a byte >= 0x80 as the surrogate `shown_bytes` showed that way."""
    if "\\x" not in text:
        return text
    return _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)
