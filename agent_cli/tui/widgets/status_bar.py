"""The bottom line: context gauge, model, session cost, cache hit rate, permission mode, and how many
background shells run."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static

from agent_cli.core.events import ContextStatus
from agent_cli.tui.formatting import format_cost, format_percent, hit_rate_fraction
from agent_cli.tui.widgets.context_gauge import ContextGauge


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

    def set_usage(self, cost_usd: float, cache_hit_rate: float | None) -> None:
        self.cost_usd = cost_usd
        self.cache_hit_rate = cache_hit_rate

    @property
    def details_text(self) -> str:
        if self.loading and not self.model:
            return "loading model provider…"
        parts = [self.model or "no model", format_cost(self.cost_usd)]
        rate = self.cache_hit_rate
        parts.append(f"cache {format_percent(hit_rate_fraction(rate))}" if rate is not None else "cache —")
        if self.permission_mode:
            parts.append(self.permission_mode)
        if self.shells:
            parts.append(f"{self.shells} shell{'s' if self.shells != 1 else ''}")
        return " · ".join(parts)

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

    def _refresh_details(self) -> None:
        if self.is_mounted:
            self.query_one(".status-details", Static).update(Text(self.details_text))
