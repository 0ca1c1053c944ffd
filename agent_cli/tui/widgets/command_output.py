"""The text a slash command answered with (CommandResult.text), shown as Markdown."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown

from agent_cli.core.printable import printable


class CommandOutput(Widget):
    DEFAULT_CSS = """
    CommandOutput {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border: round $secondary 60%;
        border-title-color: $text-secondary;
    }
    CommandOutput.-error { border: round $error; border-title-color: $text-error; }
    CommandOutput > Markdown { margin: 0; padding: 0; background: transparent; }
    CommandOutput > Markdown > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, name: str, text: str, *, is_error: bool = False) -> None:
        super().__init__(classes="-error" if is_error else None)
        self.command = name
        self.text = text
        self.is_error = is_error
        self.border_title = f"/{name}" + (" · error" if is_error else "")

    def compose(self) -> ComposeResult:
        yield Markdown(printable(self.text))
