"""What the prompt's `@` mentions and pasted image paths will attach, before it is sent: one chip per
mention with its token cost (`@app.py · 412 tokens`, `shot.png · image ≈1,533 tokens`), or, in the
warning colour, the line that says why it will not be attached (`@nope.py: no such file`).
Hidden when the prompt mentions nothing."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from agent_cli.agent.api import MentionInfo
from agent_cli.tui.formatting import format_tokens


class MentionBar(Static):
    DEFAULT_CSS = """
    MentionBar {
        height: auto;
        padding: 0 1;
        color: $text-muted;
        display: none;
    }
    MentionBar.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.infos: tuple[MentionInfo, ...] = ()

    def show(self, infos: Sequence[MentionInfo]) -> None:
        self.infos = tuple(infos)
        self.update(chips(self.infos))
        self.set_class(bool(self.infos), "-shown")

    @property
    def label(self) -> str:
        return chips(self.infos).plain


def chips(infos: Sequence[MentionInfo]) -> Text:
    out = Text()
    for info in infos:
        if out:
            out.append("   ")
        if info.error:
            out.append(f"⚠ {info.error} (not attached)", style="bold yellow")
            continue
        cost = f"{format_tokens(info.tokens)} tokens"
        if info.kind == "image":
            cost = f"image ≈{cost}"
        elif info.kind == "directory":
            cost = f"listing · {cost}"
        out.append(f"[{info.text} · {cost}]", style="bold")
    return out
