"""The person's prompt, as it appears in the transcript."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent_cli.core.printable import printable
from agent_cli.tui.paste import format_size, line_count, normalize_newlines

SHOWN_CHARS = 4_000


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: outer $primary;
        background: $primary 10%;
        color: $text;
    }
    UserMessage.-command {
        border-left: outer $secondary;
        background: $secondary 10%;
    }
    """

    def __init__(self, text: str, *, id: str | None = None) -> None:
        self.text = text
        classes = "-command" if text.startswith("/") else None
        super().__init__(Text(printable(shown_text(text))), id=id, classes=classes)


def shown_text(text: str) -> str:
    """A prompt as the transcript shows it: a huge one (a paste, painted from a resumed log) is cut,
    with its full size said, so painting it stays quick."""
    if len(text) <= SHOWN_CHARS:
        return text
    rest = text[SHOWN_CHARS:]
    lines = line_count(normalize_newlines(rest))
    size = format_size(len(rest.encode("utf-8", "surrogatepass")))
    more = f"{size} more, {lines:,} line{'s' * (lines != 1)}"
    return f"{text[:SHOWN_CHARS]}… [{more}]"
