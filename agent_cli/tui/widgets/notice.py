"""One-line information or warning in the transcript: retries, cache-thrash warnings, interrupts."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.widgets import Static

from agent_cli.core.printable import printable

Level = Literal["info", "warning", "error"]
_ICONS: dict[str, str] = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class Notice(Static):
    DEFAULT_CSS = """
    Notice {
        padding: 0 1;
        color: $text-muted;
    }
    Notice.-warning { color: $text-warning; }
    Notice.-error { color: $text-error; }
    """

    def __init__(self, text: str, level: Level = "info") -> None:
        self.text = text
        self.level = level
        icon = _ICONS.get(level, "ℹ")
        super().__init__(Text(f"{icon} {printable(text)}"), classes=f"-{level}")
