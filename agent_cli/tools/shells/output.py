"""A background shell's output as it streams: written straight to its file in the session store
(`tool-results/<id>.txt`), so `recall` reads every byte while the shell still runs.

Past the storage ceiling (`output_ceiling_chars`, as for bash) the file keeps the head; the last tenth
of the ceiling is kept in memory, and once the shell has ended it is written after a line that says
how much was dropped in between. Memory and disk stay bounded whatever the command prints.

Positions are characters of the stream (what the shell printed, decoded). `read(start, end)` gives
back any span of it: from the file while it is in the head, from memory in the tail, and a `Dropped`
for the part the ceiling let go.
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.files import open_private, private_dir

STORED_TAIL_SHARE = 10  # past the ceiling, the last 1/10 of it is kept (as tools/capture.py does)
MARK_EVERY = 1 << 20  # a (chars, bytes) mark per MiB written: a read seeks to the one before it
READ_BYTES = 1 << 20
_ENCODING, _ERRORS = "utf-8", "surrogatepass"
DROPPED = "\n… [{dropped:,} chars dropped here: the output passed the {ceiling:,}-char storage ceiling] …\n"


@dataclass(frozen=True)
class Dropped:
    """A span of the stream the ceiling let go: `chars` long."""

    chars: int


class ShellOutput:
    def __init__(self, path: Path, ceiling_chars: int) -> None:
        self.path = path
        self.ceiling = max(2 * STORED_TAIL_SHARE, ceiling_chars)
        self._tail_limit = self.ceiling // STORED_TAIL_SHARE
        self._head_limit = self.ceiling - self._tail_limit
        self.total = 0  # chars printed so far
        self.head_chars = 0  # chars in the file (the head)
        self._head_bytes = 0
        self._marks: list[tuple[int, int]] = [(0, 0)]
        self._mark_chars = [0]
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.last_newline = 0  # the stream position just after the last newline
        self.finished = False
        self.error = ""  # why the file stopped taking output (disk full)
        self._decoder = codecs.getincrementaldecoder(_ENCODING)(errors="replace")
        private_dir(path.parent)
        self._fd: int | None = open_private(path, os.O_WRONLY | os.O_EXCL | os.O_APPEND)

    # -- writing ---------------------------------------------------------------------------------
    def feed_bytes(self, data: bytes) -> None:
        self.feed(self._decoder.decode(data))

    def feed(self, text: str) -> None:
        if not text:
            return
        start = self.total
        self.total += len(text)
        newline = text.rfind("\n")
        if newline >= 0:
            self.last_newline = start + newline + 1
        room = self._head_limit - self.head_chars
        if room > 0 and self._fd is not None:
            self._write_head(text[:room])
            text = text[room:]
        if text:
            self._keep_tail(text)

    def _write_head(self, text: str) -> None:
        data = text.encode(_ENCODING, _ERRORS)
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            self.error = f"the output file stopped taking output: {exc.strerror or exc}"
            self._head_limit = self.head_chars  # from here on, only the bounded tail is kept
            self._close_fd()
            self._keep_tail(text)
            return
        self.head_chars += len(text)
        self._head_bytes += len(data)
        if self.head_chars - self._marks[-1][0] >= MARK_EVERY:
            self._marks.append((self.head_chars, self._head_bytes))
            self._mark_chars.append(self.head_chars)

    def _keep_tail(self, text: str) -> None:
        self._tail.append(text)
        self._tail_len += len(text)
        excess = self._tail_len - self._tail_limit
        while excess > 0:
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_len -= len(first)
                excess -= len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_len -= excess
                excess = 0

    def finish(self) -> None:
        """The shell ended: what the decoder held, then the drop line and the tail, go to the file."""
        if self.finished:
            return
        self.feed(self._decoder.decode(b"", final=True))
        self.finished = True
        if self._fd is None:
            return
        dropped = self.dropped
        text = (DROPPED.format(dropped=dropped, ceiling=self.ceiling) if dropped else "") + "".join(
            self._tail
        )
        try:
            if text:
                _write_all(self._fd, text.encode(_ENCODING, _ERRORS))
            os.fsync(self._fd)
        except OSError as exc:
            self.error = f"the end of the output could not be stored: {exc.strerror or exc}"
        self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    # -- reading ---------------------------------------------------------------------------------
    @property
    def tail_start(self) -> int:
        return self.total - self._tail_len

    @property
    def dropped(self) -> int:
        """Chars printed that neither the file nor the tail keeps."""
        return max(0, self.tail_start - self.head_chars)

    def read(self, start: int, end: int | None = None) -> Iterator[str | Dropped]:
        """The stream from `start` to `end` (default: all so far), in pieces."""
        end = self.total if end is None else min(end, self.total)
        position = max(0, start)
        if position < min(end, self.head_chars):
            stop = min(end, self.head_chars)
            yield from self._read_file(position, stop)
            position = stop
        if position >= end:
            return
        tail_start = self.tail_start
        if position < tail_start:
            stop = min(end, tail_start)
            yield Dropped(stop - position)
            position = stop
        skip = position - tail_start
        for chunk in list(self._tail):
            if position >= end:
                break
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            piece = chunk[skip : skip + end - position]
            skip = 0
            position += len(piece)
            yield piece

    def text(self, start: int = 0, end: int | None = None) -> str:
        """A span as one string, a dropped part as the line that says so (bounded spans only)."""
        return "".join(
            DROPPED.format(dropped=p.chars, ceiling=self.ceiling) if isinstance(p, Dropped) else p
            for p in self.read(start, end)
        )

    def _read_file(self, start: int, stop: int) -> Iterator[str]:
        index = bisect.bisect_right(self._mark_chars, start) - 1
        chars, offset = self._marks[index]
        decoder = codecs.getincrementaldecoder(_ENCODING)(errors=_ERRORS)
        with open(self.path, "rb") as stream:  # noqa: PTH123 - a plain binary read from an offset
            stream.seek(offset)
            while chars < stop:
                data = stream.read(READ_BYTES)
                piece = decoder.decode(data, final=not data)
                if not data and not piece:
                    return  # the file is shorter than we wrote: someone cut it
                lo, hi = max(0, start - chars), min(len(piece), stop - chars)
                chars += len(piece)
                if hi > lo:
                    yield piece[lo:hi]


def _write_all(fd: int | None, data: bytes) -> None:
    if fd is None:
        raise OSError("the output file is closed")
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
