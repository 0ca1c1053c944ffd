"""The background shells in the app: their count in the status bar, kept current by the session's
`ShellsChanged` events (which come between turns too), and the `/shells` screen; and what else the
session says between turns: an MCP server's failure, shown as a notice as soon as it is known. A
mixin of `AgentApp` (tui/app.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.message import Message

from agent_cli.core.events import Notice as NoticeEvent
from agent_cli.core.events import ShellsChanged
from agent_cli.tui.screens.shells_screen import ShellsScreen
from agent_cli.tui.widgets.notice import Notice

if TYPE_CHECKING:
    from agent_cli.agent.api import AgentBackend
    from agent_cli.tui.widgets.status_bar import StatusBar
    from agent_cli.tui.widgets.transcript import Transcript


class ShellsUpdated(Message):
    """A session's ShellsChanged, brought onto the app's message queue (any thread may post it)."""

    def __init__(self, event: ShellsChanged) -> None:
        super().__init__()
        self.event = event


class SessionNotice(Message):
    """A notice the session gave outside a turn's events (an MCP server failed)."""

    def __init__(self, event: NoticeEvent) -> None:
        super().__init__()
        self.event = event


class ShellViews:
    """What the shell views use of the app (AgentApp provides them)."""

    backend: AgentBackend | None
    status_bar: StatusBar
    transcript: Transcript
    screen: Any
    push_screen: Any
    post_message: Any
    _unwatch_shells: Callable[[], None] | None = None
    _unwatch_notices: Callable[[], None] | None = None

    def _watch_shells(self) -> None:
        """Follow the backend's shells (a backend without them has none)."""
        if self._unwatch_shells is not None:
            self._unwatch_shells()
            self._unwatch_shells = None
        shells = getattr(self.backend, "shells", None)
        if shells is None:
            return
        self._unwatch_shells = shells.subscribe(lambda event: self.post_message(ShellsUpdated(event)))
        self.status_bar.shells = sum(1 for info in shells.list() if info.running)

    def _watch_notices(self) -> None:
        """Show what the backend's MCP servers say as it happens (without them, nothing to watch)."""
        if self._unwatch_notices is not None:
            self._unwatch_notices()
            self._unwatch_notices = None
        mcp = getattr(self.backend, "mcp", None)
        if mcp is not None:
            self._unwatch_notices = mcp.subscribe(lambda event: self.post_message(SessionNotice(event)))

    async def on_session_notice(self, message: SessionNotice) -> None:
        await self.transcript.add(Notice(message.event.text, message.event.level))

    def on_shells_updated(self, message: ShellsUpdated) -> None:
        self.status_bar.shells = message.event.running
        if isinstance(self.screen, ShellsScreen):
            self.screen.refresh_shells()

    async def on_unmount(self) -> None:
        """The app closes: the shells end now, on the event loop they run on (`close` after the loop
        has gone still ends them, but the loop's child watcher would complain on the terminal)."""
        shells = getattr(self.backend, "shells", None)
        if shells is not None:
            await shells.aclose()

    async def _show_shells(self) -> None:
        shells = getattr(self.backend, "shells", None)
        if shells is None:
            await self.transcript.add(Notice("/shells is available once a model is loaded", "warning"))
            return
        self.push_screen(ShellsScreen(shells))
