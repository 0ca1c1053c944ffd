"""An error, with what to do next (ErrorEvent.hint)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from agent_cli.core.printable import printable


class ErrorMessage(Widget):
    DEFAULT_CSS = """
    ErrorMessage {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border: round $error;
        border-title-color: $text-error;
        border-title-style: bold;
    }
    ErrorMessage .error-text { color: $text-error; }
    ErrorMessage .error-hint { color: $text; margin-top: 1; }
    """

    def __init__(self, message: str, hint: str = "", *, title: str = "error", kind: str = "") -> None:
        super().__init__()
        self.message = message
        self.hint = hint
        self.kind = kind
        self.border_title = f"{title} · {kind}" if kind else title

    def compose(self) -> ComposeResult:
        yield Static(Text(printable(self.message)), classes="error-text")
        if self.hint:
            yield Static(Text(f"→ {printable(self.hint)}"), classes="error-hint")
