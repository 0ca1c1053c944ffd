"""The context gauge: a bar plus `51.2k / 200k (26%)`, coloured by the policy's thresholds.

The bar is green below warn_fraction, yellow below where auto-compaction starts (`auto_mark`: the
policy's latest threshold, at least auto_fraction), red beyond; a `|` marks that point when
auto-compaction is on.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual.widgets import Static

from agent_cli.core.events import ContextStatus
from agent_cli.tui.formatting import format_percent, format_threshold, format_tokens

GaugeLevel = Literal["ok", "warn", "danger"]
BAR_WIDTH = 20


def gauge_level(status: ContextStatus) -> GaugeLevel:
    fraction = status.fraction
    if fraction < status.warn_fraction:
        return "ok"
    if fraction < status.auto_mark:
        return "warn"
    return "danger"


def gauge_label(status: ContextStatus) -> str:
    return (
        f"{format_tokens(status.used)} / {format_tokens(status.budget)} ({format_percent(status.fraction)})"
    )


def gauge_bar(status: ContextStatus, width: int = BAR_WIDTH) -> tuple[str, int | None]:
    """The bar's characters and the index of the auto-compaction mark (None when not shown)."""
    filled = min(width, round(min(1.0, status.fraction) * width))
    cells = ["█"] * filled + ["░"] * (width - filled)
    mark: int | None = None
    if status.auto_compact and 0 < status.auto_mark < 1:
        mark = min(width - 1, int(status.auto_mark * width))
        cells[mark] = "|"
    return "".join(cells), mark


def warning_text(status: ContextStatus) -> str:
    """The line shown above the status bar once usage reaches warn_fraction ("" below it)."""
    if status.fraction < status.warn_fraction:
        return ""
    pct = format_percent(status.fraction)
    if status.auto_compact:
        tail = f"auto-compaction at {format_threshold(status.auto_mark)}"
    else:
        tail = "auto-compaction is off"
    return f"context {pct} full — /compact to summarize now; {tail}"


class ContextGauge(Static):
    DEFAULT_CSS = """
    ContextGauge { width: auto; height: 1; color: $text-success; }
    ContextGauge.-warn { color: $text-warning; }
    ContextGauge.-danger { color: $text-error; text-style: bold; }
    """

    def __init__(self, status: ContextStatus | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status = status or ContextStatus()
        self.bar_shown = True  # a narrow status bar keeps the numbers only (status_bar.py)
        self._apply()

    def width_needed(self, bar: bool) -> int:
        """Columns the gauge takes with its bar or without it."""
        return len(self.label_text) + (BAR_WIDTH + 1 if bar else 0)

    def show_bar(self, shown: bool) -> None:
        if shown != self.bar_shown:
            self.bar_shown = shown
            self._apply()

    @property
    def label_text(self) -> str:
        return gauge_label(self.status)

    @property
    def level(self) -> GaugeLevel:
        return gauge_level(self.status)

    def set_status(self, status: ContextStatus) -> None:
        self.status = status
        self._apply()

    def _apply(self) -> None:
        level = self.level
        for name in ("ok", "warn", "danger"):
            self.set_class(name == level, f"-{name}")
        bar, mark = gauge_bar(self.status) if self.bar_shown else ("", None)
        text = Text()
        for i, char in enumerate(bar):
            if i == mark:
                text.append(char, style="bold")
            elif char == "░":
                text.append(char, style="dim")
            else:
                text.append(char)
        text.append(f" {self.label_text}" if bar else self.label_text)
        self.update(text)
        self.tooltip = self.status.budget_explained()
