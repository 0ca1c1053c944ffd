"""Prompt history: Up walks back through earlier prompts, Down walks forward to the draft. With a
`HistoryFile`, it starts from the person's earlier sessions and keeps what they send for the next."""

from __future__ import annotations

from collections.abc import Iterable

from agent_cli.tui.history_file import LIMIT, HistoryFile


class PromptHistory:
    def __init__(
        self, entries: Iterable[str] = (), limit: int = LIMIT, store: HistoryFile | None = None
    ) -> None:
        earlier = store.load() if store is not None else []
        self._entries: list[str] = [e for e in [*earlier, *entries] if e.strip()][-limit:]
        self._limit = limit
        self.store = store
        self._index: int | None = None  # None: not browsing
        self._draft = ""

    @property
    def entries(self) -> list[str]:
        return list(self._entries)

    @property
    def browsing(self) -> bool:
        return self._index is not None

    def add(self, text: str, *, keep: bool = False) -> None:
        """`text` as the newest entry; `keep`: in the history file too (a prompt sent)."""
        self.reset()
        if not text.strip():
            return
        if keep and self.store is not None:
            self.store.append(text)
        if self._entries and self._entries[-1] == text:
            return
        self._entries.append(text)
        del self._entries[: -self._limit]

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.add(text)

    def previous(self, current: str) -> str | None:
        """The prompt before the one shown; None at the oldest (nothing changes)."""
        if not self._entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self._entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self._entries[self._index]

    def next(self) -> str | None:
        """The prompt after the one shown, the draft after the newest; None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self._entries):
            self._index = None
            return self._draft
        return self._entries[self._index]

    def reset(self) -> None:
        self._index = None
        self._draft = ""
