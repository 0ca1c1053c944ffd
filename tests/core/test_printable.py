"""core/printable.py: what the model or a tool wrote cannot drive the terminal it is shown on."""

from __future__ import annotations

from agent_cli.core.printable import printable, revealed

CLIPBOARD = "\x1b]52;c;ZWNobyBQV05FRAo=\x07"  # OSC 52: writes the clipboard
TITLE = "\x1b]2;hacked title\x1b\\"  # OSC 2: the window title, ended by ST
LINK = "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07"  # OSC 8: a link


def test_printable_removes_whole_sequences_and_every_other_control() -> None:
    text = f"Answer: {CLIPBOARD}{TITLE}{LINK}\x1b[2J\x1b[HFAKE\x9b31m red\x07\x08\x00 end"
    assert printable(text) == "Answer: click meFAKE red end"
    # colour codes in a tool's output leave nothing behind; tabs and newlines stay
    assert printable("\x1b[1;31mFAILED\x1b[0m\ttest_a\n") == "FAILED\ttest_a\n"


def test_printable_keeps_line_ends_sane_and_shows_bidi_controls() -> None:
    assert printable("a\r\nb\rc") == "a\nbc"  # a lone CR would print over the line
    assert printable("invoice_\u202egnp.exe \u2066x\u2069") == "invoice_\\u202egnp.exe \\u2066x\\u2069"
    # prose keeps joiners: an emoji sequence is not broken
    family = "\U0001f468\u200d\U0001f469"
    assert printable(f"hi {family}") == f"hi {family}"
    # an escape split across two streamed fragments leaves no control in either half
    head, tail = printable("see \x1b"), printable("]2;title\x07 done")
    assert "\x1b" not in head + tail and "\x07" not in head + tail


def test_an_unterminated_sequence_loses_its_esc_and_shows_the_rest() -> None:
    assert printable("a \x1b]52;c;abc and more text") == "a 52;c;abc and more text"


def test_revealed_removes_nothing_and_shows_each_control_as_its_escape() -> None:
    command = f"ls {CLIPBOARD}\r\nrm -rf ~ \u202e gnp.exe\u200b"
    assert revealed(command) == ("ls \\x1b]52;c;ZWNobyBQV05FRAo=\\x07\\r\nrm -rf ~ \\u202e gnp.exe\\u200b")
    assert revealed("plain\ttext\nline two") == "plain\ttext\nline two"
    assert revealed("tag\U000e0041") == "tag\\U000e0041"
