"""One tool call: a header (tool, target, status) and its output.

While it runs the header shows a spinner; when done, ✓ or ✗ and the duration. The body shows the
first lines of the output (or, for edits, the diff) and expands to the whole of it on click/Enter.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from agent_cli.core.persisted import readable
from agent_cli.core.printable import printable, revealed
from agent_cli.tui.formatting import first_lines, format_duration

Status = Literal["pending", "running", "done", "error", "denied", "interrupted"]
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PREVIEW_LINES = 8
DIFF_PREVIEW_LINES = 20


class ToolCall(Widget, can_focus=True):
    DEFAULT_CSS = """
    ToolCall {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
    }
    ToolCall:focus { background: $boost; }
    ToolCall .tool-header { height: auto; }
    ToolCall .tool-body {
        height: auto;
        margin: 0 0 0 2;
        padding: 0 1;
        border-left: solid $foreground 20%;
        color: $text-muted;
    }
    ToolCall.-collapsed .tool-body { display: none; }
    ToolCall.-empty .tool-body { display: none; }
    """
    BINDINGS = [Binding("enter,space", "toggle", "expand", show=False)]

    status: reactive[Status] = reactive("running")
    expanded: reactive[bool] = reactive(False)
    spinner_frame: reactive[int] = reactive(0)

    def __init__(
        self,
        tool: str,
        target: str = "",
        *,
        call_id: str = "",
        status: Status = "running",
        collapsed: bool = False,
    ) -> None:
        super().__init__(classes="-collapsed -empty" if collapsed else "-empty")
        self.tool = tool
        self.target = target
        self.call_id = call_id
        self.output = ""
        self.display_text = ""
        self.duration: float | None = None
        self.reason = ""
        self.collapsed_mode = collapsed
        self._timer: Timer | None = None
        self.set_reactive(ToolCall.status, status)

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="tool-header")
        yield Static("", classes="tool-body")

    def on_mount(self) -> None:
        self._update_body()
        self._sync_spinner()

    # -- state changes, called by whoever routes the events --------------------------------------
    def start(self, target: str = "") -> None:
        if target:
            self.target = target
        self.status = "running"

    def finish(
        self, output: str, *, is_error: bool = False, duration: float | None = None, display: str = ""
    ) -> None:
        self.output = output
        self.display_text = display
        self.duration = duration
        if self.status != "denied":  # a denied call still "finishes" with what the model read
            self.status = "error" if is_error else "done"
        self._update_body()

    def deny(self, reason: str = "") -> None:
        self.reason = reason
        self.output = reason
        self.status = "denied"
        self._update_body()

    def interrupt(self) -> None:
        if self.status in ("running", "pending"):
            self.status = "interrupted"

    @property
    def is_finished(self) -> bool:
        return self.status not in ("running", "pending")

    @property
    def content(self) -> str:
        """What the body shows: the diff for edits, else the output (an output kept in the store as
        its preview and where the whole is, not the markup the model reads)."""
        return self.display_text or readable(self.output)

    @property
    def body_text(self) -> str:
        return self._body_text()[0]

    # -- rendering ---------------------------------------------------------------------------------
    def action_toggle(self) -> None:
        if self.collapsed_mode:
            self.set_class(not self.has_class("-collapsed"), "-collapsed")
            self.expanded = not self.has_class("-collapsed")
        else:
            self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle()

    def watch_status(self) -> None:
        self._refresh_header()
        self._sync_spinner()

    def watch_expanded(self) -> None:
        self._update_body()

    def watch_spinner_frame(self) -> None:
        self._refresh_header()

    def _sync_spinner(self) -> None:
        if not self.is_mounted:
            return
        animate = self.app.animation_level != "none"
        if self.status == "running" and animate and self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        elif self.status != "running" and self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _tick(self) -> None:
        self.spinner_frame = (self.spinner_frame + 1) % len(SPINNER)

    def _refresh_header(self) -> None:
        if self.is_mounted:
            self.query_one(".tool-header", Static).update(self._header())

    def _header(self) -> Text:
        text = Text()
        colour = {"done": "green", "error": "red", "denied": "red", "interrupted": "yellow"}.get(
            self.status, "cyan"
        )
        text.append("● ", style=colour)
        text.append(self.tool, style="bold")
        if self.target:
            text.append(f"  {revealed(self.target)}", style="dim")  # a command as bash gets it
        text.append("  ")
        if self.status == "running":
            text.append(f"{SPINNER[self.spinner_frame]} running", style="cyan")
        elif self.status == "pending":
            text.append("? awaiting permission", style="yellow")
        elif self.status in ("done", "error"):
            mark = "✓" if self.status == "done" else "✗"
            duration = f" {format_duration(self.duration)}" if self.duration is not None else ""
            text.append(f"{mark}{duration}", style=colour)
        elif self.status == "denied":
            text.append("⊘ denied", style="red")
        else:
            text.append("■ interrupted", style="yellow")
        return text

    def _body_text(self) -> tuple[str, int]:
        content = self.content
        if self.expanded or self.collapsed_mode:
            return content.rstrip("\n"), 0
        limit = DIFF_PREVIEW_LINES if self.display_text else PREVIEW_LINES
        return first_lines(content, limit)

    def _update_body(self) -> None:
        if not self.is_mounted:
            return
        shown, hidden = self._body_text()
        self.set_class(not self.content.strip(), "-empty")
        body = Text()
        shown = printable(shown)
        if self.display_text:
            _append_diff(body, shown)
        else:
            body.append(shown, style="red" if self.status == "error" else "")
        if hidden:
            body.append(f"\n… {hidden} more lines (click to expand)", style="dim italic")
        self.query_one(".tool-body", Static).update(body)


def _append_diff(out: Text, diff: str) -> None:
    for i, line in enumerate(diff.splitlines()):
        if i:
            out.append("\n")
        if line.startswith("+") and not line.startswith("+++"):
            style = "green"
        elif line.startswith("-") and not line.startswith("---"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        out.append(line, style=style)
