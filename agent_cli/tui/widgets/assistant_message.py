"""The model's answer, as Markdown streamed block by block.

Appending goes through Textual's MarkdownStream, which parses only the tail of the document and
merges fragments that arrive faster than the screen can paint, so a long answer does not re-render
from the top on every token.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantMessage(Widget):
    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 0 0 1;
    }
    AssistantMessage > Markdown {
        margin: 0;
        padding: 0;
        background: transparent;
    }
    AssistantMessage > Markdown > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        super().__init__()
        self._text = text
        self._initial = text
        self._stream: MarkdownStream | None = None
        self.streaming = streaming

    @property
    def text(self) -> str:
        """Everything received so far (the screen may still be catching up while streaming)."""
        return self._text

    def compose(self) -> ComposeResult:
        yield Markdown(self._initial)

    async def append(self, fragment: str) -> None:
        if not fragment:
            return
        self._text += fragment
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(fragment)

    async def finish(self) -> None:
        """Flush what is pending and stop streaming."""
        self.streaming = False
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()

    async def on_unmount(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()
