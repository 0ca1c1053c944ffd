"""The model's thinking: collapsed to one line, expandable to read it all."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Collapsible, Static

from agent_cli.core.printable import printable


class Thinking(Collapsible):
    DEFAULT_CSS = """
    Thinking.discarded { opacity: 50%; }  /* streamed by an attempt that failed and was retried */
    Thinking {
        margin: 1 0 0 0;
        padding: 0;
        border: none;
        background: transparent;
        color: $text-muted;
    }
    Thinking > Contents { padding: 0 0 0 3; }
    Thinking CollapsibleTitle { color: $text-muted; text-style: italic; padding: 0 1; }
    """

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        self._text = text
        self.streaming = streaming
        self._body = Static(Text(printable(text)), classes="thinking-text")
        super().__init__(self._body, title=self._make_title(), collapsed=True)

    @property
    def text(self) -> str:
        return self._text

    def _make_title(self) -> str:
        if self.streaming:
            return "✻ thinking…"
        return f"✻ thought ({len(self._text.split())} words)"

    def append(self, fragment: str) -> None:
        self._text += fragment
        self._body.update(Text(printable(self._text)))

    def finish(self) -> None:
        self.streaming = False
        self.title = self._make_title()
