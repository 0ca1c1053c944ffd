"""A tool's output as it streams: kept whole in the store before any cap, previewed for the context.

Up to `limits.inline_chars` the output enters the context as it is. Past that, everything is written
to the session store under the call's ref while it streams (memory stays bounded), and the context
gets a `<persisted-output>` element: a head+tail preview, the full size, the path and the ref, so
`recall` pages through the whole output or greps it. Past `limits.ceiling_chars` the store keeps the
head and the last tenth, and says how much was dropped in between. Without a store that can take it
(or when writing fails) the old behaviour stands: head + tail of `inline_chars`, the gap announced.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from agent_cli.core.persisted import join_preview, persisted_element, safe_ref, split_preview
from agent_cli.tools.base import OutputSink, OutputStore, ToolContext
from agent_cli.tools.fs import HeadTail

STORED_TAIL_SHARE = 10  # past the ceiling, the store keeps the last 1/10 of it as the tail
DROPPED = "\n… [{dropped:,} chars dropped here: the output passed the {ceiling:,}-char storage ceiling] …\n"


class _Tail:
    """The last `limit` characters of a stream, in bounded memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._len = 0

    def feed(self, chunk: str) -> None:
        self._parts.append(chunk)
        self._len += len(chunk)
        if self._len > 2 * self.limit + 65_536:
            self._parts = ["".join(self._parts)[-self.limit :]]
            self._len = len(self._parts[0])

    def text(self) -> str:
        return "".join(self._parts)[-self.limit :] if self.limit else ""


@dataclass(frozen=True)
class Captured:
    text: str  # what enters the context
    total_chars: int
    ref: str = ""  # where the full output is ("" when it is inline or could not be stored)
    dropped_chars: int = 0  # past the storage ceiling
    error: str = ""  # why the full output could not be stored


class OutputCapture:
    def __init__(self, ctx: ToolContext) -> None:
        limits = ctx.limits
        self.inline = max(1, limits.inline_chars)
        self.preview = max(2, min(limits.preview_chars, self.inline))
        self.ceiling = max(self.inline, limits.ceiling_chars)
        self._store = ctx.store if isinstance(ctx.store, OutputStore) and ctx.call_id else None
        self.ref = safe_ref(ctx.call_id) if self._store is not None else ""
        self.total = 0
        self.newlines = 0
        self.last_char = ""
        self._whole: list[str] | None = []  # until the output passes `inline`
        self._head_limit = self.preview * 3 // 5
        self._head: list[str] = []
        self._head_len = 0
        self._tail = _Tail(self.preview - self._head_limit)
        self._fallback = HeadTail(self.inline // 2, self.inline - self.inline // 2)
        self._sink: OutputSink | None = None
        self._stored = 0
        self._stored_tail = _Tail(self.ceiling // STORED_TAIL_SHARE)
        self._stored_head_limit = self.ceiling - self.ceiling // STORED_TAIL_SHARE
        self.error = ""

    def feed(self, chunk: str) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        self.newlines += chunk.count("\n")
        self.last_char = chunk[-1]
        self._fallback.feed(chunk)
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(chunk[:room])
            self._head_len += min(room, len(chunk))
        self._tail.feed(chunk)
        if self._whole is not None:
            self._whole.append(chunk)
            if self.total > self.inline:
                whole, self._whole = "".join(self._whole), None
                self._open()
                self._store_chunk(whole)
        else:
            self._store_chunk(chunk)

    def _open(self) -> None:
        if self._store is None:
            return
        try:
            self._sink = self._store.open_output(self.ref)
        except (OSError, ValueError) as exc:
            self.error = f"the full output could not be stored: {exc}"

    def _store_chunk(self, chunk: str) -> None:
        if self._sink is None:
            return
        room = self._stored_head_limit - self._stored
        try:
            if room > 0:
                self._sink.write(chunk[:room])
                self._stored += min(room, len(chunk))
        except OSError as exc:
            self.error = f"the full output could not be stored: {exc}"
            self._abort()
            return
        if len(chunk) > room:
            self._stored_tail.feed(chunk[max(0, room) :])

    def _abort(self) -> None:
        if self._sink is not None:
            with contextlib.suppress(OSError):
                self._sink.abort()
            self._sink = None

    def abort(self) -> None:
        """The call was interrupted: nothing half-written stays in the store."""
        self._abort()

    def lines(self) -> int:
        return self.newlines + (1 if self.total and self.last_char != "\n" else 0)

    def finish(self) -> Captured:
        if self._whole is not None:
            return Captured("".join(self._whole), self.total)
        if self._sink is None:
            note = f"\n({self.error})" if self.error else ""
            return Captured(self._fallback.text() + note, self.total, error=self.error)
        tail = self._stored_tail.text()
        dropped = max(0, self.total - self._stored - len(tail))
        try:
            if dropped or tail:
                self._sink.write(
                    (DROPPED.format(dropped=dropped, ceiling=self.ceiling) if dropped else "") + tail
                )
            path = self._sink.close()
        except OSError as exc:
            self.error = f"the full output could not be stored: {exc}"
            self._abort()
            return Captured(self._fallback.text() + f"\n({self.error})", self.total, error=self.error)
        head_tail = "".join(self._head) + self._tail.text()
        head, tail_part = split_preview(head_tail, self.preview)
        body = join_preview(head, self.total - len(head) - len(tail_part), tail_part)
        text = persisted_element(
            self.ref, body, chars=self.total, lines=self.lines(), path=str(path) if path else None
        )
        if dropped:
            text += (
                f"\nThe output passed the storage ceiling of {self.ceiling:,} chars: {dropped:,} chars in the "
                "middle were dropped; the store keeps its head and tail."
            )
        return Captured(text, self.total, ref=self.ref, dropped_chars=dropped)
