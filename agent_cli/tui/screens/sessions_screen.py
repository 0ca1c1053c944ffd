"""`/resume` without an id: pick an earlier session; dismisses with its id (None when cancelled).

Under the list, a dim line on the sessions the list passes by (as `agent sessions` says it)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.agent.api import SessionInfo


def session_label(info: SessionInfo) -> Text:
    when = info.started_at.replace("T", " ")[:16]
    prompt = " ".join(info.first_prompt.split())
    if len(prompt) > 60:
        prompt = prompt[:59] + "…"
    text = Text()
    text.append(f"{when}  ", style="dim")
    text.append(f"{info.turns:>3} turn{'s' * (info.turns != 1):<1}  ", style="dim")
    text.append(prompt or "(no prompt)")
    text.append(f"  {info.id}", style="dim italic")
    return text


class SessionsScreen(ModalScreen[str | None]):
    CSS_PATH = "sessions_screen.tcss"
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, sessions: Sequence[SessionInfo], current_id: str = "", passed_over: str = "") -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.current_id = current_id
        self.passed_over = passed_over

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-panel") as panel:
            panel.border_title = "resume a session"
            panel.border_subtitle = "Enter to resume · Esc to cancel"
            if self.sessions:
                yield OptionList(
                    *(Option(session_label(s), id=s.id) for s in self.sessions), id="sessions-list"
                )
            else:
                yield Static("No earlier sessions in this workspace.", id="sessions-empty")
            if self.passed_over:
                yield Static(Text(self.passed_over), id="sessions-passed-over")

    def on_mount(self) -> None:
        for options in self.query("#sessions-list").results(OptionList):
            options.focus()
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
