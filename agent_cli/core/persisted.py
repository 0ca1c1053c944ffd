"""The `<persisted-output>` element: what stays in the context in place of an output kept in the store.

Shared by T0 offload (context/offload.py) and by tools that keep their full output in the store
before any cap (tools/capture.py), so both write the very same shape and every tier recognizes it.
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass

from agent_cli.core.tags import attr, escape_tags

PERSISTED_TAG = "persisted-output"
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
RECALL_LINE = (
    "Too large to keep in the context ({chars:,} chars, {lines:,} lines): the preview above shows its "
    'head and tail. Use the recall tool with ref "{ref}" to read the rest (offset/limit to page, '
    "pattern= for matching lines)."
)


def is_persisted(text: str) -> bool:
    return text.startswith(f"<{PERSISTED_TAG} ")


_ELEMENT = re.compile(
    rf'<{PERSISTED_TAG} ref="(?P<ref>[^"]*)"(?: path="(?P<path>[^"]*)")? chars="(?P<chars>\d+)" '
    rf'lines="(?P<lines>\d+)">\n(?P<body>.*?)\n?</{PERSISTED_TAG}>(?:\nToo large to keep in the context[^\n]*)?',
    re.DOTALL,
)


@dataclass(frozen=True)
class PersistedOutput:
    """What a `<persisted-output>` element says: where the original is, its size, and the preview."""

    ref: str
    path: str
    chars: int
    lines: int
    preview: str

    @property
    def where(self) -> str:
        """One line for a person: how big the original is and where it is kept."""
        at = f" at {self.path}" if self.path else ""
        return f"[whole output: {self.chars:,} chars, {self.lines:,} lines, kept as ref {self.ref}{at}]"


def parse_persisted(text: str) -> PersistedOutput | None:
    """The first `<persisted-output>` element in `text` (None when there is none)."""
    match = _ELEMENT.search(text)
    return _parsed(match) if match else None


def readable(text: str) -> str:
    """`text` for a person's eyes (the TUI, an export): each element as its preview and one line
    saying where the whole original is, instead of the markup the model reads."""
    if f"<{PERSISTED_TAG} " not in text:
        return text
    return _ELEMENT.sub(lambda m: f"{(p := _parsed(m)).preview}\n{p.where}", text)


def _parsed(match: re.Match[str]) -> PersistedOutput:
    return PersistedOutput(
        html.unescape(match["ref"]),
        html.unescape(match["path"] or ""),
        int(match["chars"]),
        int(match["lines"]),
        match["body"],
    )


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def split_preview(text: str, limit: int) -> tuple[str, str]:
    """(head, tail) of `text` within about `limit` chars together, cut at line ends (3:2)."""
    head_budget = max(1, limit * 3 // 5)
    tail_budget = max(1, limit - head_budget)
    head = text[:head_budget]
    cut = head.rfind("\n")
    if cut >= head_budget // 2:
        head = head[: cut + 1]
    tail = text[-tail_budget:]
    cut = tail.find("\n")
    if 0 <= cut < tail_budget // 2:
        tail = tail[cut + 1 :]
    return head, tail


def join_preview(head: str, omitted: int, tail: str) -> str:
    return f"{head.rstrip(chr(10))}\n… {omitted:,} chars omitted …\n{tail}"


def preview(text: str, limit: int) -> str:
    """Head and tail of `text` within about `limit` chars, cut at line ends, the gap announced."""
    if len(text) <= limit:
        return text
    head, tail = split_preview(text, limit)
    return join_preview(head, len(text) - len(head) - len(tail), tail)


def persisted_element(ref: str, body: str, *, chars: int, lines: int, path: str | None = None) -> str:
    """The element for an original of `chars`/`lines` kept under `ref` (at `path`), showing `body`
    (a preview of the original, escaped: it cannot close this element or open another of ours)."""
    where = f' path="{attr(path)}"' if path else ""
    notice = RECALL_LINE.format(chars=chars, lines=lines, ref=ref)
    return (
        f'<{PERSISTED_TAG} ref="{ref}"{where} chars="{chars}" lines="{lines}">\n'
        f"{escape_tags(body.rstrip(chr(10)))}\n</{PERSISTED_TAG}>\n{notice}"
    )


def persisted_text(ref: str, text: str, path: str | None, preview_chars: int) -> str:
    """What stays in the context in place of `text` (kept under `ref`)."""
    return persisted_element(
        ref, preview(text, preview_chars), chars=len(text), lines=count_lines(text), path=path
    )


# -- refs --------------------------------------------------------------------------------------------


def is_valid_ref(ref: str) -> bool:
    """A ref is a safe file name: letters, digits, `_ . -`, not starting with a dot, <= 200 chars."""
    return bool(_REF.match(ref)) and ".." not in ref


def validate_ref(ref: str) -> str:
    if not isinstance(ref, str) or not is_valid_ref(ref):
        raise ValueError(
            f"invalid ref {ref!r}: a ref is 1-200 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit, without '..'"
        )
    return ref


def safe_ref(name: str) -> str:
    """`name` when it is a valid ref, else a valid ref derived from it (stable, collision-safe)."""
    if is_valid_ref(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).replace("..", "_").lstrip("._-")[:160]
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{cleaned}-{digest}" if cleaned else f"ref-{digest}"
