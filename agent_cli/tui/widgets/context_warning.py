"""The line above the status bar that appears once the context passes the warning threshold."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from agent_cli.core.events import ContextStatus
from agent_cli.tui.widgets.context_gauge import warning_text


class ContextWarning(Static):
    DEFAULT_CSS = """
    ContextWarning {
        height: auto;
        padding: 0 1;
        color: $text-warning;
        background: $warning 15%;
        display: none;
    }
    ContextWarning.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.text = ""

    def set_status(self, status: ContextStatus) -> None:
        self.text = warning_text(status)
        self.set_class(bool(self.text), "-shown")
        self.update(Text(self.text))
