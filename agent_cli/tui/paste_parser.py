"""Bracketed paste at the speed of `str.find`.

Textual's `XTermParser` walks its input one character at a time through a generator; a 10 MB
bracketed paste takes seconds before its single `events.Paste` arrives. `FastPasteParser` is that
parser with a fast path: input outside a paste goes through Textual's parser unchanged (keys,
mouse, focus, Esc, resize reports: byte for byte the same events), up to and including the
`ESC[200~` that opens a paste. From there the chunks are only searched for `ESC[201~` and kept in a
list; at the end marker Textual's parser leaves its paste mode (it gets the marker, nothing else) and
one `events.Paste` with the whole text goes out. A marker split over two reads is found: the few
characters at the end of a read that could begin one are carried into the next.

The text is exactly what came between the markers, NUL removed as Textual does. (Textual's own
parser loses the characters after an ESC inside a paste, and turns them into key presses; here they
stay in the text.)

A paste whose end marker never comes (a broken terminal, a truncated stream) does not make the app
deaf: after `stall_seconds` without input, what arrived so far goes out as a paste (nothing is lost;
the prompt shows it as a chip), and the parser keeps collecting until the end marker. Esc or Ctrl+C,
pressed on their own while such a paste is stalled, end it and act as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from textual import events
from textual._time import get_time
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.message import Message

PASTE_STALL_SECONDS = 1.0
# Esc and Ctrl+C, plain and as the kitty keyboard protocol (which Textual turns on) sends them:
# arriving alone, they end a stalled paste
RESCUE_KEYS = frozenset({"\x1b", "\x03", "\x1b[27u", "\x1b[99;5u"})


def carried(text: str, marker: str) -> int:
    """How many characters at the end of `text` could be the beginning of `marker`."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


class FastPasteParser(XTermParser):
    def __init__(
        self,
        debug: bool = False,
        *,
        clock: Callable[[], float] = get_time,
        stall_seconds: float = PASTE_STALL_SECONDS,
    ) -> None:
        super().__init__(debug)
        self._clock = clock
        self._stall_seconds = stall_seconds
        self._pasting = False
        self._chunks: list[str] = []
        self._carry = ""  # the end of the last read, possibly the first part of a marker
        self._last_input = clock()
        self._stalled = False  # the paste went quiet and what had arrived was sent
        self._sent_part = False  # part of this paste already went out

    @property
    def pasting(self) -> bool:
        return self._pasting

    def feed(self, data: str) -> Iterator[Message]:
        if not data:  # end of input: what was pasted still goes out
            if self._pasting:
                yield from self._end_paste()
            yield from super().feed(data)
            return
        self._last_input = self._clock()
        if self._pasting and self._stalled and data in RESCUE_KEYS:
            yield from self._end_paste()
        self._stalled = False
        while data:
            if self._pasting:
                data = yield from self._collect(data)
            else:
                data = yield from self._until_paste(data)

    def _until_paste(self, data: str) -> Iterator[Message]:
        """Textual parses everything up to and including a paste's start marker; the rest is returned."""
        seen = self._carry + data  # the carry was parsed already; it may begin the marker
        at = seen.find(BRACKETED_PASTE_START)
        if at < 0:
            yield from super().feed(data)
            self._carry = seen[len(seen) - carried(seen, BRACKETED_PASTE_START) :]
            return ""
        start_ends = at + len(BRACKETED_PASTE_START) - len(self._carry)
        yield from super().feed(data[:start_ends])  # Textual's parser is now in its paste mode
        self._carry = ""
        self._pasting, self._sent_part = True, False
        return data[start_ends:]

    def _collect(self, data: str) -> Iterator[Message]:
        """Keep the paste's text up to its end marker; the rest is returned."""
        seen = self._carry + data
        at = seen.find(BRACKETED_PASTE_END)
        if at < 0:
            keep = carried(seen, BRACKETED_PASTE_END)
            self._chunks.append(seen[: len(seen) - keep])
            self._carry = seen[len(seen) - keep :]
            return ""
        self._chunks.append(seen[:at])
        self._carry = ""
        yield from self._end_paste()
        return seen[at + len(BRACKETED_PASTE_END) :]

    def _end_paste(self) -> Iterator[Message]:
        text = self._take_text() + self._carry  # at end of input or on Esc, a carried part is text
        self._carry = ""
        self._pasting = False
        for token in super().feed(BRACKETED_PASTE_END):  # Textual leaves its paste mode: an empty Paste
            if not isinstance(token, events.Paste):
                yield token
            elif text or not self._sent_part:
                yield events.Paste(text)

    def _take_text(self) -> str:
        text = "".join(self._chunks).replace("\x00", "")  # NUL removed, as Textual does
        self._chunks = []
        return text

    def tick(self) -> Iterator[Message]:
        if self._timeout_time is not None and get_time() >= self._timeout_time:
            self._carry = ""  # Textual gives up on a half sequence: it cannot begin a paste any more
        if self._pasting and not self._stalled and self._clock() - self._last_input >= self._stall_seconds:
            self._stalled = True
            if text := self._take_text():
                self._sent_part = True
                yield events.Paste(text)
        yield from super().tick()
