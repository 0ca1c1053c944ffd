"""A scrollable full-text viewer for long command output (/help, /summary, /memory, /cost, /export)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from agent_cli.core.printable import printable


class TextScreen(ModalScreen[None]):
    CSS_PATH = "text_screen.tcss"
    BINDINGS = [Binding("escape,q", "close", "close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="text-panel") as panel:
            panel.border_title = self.title_text
            panel.border_subtitle = "Esc to close"
            with VerticalScroll(id="text-scroll"):
                yield Markdown(printable(self.text), id="text-body")
            yield Static("↑/↓ PgUp/PgDn to scroll · Esc or q to close", id="text-hint")

    def on_mount(self) -> None:
        self.query_one("#text-scroll", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
