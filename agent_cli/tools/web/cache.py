"""The session's pages by URL: a second `web_fetch` of a URL reads the page kept the first time and
sends nothing over the network. The text lives where the first fetch stored it (the session's store,
on disk); only small pages without a store are held in memory."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.tools.base import RecallStore


@dataclass(frozen=True)
class CachedPage:
    url: str  # as asked for (normalized)
    final_url: str  # after same-host redirects
    status: int
    content_type: str
    title: str
    fetched_at: float  # seconds since the epoch
    truncated: bool
    ref: str = ""  # where the text is in `store`
    store: RecallStore | None = None
    text: str | None = None  # the text itself, when it is in no store

    def read(self) -> str | None:
        """The page's text, or None when it is gone."""
        if self.text is not None:
            return self.text
        return self.store.get(self.ref) if self.store is not None and self.ref else None


class PageCache:
    """URL -> the page fetched from it in this session."""

    def __init__(self) -> None:
        self._pages: dict[str, CachedPage] = {}

    def get(self, url: str) -> CachedPage | None:
        return self._pages.get(url)

    def put(self, page: CachedPage) -> None:
        self._pages[page.url] = page

    def __len__(self) -> int:
        return len(self._pages)
