"""`/memory`: pick a memory file to open in the editor (AGENTS.md, CLAUDE.md: the person's own and
the workspace's; one not there yet is created when saved), or the session-memory note to read.

Dismisses with the chosen file's path, `NOTE` for the note, or None when cancelled.
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

NOTE = "session-note"


def file_label(entry: Mapping[str, Any]) -> Text:
    text = Text()
    text.append(str(entry.get("label", "")))
    text.append(f"\n  {entry.get('path', '')}", style="dim")
    return text


class MemoryScreen(ModalScreen[str | None]):
    CSS_PATH = "memory_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, files: Sequence[Mapping[str, Any]]) -> None:
        super().__init__()
        self.files = list(files)

    def compose(self) -> ComposeResult:
        with Vertical(id="memory-panel") as panel:
            panel.border_title = "memory: open a file in your editor"
            panel.border_subtitle = "Enter to open · Esc to cancel"
            options = [Option(file_label(f), id=str(f.get("path", ""))) for f in self.files]
            note = Text("Session-memory note (this session, written by agent: read only)", style="italic")
            yield OptionList(*options, Option(note, id=NOTE), id="memory-list")
            yield Static(
                "Read at the start of every session: an edit applies after /clear or in a new session.",
                id="memory-hint",
            )

    def on_mount(self) -> None:
        options = self.query_one("#memory-list", OptionList)
        options.focus()
        options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
