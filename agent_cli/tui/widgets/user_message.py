"""The person's prompt, as it appears in the transcript."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


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
        super().__init__(Text(text), id=id, classes=classes)
