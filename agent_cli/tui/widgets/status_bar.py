"""The bottom line: context gauge, model, session cost, cache hit rate, permission mode, and how many
background shells run. When the line is narrow the least needed parts go first (the cache hit rate,
then the cost, then the gauge's bar: its numbers stay), so the model and the mode stay readable."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from agent_cli.core.events import ContextStatus
from agent_cli.tui.formatting import format_cost, format_percent, hit_rate_fraction
from agent_cli.tui.widgets.context_gauge import ContextGauge

DETAILS_PAD = 2  # .status-details' left padding


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    StatusBar > .status-details { width: 1fr; height: 1; padding: 0 0 0 2; color: $text-muted; }
    StatusBar.-loading > .status-details { color: $text-accent; }
    """

    model: reactive[str] = reactive("")
    permission_mode: reactive[str] = reactive("")
    cost_usd: reactive[float] = reactive(0.0)
    cache_hit_rate: reactive[float | None] = reactive(None)
    loading: reactive[bool] = reactive(False)
    shells: reactive[int] = reactive(0)  # background shells running

    def __init__(self, status: ContextStatus | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.gauge = ContextGauge(status, id="context-gauge")  # until a session says: what one would have

    def compose(self) -> ComposeResult:
        yield self.gauge
        yield Static("", classes="status-details")

    def on_mount(self) -> None:
        self._refresh_details()

    def set_context(self, status: ContextStatus) -> None:
        self.gauge.set_status(status)
        self._refresh_details()  # the numbers' width may change what fits

    def set_usage(self, cost_usd: float, cache_hit_rate: float | None) -> None:
        self.cost_usd = cost_usd
        self.cache_hit_rate = cache_hit_rate

    @property
    def details_text(self) -> str:
        """Every detail, as the bar shows them when there is room."""
        return self._details(())

    def _details(self, dropped: tuple[str, ...]) -> str:
        if self.loading and not self.model:
            return "loading model provider…"
        rate = self.cache_hit_rate
        parts = {
            "model": self.model or "no model",
            "cost": format_cost(self.cost_usd),
            "cache": f"cache {format_percent(hit_rate_fraction(rate))}" if rate is not None else "cache —",
            "mode": self.permission_mode,
            "shells": f"{self.shells} shell{'s' if self.shells != 1 else ''}" if self.shells else "",
        }
        return " · ".join(text for name, text in parts.items() if text and name not in dropped)

    def _fitted(self) -> tuple[str, bool]:
        """The details that fit beside the gauge, and whether the gauge keeps its bar."""
        width = self.content_size.width
        for bar in (True, False):  # without the bar, what was dropped for it may come back
            for dropped in ((), ("cache",), ("cache", "cost")):
                text = self._details(dropped)
                if not width or self.gauge.width_needed(bar) + DETAILS_PAD + cell_len(text) <= width:
                    return text, bar
        return text, False

    def watch_model(self) -> None:
        self._refresh_details()

    def watch_permission_mode(self) -> None:
        self._refresh_details()

    def watch_cost_usd(self) -> None:
        self._refresh_details()

    def watch_cache_hit_rate(self) -> None:
        self._refresh_details()

    def watch_shells(self) -> None:
        self._refresh_details()

    def watch_loading(self, loading: bool) -> None:
        self.set_class(loading, "-loading")
        self._refresh_details()

    def on_resize(self, event: events.Resize) -> None:
        self._refresh_details()

    def _refresh_details(self) -> None:
        if self.is_mounted:
            text, bar = self._fitted()
            self.gauge.show_bar(bar)
            self.query_one(".status-details", Static).update(Text(text))
