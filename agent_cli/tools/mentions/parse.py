"""Finding `@` mentions and pasted image paths in the words a person typed.

`@src/app.py`, `@src/app.py#L20-45` (lines 20 to 45), `@src/app.py#L20` (one line), `@"a file.txt"`
(quoted, for a name a bare mention stops at: a space, `#`, quotes, brackets, … inside a quoted one
`\\"` is a `"` and `\\\\` a `\\`). An `@` right after a letter or digit (an e-mail address) is not a
mention. Trailing punctuation (`@app.py.` at the end of a sentence) is not part of a bare path.
`mention_text` writes the `@` word that reads back as a given path (what `@` completion puts in).

A pasted image path is an absolute one (`/…`, `~/…`, `file:///…`; quoted, or with `\\ ` for spaces,
as terminals paste a dropped file) whose name ends in .png, .jpg, .jpeg, .gif or .webp. A relative
image name in a sentence ("the logo.png is off") is not attached: `@logo.png` is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from agent_cli.core.images import EXTENSIONS

_MENTION = re.compile(
    r"(?<![\w@])@(?:\"(?P<quoted>(?:\\[^\n]|[^\"\\\n])+)\"|(?P<bare>(?:\\ |[^\s\"'`,;()\[\]{}<>#@])(?:\\ |[^\s\"'`,;()\[\]{}<>#])*))"
    r"(?:#L(?P<first>\d+)(?:-L?(?P<last>\d+))?)?"
)
_PASTED = re.compile(
    r"(?<!\S)(?:'(?P<single>(?:~|file://)?/[^'\n]+)'|\"(?P<double>(?:~|file://)?/[^\"\n]+)\""
    r"|(?P<bare>(?:~|file://)?/(?:\\ |[^\s])+))"
)
_TRAILING = ".,:;!?"
_BARE = re.compile(r"[^\s\"'`,;()\[\]{}<>#@\\][^\s\"'`,;()\[\]{}<>#\\]*")  # a path written as it is
_QUOTED_ESCAPE = re.compile(r"\\([\\\" ])")  # `\"`, `\\` and the older `\ ` inside quotes


@dataclass(frozen=True)
class Mention:
    text: str  # as typed: `@src/app.py#L20-45`
    path: str  # `src/app.py`
    start: int  # where it is in the words
    end: int
    first: int | None = None  # a line range, when given
    last: int | None = None
    pasted: bool = False  # an absolute image path pasted into the prompt, not an `@` mention

    @property
    def label(self) -> str:
        """How the person sees it named: the mention, or the pasted path."""
        return self.text if not self.pasted else self.path


def find_mentions(words: str) -> list[Mention]:
    """Every `@` mention and pasted image path in `words`, in order."""
    found: list[Mention] = []
    for match in _MENTION.finditer(words):
        path = match.group("bare") or ""
        end = match.end()
        if match.group("bare") and not match.group("first"):
            stripped = path.rstrip(_TRAILING)
            end -= len(path) - len(stripped)
            path = stripped
        path = path.replace("\\ ", " ")
        if match.group("quoted"):
            path = _QUOTED_ESCAPE.sub(r"\1", match.group("quoted"))
        if not path:
            continue
        first = int(match.group("first")) if match.group("first") else None
        last = int(match.group("last")) if match.group("last") else first
        if first is not None and last is not None and last < first:
            first, last = last, first
        found.append(Mention(words[match.start() : end], path, match.start(), end, first, last))
    taken = [(m.start, m.end) for m in found]
    for match in _PASTED.finditer(words):
        if any(a <= match.start() < b for a, b in taken):
            continue
        raw = match.group("single") or match.group("double") or match.group("bare") or ""
        path = raw.rstrip(_TRAILING) if match.group("bare") else raw
        if path.startswith("file://"):
            path = unquote(path.removeprefix("file://"))
        path = path.replace("\\ ", " ")
        if "." + path.rsplit(".", 1)[-1].lower() in EXTENSIONS and "." in path:
            found.append(Mention(match.group(0), path, match.start(), match.end(), pasted=True))
    return sorted(found, key=lambda m: m.start)


def mention_text(path: str) -> str:
    """The `@` word `find_mentions` reads back as `path`: bare when it can be (`@src/app.py`), else
    quoted with `"` and `\\` escaped (`@"my notes.txt"`, `@"weird#name.py"`, `@"@at.txt"`). A path with
    a line break cannot be mentioned: "" for it."""
    if "\n" in path or not path:
        return ""
    if _BARE.fullmatch(path) and path[-1] not in _TRAILING:
        return "@" + path
    return '@"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mention_at(text: str, cursor: int) -> tuple[int, str] | None:
    """The `@` word the cursor is in (being typed): (where its `@` is, what follows it so far)."""
    head = text[:cursor]
    at = head.rfind("@")
    if at < 0 or (at > 0 and (head[at - 1].isalnum() or head[at - 1] in "@_")):
        return None
    query = head[at + 1 :]
    if any(c.isspace() for c in query) or '"' in query or "#" in query:
        return None
    return at, query
