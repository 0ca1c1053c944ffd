"""The scrolling transcript: follows the bottom while new content arrives, unless the person scrolled up.

A long saved conversation is painted from the end: the last `page_size` entries are mounted and an
"earlier entries" line above them mounts the previous page on a click, so resuming a session
of thousands of messages stays quick.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

HEAD = "transcript-head"  # a class for widgets that stay above the conversation (the welcome header)


class EarlierEntries(Static, can_focus=True):
    DEFAULT_CSS = """
    EarlierEntries {
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    EarlierEntries:hover, EarlierEntries:focus { color: $text; background: $boost; }
    """
    BINDINGS = [Binding("enter,space", "show_more", "show earlier", show=False)]

    class ShowMore(Message):
        """Mount the previous page of entries."""

    def set_counts(self, hidden: int, page: int) -> None:
        self.hidden = hidden
        more = min(hidden, page)
        self.update(Text(f"▲ {hidden} earlier entries · click to show {more} more"))

    def action_show_more(self) -> None:
        self.post_message(self.ShowMore())

    def on_click(self) -> None:
        self.post_message(self.ShowMore())


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1 1 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, page_size: int = 30, id: str | None = None) -> None:
        super().__init__(id=id)
        self.page_size = page_size
        self._hidden: list[Widget] = []
        self._earlier: EarlierEntries | None = None

    def on_mount(self) -> None:
        self.anchor()

    def page(self, direction: int) -> None:
        """One page up (-1) or down (1), at once, from where the last scroll was going: Textual's own
        page scroll waits for a refresh and counts from where the view still is, so keys pressed
        faster than the screen refreshes were partly lost (three PageDowns did not undo three PageUps)."""
        height = self.scrollable_content_region.height
        self.scroll_to(y=self.scroll_target_y + direction * height, animate=False, immediate=True)

    def release_anchor(self) -> None:
        """Every scroll releases the anchor before it moves; one that ends at the bottom (a PageDown
        or a wheel turn there) must follow new output again, even when it did not move at all."""
        super().release_anchor()
        self.call_next(self._follow_at_bottom)

    def _follow_at_bottom(self) -> None:
        if self.is_anchored and self.scroll_target_y >= self.max_scroll_y:
            self.anchor()

    @property
    def entries(self) -> list[Widget]:
        """The conversation's widgets (not the marker, not a head such as the welcome header)."""
        return [w for w in self.children if not isinstance(w, EarlierEntries) and not w.has_class(HEAD)]

    @property
    def hidden_count(self) -> int:
        return len(self._hidden)

    async def add(self, *widgets: Widget) -> None:
        """Mount at the end; the view follows when it was at the bottom."""
        if widgets:
            await self.mount_all(widgets)

    async def add_history(self, widgets: Sequence[Widget]) -> None:
        """Mount a saved conversation at the end: its last page now, earlier pages on request."""
        widgets = list(widgets)
        cut = max(0, len(widgets) - self.page_size)
        hidden, shown = widgets[:cut], widgets[cut:]
        if hidden:
            self._hidden = hidden + self._hidden
            await self._show_marker(before_first=True)
        await self.add(*shown)

    async def clear(self) -> None:
        self._hidden = []
        self._earlier = None
        await self.remove_children()
        self.anchor()

    async def on_earlier_entries_show_more(self, event: EarlierEntries.ShowMore) -> None:
        event.stop()
        await self.show_earlier()

    async def show_earlier(self) -> None:
        marker = self._earlier
        if marker is None or not self._hidden:
            return
        cut = max(0, len(self._hidden) - self.page_size)
        page, self._hidden = self._hidden[cut:], self._hidden[:cut]
        await self.mount_all(page, after=marker)
        if self._hidden:
            marker.set_counts(len(self._hidden), self.page_size)
        else:
            self._earlier = None
            await marker.remove()

    async def _show_marker(self, *, before_first: bool) -> None:
        if self._earlier is None:
            self._earlier = EarlierEntries()
            heads = [w for w in self.children if w.has_class(HEAD)]
            if heads:  # below the head, above the conversation
                await self.mount(self._earlier, after=heads[-1])
            elif before_first and self.children:
                await self.mount(self._earlier, before=0)
            else:
                await self.mount(self._earlier)
        self._earlier.set_counts(len(self._hidden), self.page_size)
