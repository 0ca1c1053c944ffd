"""`/rewind` without arguments (or Esc Esc on an empty prompt): pick a prompt, then what to restore.

Dismisses with `"N MODE"` (the argument of `/rewind`), or None when cancelled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

MODES = (
    ("both", "Restore code and conversation"),
    ("conversation", "Restore the conversation only (files stay as they are)"),
    ("code", "Restore the code only (the conversation goes on)"),
)


def prompt_label(point: Mapping[str, Any]) -> Text:
    prompt = " ".join(str(point.get("text", "")).split())
    if len(prompt) > 70:
        prompt = prompt[:69] + "…"
    text = Text()
    text.append(f"{point.get('number', '?'):>3}. ", style="dim")
    text.append(prompt or "(empty prompt)")
    if point.get("not_taken"):
        note = f"no checkpoint was taken ({point['not_taken']}): its code cannot be restored"
        text.append("  " + note, style="dim italic")
    elif not point.get("checkpoint"):
        text.append("  no code changes from here", style="dim italic")
    return text


class RewindScreen(ModalScreen[str | None]):
    CSS_PATH = "rewind_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, prompts: Sequence[Mapping[str, Any]]) -> None:
        super().__init__()
        self.prompts = list(prompts)
        self.chosen: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-panel") as panel:
            panel.border_title = "rewind: go back to before a prompt"
            panel.border_subtitle = "Enter to choose · Esc to cancel"
            if self.prompts:
                options = (Option(prompt_label(p), id=str(p.get("number"))) for p in reversed(self.prompts))
                yield OptionList(*options, id="rewind-list")
                yield OptionList(*(Option(label, id=mode) for mode, label in MODES), id="rewind-modes")
            else:
                yield Static("No prompts in this session yet.", id="rewind-empty")

    def on_mount(self) -> None:
        for modes in self.query("#rewind-modes").results(OptionList):
            modes.display = False  # shown once a prompt is chosen
        for options in self.query("#rewind-list").results(OptionList):
            options.focus()
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "rewind-list":
            self.chosen = int(event.option.id or 0)
            modes = self.query_one("#rewind-modes", OptionList)
            event.option_list.display = False
            modes.display = True
            modes.focus()
            modes.highlighted = 0
            panel = self.query_one("#rewind-panel")
            panel.border_title = f"rewind to before prompt {self.chosen}: what to restore?"
        elif self.chosen is not None:
            self.dismiss(f"{self.chosen} {event.option.id}")

    def action_cancel(self) -> None:
        self.dismiss(None)
