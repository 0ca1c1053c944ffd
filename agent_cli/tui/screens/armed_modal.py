"""A modal that takes an answer only once it is armed (tui/key_guard.py): the permission, plan and
trust questions share it. Until then its buttons are disabled and its hint says keys go to the
message being typed; the hint and the `-armed` class change the moment it arms."""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_cli.tui.key_guard import KeyGuard

ResultT = TypeVar("ResultT")


class ArmedModal(ModalScreen[ResultT], Generic[ResultT]):
    HINT_ID = "permission-hint"  # the Static that shows ARMED_HINT or TYPING_HINT
    ARMED_HINT = ""
    TYPING_HINT = ""

    def __init__(self, guard: KeyGuard | None = None) -> None:
        super().__init__()
        self.guard = guard or KeyGuard()
        self.armed_shown = False

    def on_mount(self) -> None:
        self.guard.shown()
        self._refresh_armed()
        self.set_interval(0.05, self._refresh_armed)

    def _refresh_armed(self) -> None:
        armed = self.guard.armed
        if armed == self.armed_shown:
            return
        self.armed_shown = armed
        self.set_class(armed, "-armed")
        self.query_one(f"#{self.HINT_ID}", Static).update(self.ARMED_HINT if armed else self.TYPING_HINT)
        for button in self.query(Button):
            button.disabled = not armed
