"""The line above the prompt that says what is going on: working (Esc interrupts), a request being
retried and why ("no data from the API for 90 s"), hints."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.core.printable import printable

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
RETRY_HINT = "{reason} · retrying (attempt {attempt}) · Esc to interrupt"


class ActivityLine(Static):
    DEFAULT_CSS = """
    ActivityLine {
        height: 1;
        padding: 0 1;
        color: $text-accent;
        display: none;
    }
    ActivityLine.-shown { display: block; }
    ActivityLine.-hint { color: $text-warning; }
    """

    frame: reactive[int] = reactive(0)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.text = ""
        self.busy = False
        self.retry_shown = False
        self._timer: Timer | None = None

    def retrying(self, reason: str, attempt: int) -> None:
        """A request is being tried again: why, and which try (until `show` says something else)."""
        self.show(RETRY_HINT.format(reason=reason, attempt=attempt), busy=True)
        self.retry_shown = True

    def show(self, text: str, *, busy: bool = False) -> None:
        """Say `text` ("" hides the line); a spinner turns while `busy` (unless animations are off)."""
        self.retry_shown = False
        self.text = text
        self.busy = busy and bool(text)
        animate = self.app.animation_level != "none"
        if self.busy and animate and self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)
        elif not self.busy and self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.set_class(bool(text), "-shown")
        self.set_class(bool(text) and not busy, "-hint")
        self._render_line()

    def _tick(self) -> None:
        self.frame = (self.frame + 1) % len(SPINNER)

    def watch_frame(self) -> None:
        self._render_line()

    def _render_line(self) -> None:
        prefix = f"{SPINNER[self.frame]} " if self.busy else ""
        self.update(Text(prefix + printable(self.text)))
