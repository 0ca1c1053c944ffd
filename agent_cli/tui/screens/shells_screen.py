"""`/shells`: the session's background shells. Enter shows the end of a shell's output, `k` kills the
highlighted one, Esc closes. The list follows the shells as they start and end (the app calls
`refresh_shells` at every `ShellsChanged`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.agent.api import BackgroundShells
from agent_cli.core.events import ShellInfo
from agent_cli.core.printable import printable, revealed

TAIL_CHARS = 6_000
EMPTY = "No background shells in this session: one starts when the model runs bash with run_in_background."
HINT = "Enter: its output · k: kill · Esc: close"
HINT_EMPTY = "Esc: close"  # nothing to show or kill


def shell_label(info: ShellInfo) -> Text:
    command = " ".join(info.command.split())
    if len(command) > 56:
        command = command[:55] + "…"
    text = Text()
    text.append(f"{info.id:<9}", style="bold")
    text.append(f"{info.status_text():<12}", style="green" if info.running else "dim")
    text.append(f"{info.output_chars:>12,} chars  ", style="dim")
    text.append(revealed(command))
    return text


class ShellsScreen(ModalScreen[None]):
    CSS_PATH = "shells_screen.tcss"
    BINDINGS = [Binding("escape,q", "close", "close"), Binding("k", "kill", "kill")]

    def __init__(self, shells: BackgroundShells) -> None:
        super().__init__()
        self.shells = shells
        self.shown_id = ""  # whose tail is shown

    def compose(self) -> ComposeResult:
        with Vertical(id="shells-panel") as panel:
            panel.border_title = "background shells"
            panel.border_subtitle = HINT
            yield OptionList(id="shells-list")
            yield Static(EMPTY, id="shells-empty")
            yield Static("", id="shells-note")  # what the last kill did (shown from then on)
            with VerticalScroll(id="shells-tail-scroll"):
                yield Static("", id="shells-tail")

    def on_mount(self) -> None:
        self.refresh_shells()
        self.query_one(OptionList).focus()

    @property
    def highlighted_id(self) -> str:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return ""
        return options.get_option_at_index(options.highlighted).id or ""

    def refresh_shells(self) -> None:
        """Repaint the list (and the shown tail) from the shells as they are now."""
        infos = self.shells.list()
        options = self.query_one(OptionList)
        keep = self.highlighted_id
        options.clear_options()
        options.add_options([Option(shell_label(i), id=i.id) for i in infos])
        ids = [i.id for i in infos]
        if ids:
            options.highlighted = ids.index(keep) if keep in ids else len(ids) - 1
        # no shells: the line that says so, and no list, output box or keys that would act on nothing
        options.display = bool(infos)
        self.query_one("#shells-empty", Static).display = not infos
        panel = self.query_one("#shells-panel")
        panel.border_subtitle = HINT if infos else HINT_EMPTY
        panel.set_class(not infos, "-empty")  # as tall as its one line
        self.query_one("#shells-tail-scroll").display = bool(self.shown_id)
        if self.shown_id:
            self._show_tail(self.shown_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._show_tail(event.option.id or "")

    def _show_tail(self, shell_id: str) -> None:
        self.shown_id = shell_id
        self.query_one("#shells-tail-scroll").display = bool(shell_id)
        tail = self.shells.tail(shell_id, TAIL_CHARS) if shell_id else ""
        body = self.query_one("#shells-tail", Static)
        body.border_title = f"{shell_id}: the last {TAIL_CHARS:,} chars" if shell_id else ""
        body.update(Text(printable(tail) or "(no output yet)"))
        self.query_one("#shells-tail-scroll", VerticalScroll).scroll_end(animate=False)

    async def action_kill(self) -> None:
        shell_id = self.highlighted_id
        if not shell_id:
            return
        line, _ = await self.shells.kill(shell_id)
        note = self.query_one("#shells-note", Static)
        note.update(Text(line))
        note.display = True
        self.refresh_shells()

    def action_close(self) -> None:
        self.dismiss(None)
