"""`/context`: what fills the context window — a coloured stacked bar and a table of tokens and %, and
what T1's priced clears have done (clears, misses and their cost, the latest decision)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from agent_cli.core.events import ContextStatus, EvictionReport
from agent_cli.tui.formatting import format_percent, format_threshold, format_tokens

CATEGORIES: tuple[tuple[str, str, str, str], ...] = (
    # key, label, colour, bar character
    ("system", "system prompt", "#5f87d7", "█"),
    ("tools", "tool definitions", "#af87d7", "█"),
    ("user_context", "user context (AGENTS.md, env)", "#5fafaf", "█"),
    ("messages", "messages", "#87af5f", "█"),
    ("tool_results", "tool results", "#d7af5f", "█"),
    ("summaries", "summaries", "#d787af", "█"),
    ("attachments", "attachments", "#d7875f", "█"),
    ("free", "free", "#6c6c6c", "░"),
    ("reserved", "reserved for output", "#8a8a8a", "▒"),
)
_KNOWN = {key for key, *_ in CATEGORIES}
OUTSIDE = ("free", "reserved")  # the rest of the window: not part of what is in use
BAR_WIDTH = 72


def ordered_breakdown(breakdown: Mapping[str, int]) -> list[tuple[str, str, str, str, int]]:
    """(key, label, colour, char, tokens) in a fixed order; unknown categories go before `free`."""
    rows = [(k, label, colour, ch, int(breakdown.get(k, 0))) for k, label, colour, ch in CATEGORIES]
    extra = [
        (k, k.replace("_", " "), "#87afaf", "█", int(v)) for k, v in breakdown.items() if k not in _KNOWN
    ]
    return rows[:7] + extra + rows[7:]


def bar_cells(values: list[int], width: int) -> list[int]:
    """Cells per value, summing to `width` (largest remainder); a non-zero value gets at least one."""
    total = sum(max(0, v) for v in values)
    if total <= 0:
        return [0] * len(values)
    exact = [max(0, v) * width / total for v in values]
    cells = [int(x) for x in exact]
    for i, v in enumerate(values):
        if v > 0 and cells[i] == 0:
            cells[i] = 1
    order = sorted(range(len(values)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    i = 0
    while sum(cells) < width and order:
        cells[order[i % len(order)]] += 1
        i += 1
    while sum(cells) > width:
        biggest = max(range(len(cells)), key=lambda j: cells[j])
        cells[biggest] -= 1
    return cells


class ContextScreen(ModalScreen[None]):
    CSS_PATH = "context_screen.tcss"
    BINDINGS = [Binding("escape,q", "close", "close")]

    def __init__(
        self,
        breakdown: Mapping[str, int],
        status: ContextStatus,
        model: str = "",
        eviction: EvictionReport | None = None,
    ) -> None:
        super().__init__()
        self.eviction = eviction
        self.breakdown = dict(breakdown)
        self.status = status
        self.model = model
        self.rows = ordered_breakdown(self.breakdown)
        # one number for what is in use: the sum of its parts (the headline and the table agree)
        self.in_use = sum(max(0, r[4]) for r in self.rows if r[0] not in OUTSIDE)

    def compose(self) -> ComposeResult:
        with Vertical(id="context-panel") as panel:
            panel.border_title = "context"
            panel.border_subtitle = "Esc to close"
            yield Static(self._headline(), id="context-headline")
            yield Static(self._bar(), id="context-bar")
            yield Static(self._legend(), id="context-legend")
            if self.eviction is not None:
                yield Static(Text(self.eviction.summary(), style="dim"), id="context-eviction")
            yield DataTable(id="context-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("", key="swatch")
        table.add_column("category", key="category")
        table.add_column(Text("tokens", justify="right"), key="tokens")
        table.add_column(Text("% in use", justify="right"), key="percent")
        whole = self.in_use or 1
        for key, label, colour, char, tokens in self.rows:
            if key in OUTSIDE:
                continue
            share = Text(f"{tokens * 100 / whole:.1f}%", justify="right")
            table.add_row(Text(char * 2, style=colour), label, _count(tokens), share, key=key)
        table.add_row("", Text("in use", style="bold"), _count(self.in_use, "bold"), "", key="in_use")
        for key, label, colour, char, tokens in self.rows:
            if key in OUTSIDE:
                table.add_row(Text(char * 2, style=colour), label, _count(tokens), "", key=key)
        table.focus()

    def _headline(self) -> Text:
        s = self.status
        text = Text()
        if self.model:
            text.append(f"{self.model}  ", style="bold")
        text.append(f"{format_tokens(self.in_use)} / {format_tokens(s.budget)} tokens in use ")
        fraction = self.in_use / s.budget if s.budget else 0.0
        text.append(f"({format_percent(fraction)} of the budget)", style="dim")
        text.append(
            f"\nwindow {format_tokens(s.window)} · reserved for output {format_tokens(s.reserved)} · "
        )
        if s.auto_compact:
            text.append(f"auto-compaction at {format_threshold(s.auto_mark)}")
        else:
            text.append("auto-compaction off")
        text.append(f" · warning at {format_threshold(s.warn_fraction)}")
        text.append(f"\n{s.budget_explained()}", style="dim")
        return text

    def _bar(self) -> Text:
        cells = bar_cells([r[4] for r in self.rows], BAR_WIDTH)
        text = Text()
        for (_, _, colour, char, _), n in zip(self.rows, cells, strict=True):
            text.append(char * n, style=colour)
        return text

    def _legend(self) -> Text:
        text = Text()
        for key, _label, colour, char, tokens in self.rows:
            if tokens <= 0 and key not in ("free", "reserved"):
                continue
            text.append(f"{char} ", style=colour)
            text.append(f"{key.replace('_', ' ')} {format_tokens(tokens)}   ")
        return text

    def action_close(self) -> None:
        self.dismiss(None)


def _count(tokens: int, style: str = "") -> Text:
    return Text(f"{tokens:,}", justify="right", style=style)
