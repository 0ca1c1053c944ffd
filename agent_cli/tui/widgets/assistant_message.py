"""The model's answer, as Markdown streamed block by block.

Appending goes through Textual's MarkdownStream, which parses only the tail of the document and
merges fragments that arrive faster than the screen can paint, so a long answer does not re-render
from the top on every token.

A single newline in the model's text stays a line break (as Claude Code and Codex show it), not the
space CommonMark makes of it: the model writes lines it means as lines (an address, a short list
without bullets, a poem), and never wraps its prose by hand.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from agent_cli.core.printable import printable


def _keep_line_breaks(state: StateCore) -> None:
    """A markdown-it core rule: every soft break becomes a hard one."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


def answer_parser() -> MarkdownIt:
    """The parser of the model's answers: Textual's own ("gfm-like"), keeping line breaks."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("keep_line_breaks", _keep_line_breaks)
    return parser


class AssistantMessage(Widget):
    DEFAULT_CSS = """
    AssistantMessage.discarded { opacity: 50%; }  /* streamed by an attempt that failed and was retried */
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
        yield Markdown(printable(self._initial), parser_factory=answer_parser)

    async def append(self, fragment: str) -> None:
        if not fragment:
            return
        self._text += fragment
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(printable(fragment))  # safe in pieces: nothing it keeps is a control

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
