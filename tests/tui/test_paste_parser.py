"""The fast bracketed-paste parser: one Paste with exactly what was pasted, however the terminal cut
the input into reads, and otherwise the very events Textual's own parser emits."""

from __future__ import annotations

import os
import queue
import signal
import threading
from collections.abc import Callable, Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events
from textual._xterm_parser import XTermParser
from textual.message import Message

from agent_cli.tui.app import create_app
from agent_cli.tui.driver import paste_driver_class
from agent_cli.tui.paste_driver import FastPasteDriver
from agent_cli.tui.paste_parser import FastPasteParser, carried

START, END = "\x1b[200~", "\x1b[201~"
LINE = "0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefg\r"


def run(parser: XTermParser, chunks: Iterable[str]) -> list[str]:
    """Every event for `chunks` fed one read at a time, then the end of input, as comparable text."""
    out = [repr(event) for chunk in chunks if chunk for event in parser.feed(chunk)]
    return out + [repr(event) for event in parser.feed("")]


def stock(data: str) -> list[str]:
    return run(XTermParser(), [data])


def pastes(messages: Iterable[Message]) -> list[str]:
    return [m.text for m in messages if isinstance(m, events.Paste)]


MIXED = f"ab\x1b[Ac{START}hello\rworld\x00!{END}x\x1b[<0;3;4M\x1b[I{START}{END}q\x1bz{START}two{END}\x1b"


def test_keys_around_pastes_come_in_order_with_the_text_exact() -> None:
    parsed = run(FastPasteParser(), [MIXED])
    assert parsed == stock(MIXED)  # keys, mouse, focus: what Textual's own parser makes of it
    names = [event.split("(")[0] for event in parsed]
    assert names[:6] == ["Key", "Key", "Key", "Key", "Paste", "Key"] and names[-2:] == ["Paste", "Key"]
    assert "Paste(text='hello\\rworld!')" in parsed  # NUL dropped, CR kept, as Textual does
    assert "Paste(text='two')" in parsed and "Paste(text='')" in parsed


def test_markers_split_at_every_position_give_the_same_events() -> None:
    expected = stock(MIXED)
    for first in range(1, len(MIXED)):
        for second in range(first, len(MIXED)):
            chunks = [MIXED[:first], MIXED[first:second], MIXED[second:]]
            assert run(FastPasteParser(), chunks) == expected, chunks


KEYS = st.sampled_from(
    [
        "a",
        "Z",
        " ",
        "\r",
        "\t",
        "\x7f",
        "\x03",
        "\x1b",
        "\x1bx",
        "\x00",
        "\x1b[A",
        "\x1b[1;5C",
        "\x1b[I",
        "\x1b[O",
    ]
)
MOUSE = st.sampled_from(["\x1b[<0;10;5M", "\x1b[<0;10;5m", "\x1b[<35;2;3M", "\x1b[<64;1;1M"])
PASTE_TEXT = st.text(alphabet=st.characters(blacklist_characters="\x1b", codec="utf-8"), max_size=60)
PIECES = st.one_of(KEYS, MOUSE, PASTE_TEXT.map(lambda text: f"{START}{text}{END}"))


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(PIECES, max_size=8), cuts=st.lists(st.integers(min_value=0), max_size=6))
def test_any_input_cut_into_any_reads_parses_as_textual_parses_it_whole(
    pieces: list[str], cuts: list[int]
) -> None:
    data = "".join(pieces)
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert run(FastPasteParser(), chunks) == stock(data)


def test_a_big_paste_is_never_walked_by_textuals_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[int] = []
    original = XTermParser.feed

    def counting_feed(self: XTermParser, data: str) -> Iterable[Message]:
        walked.append(len(data))
        return original(self, data)

    monkeypatch.setattr(XTermParser, "feed", counting_feed)
    text = LINE * 12_000  # 1 MB
    data = f"x{START}{text}{END}y"
    reads = [data[at : at + 4_096] for at in range(0, len(data), 4_096)]
    parser = FastPasteParser()
    out = [m for read in reads for m in parser.feed(read)]
    assert pastes(out) == [text]  # one Paste, byte for byte
    assert [m.key for m in out if isinstance(m, events.Key)] == ["x", "y"]
    assert sum(walked) < 40  # Textual's parser saw the keys and the markers, not the megabyte


def test_an_escape_inside_a_paste_stays_in_the_text() -> None:
    text = "red: \x1b[31mwarning\x1b[0m done"
    assert pastes(FastPasteParser().feed(f"{START}{text}{END}")) == [text]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_paste_that_never_ends_is_sent_after_a_quiet_second_and_esc_ends_it() -> None:
    clock = Clock()
    parser = FastPasteParser(clock=clock, stall_seconds=1.0)
    assert [m.key for m in parser.feed(f"a{START}first part") if isinstance(m, events.Key)] == ["a"]
    assert pastes(parser.tick()) == []  # still arriving
    clock.now = 1.5
    assert pastes(parser.tick()) == ["first part"]  # nothing lost, shown while the person waits
    assert list(parser.tick()) == []  # sent once
    assert pastes(parser.feed(" and more")) == []  # it resumes: still a paste, not typing
    clock.now = 3.0
    assert pastes(parser.tick()) == [" and more"]
    out = list(parser.feed("\x1b"))  # Esc alone, after the quiet spell
    assert not parser.pasting and pastes(out) == []
    assert [m.key for m in parser.feed("") if isinstance(m, events.Key)] == ["escape"]  # a key again


def test_ctrl_c_alone_ends_a_stalled_paste_and_a_paste_cut_by_end_of_input_is_kept() -> None:
    clock = Clock()
    parser = FastPasteParser(clock=clock)
    list(parser.feed(f"{START}text"))
    clock.now = 5.0
    assert pastes(parser.tick()) == ["text"]
    assert [m.key for m in parser.feed("\x03") if isinstance(m, events.Key)] == ["ctrl+c"]
    parser = FastPasteParser(clock=clock)
    list(parser.feed(f"{START}text"))
    clock.now = 10.0
    assert pastes(parser.tick()) == ["text"]
    kitty_escape = "\x1b[27u"  # Esc with the kitty keyboard protocol on
    assert [m.key for m in parser.feed(kitty_escape) if isinstance(m, events.Key)] == ["escape"]
    parser = FastPasteParser(clock=clock)
    assert pastes(parser.feed(f"{START}cut short\x1b[20")) == []
    assert pastes(parser.feed("")) == ["cut short\x1b[20"]


def test_a_half_marker_that_textual_gave_up_on_does_not_start_a_paste(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr("textual._parser.get_time", clock)
    monkeypatch.setattr("agent_cli.tui.paste_parser.get_time", clock)
    parser = FastPasteParser(clock=clock)
    assert list(parser.feed("\x1b[20")) == []
    clock.now = 1.0  # past the escape delay: Textual reports what it had as keys
    assert [m for m in parser.tick() if isinstance(m, events.Key)]
    out = list(parser.feed("0~hello"))
    assert not parser.pasting and pastes(out) == []
    assert "".join(m.character or "" for m in out if isinstance(m, events.Key)) == "0~hello"


def test_carried_finds_a_marker_cut_at_the_end_of_a_read() -> None:
    assert [carried("text" + START[:size], START) for size in range(len(START))] == [0, 1, 2, 3, 4, 5]
    assert carried("text" + START, START) == 0 and carried("\x1b[2x", START) == 0


def test_the_app_reads_the_terminal_with_the_fast_paste_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    assert create_app().driver_class is FastPasteDriver
    monkeypatch.setattr("textual.constants.DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert paste_driver_class() is None  # a driver chosen in the environment is left alone


class RecordingDriver(FastPasteDriver):
    def __init__(self, fileno: int, received: Callable[[Message], None]) -> None:
        handlers = signal.getsignal(signal.SIGTSTP), signal.getsignal(signal.SIGCONT)
        super().__init__(create_app())
        signal.signal(signal.SIGTSTP, handlers[0])  # the driver sets job-control handlers: not in tests
        signal.signal(signal.SIGCONT, handlers[1])
        self.fileno = fileno
        self._received = received

    def process_message(self, message: Message) -> None:
        self._received(message)


async def test_the_drivers_input_thread_turns_a_streamed_paste_into_one_event() -> None:
    read_end, write_end = os.pipe()
    received: queue.Queue[Message] = queue.Queue()
    driver = RecordingDriver(read_end, received.put)
    reader = threading.Thread(target=driver.run_input_thread, daemon=True)
    reader.start()
    text = LINE * 12_000 + "é ✓"  # 1 MB through a 64 kB pipe: many reads, UTF-8 cut anywhere
    try:
        os.write(write_end, b"a")
        with os.fdopen(write_end, "wb", closefd=False) as pipe:
            pipe.write(f"{START}{text}{END}b".encode())
        got = [received.get(timeout=60) for _ in range(3)]
    finally:
        driver.exit_event.set()
        reader.join(timeout=60)
        os.close(write_end)
        os.close(read_end)
    assert [type(m).__name__ for m in got] == ["Key", "Paste", "Key"]
    assert pastes(got) == [text] and [m.key for m in got if isinstance(m, events.Key)] == ["a", "b"]
