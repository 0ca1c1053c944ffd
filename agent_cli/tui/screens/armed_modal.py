"""A modal that takes an answer only once it is armed (tui/key_guard.py): the permission, plan and
trust questions share it. Until then its buttons are disabled and its hint says keys go to the
message being typed; the hint and the `-armed` class change the moment it arms.

The keys are handled here, once for the three: Esc gives `ESCAPE` at any time (never the harmful
answer); ↑↓ and the page keys scroll `DETAIL_ID`; once armed, Enter answers at once and a letter of
`ANSWER_KEYS` answers when no key follows it within the guard's `settle` (held, shown as `-held`);
every other key, and a held letter a key followed (Esc too), is typing and goes on to the prompt as
`TypedThrough`, posted to the app, which outlives the question (Enter then reaches neither: nothing
is sent behind a question); Space never answers.

`DETAIL_ID` is also what gives way on a short screen: it shrinks (it scrolls) so the buttons and the
hint stay in view, and when even that is not enough the spacing goes (`-short`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from textual import events
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_cli.tui.key_guard import KeyGuard

ResultT = TypeVar("ResultT")
HELD_HINT = "{key}: answering… a key typed now goes to your message instead"
DETAIL_SHARE = 0.6  # of the screen's height, at most (as the CSS's 60vh)
DETAIL_ROWS = 3  # fewer rows than this for the detail: the spacing goes first

SCROLL_KEYS = {
    "up": "scroll_up",
    "down": "scroll_down",
    "pageup": "scroll_page_up",
    "pagedown": "scroll_page_down",
}


class ArmedModal(ModalScreen[ResultT], Generic[ResultT]):
    HINT_ID = "permission-hint"  # the Static that shows ARMED_HINT or TYPING_HINT
    ARMED_HINT = ""
    TYPING_HINT = ""
    ANSWER_KEYS: ClassVar[Mapping[str, Any]] = {}  # key -> answer, once armed
    ESCAPE: ClassVar[Any] = None  # what Esc answers, at any time
    DETAIL_ID = ""  # a VerticalScroll the scroll keys move ("" for none)

    class TypedThrough(Message):
        """A key that belonged to typing in progress: the app puts it in the prompt."""

        def __init__(self, key: str, character: str | None) -> None:
            super().__init__()
            self.key = key
            self.character = character

    def __init__(self, guard: KeyGuard | None = None) -> None:
        super().__init__()
        self.guard = guard or KeyGuard()
        self.armed_shown = False
        self.held: tuple[str, str | None, Any] | None = None  # (key, character, answer)

    def on_mount(self) -> None:
        self.guard.shown()
        self._refresh_armed()
        self.set_interval(0.05, self._refresh_armed)
        self.call_after_refresh(self._fit_detail)

    def on_resize(self, event: events.Resize) -> None:
        self.remove_class("-short")
        for detail in self.query(f"#{self.DETAIL_ID}") if self.DETAIL_ID else ():
            detail.styles.max_height = None  # the CSS's again, then measured anew
        self.call_after_refresh(self._fit_detail)

    def _fit_detail(self) -> None:
        """The detail gets the rows the rest of the dialog leaves (at most DETAIL_SHARE of the screen)."""
        if not self.DETAIL_ID or not self.query(f"#{self.DETAIL_ID}"):
            return
        detail = self.query_one(f"#{self.DETAIL_ID}")
        if detail.parent is None:
            return
        height = self.size.height
        room = height - (detail.parent.outer_size.height - detail.outer_size.height)
        if room < DETAIL_ROWS and not self.has_class("-short"):
            self.add_class("-short")  # tighter spacing, then measured again
            self.call_after_refresh(self._fit_detail)
            return
        detail.styles.max_height = max(1, min(room, int(height * DETAIL_SHARE)))

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        if event.key == "escape":
            self._release_held()  # Esc followed it too: the held letter was typing
            self.dismiss(self.ESCAPE)
            return
        if event.key in SCROLL_KEYS:
            if self.DETAIL_ID and self.query(f"#{self.DETAIL_ID}"):
                getattr(self.query_one(f"#{self.DETAIL_ID}", VerticalScroll), SCROLL_KEYS[event.key])()
            return
        if self.held is not None:  # a key right after an answering letter: both were typing
            self._release_held()
        elif self.guard.armed and event.key in self.ANSWER_KEYS:
            if event.key == "enter":
                self.dismiss(self.ANSWER_KEYS[event.key])
            else:
                self._hold((event.key, event.character, self.ANSWER_KEYS[event.key]))
            return
        if event.key == "space" and self.guard.armed:
            return  # Space never answers (it is the key most likely to be typing)
        if event.is_printable or event.key in ("enter", "backspace"):
            self._type_through(event.key, event.character)

    def _release_held(self) -> None:
        """A held letter a key followed was typing: it goes on to the prompt."""
        if self.held is not None:
            key, character, _ = self.held
            self._hold(None)
            self._type_through(key, character)

    def _type_through(self, key: str, character: str | None) -> None:
        self.guard.typed()
        self._refresh_armed()
        if key != "enter":  # Enter is kept from the prompt: nothing is sent behind a question
            self.app.post_message(self.TypedThrough(key, character))

    def _hold(self, held: tuple[str, str | None, Any] | None) -> None:
        self.held = held
        if held is not None:
            self.guard.hold()
        self.set_class(held is not None, "-held")
        self._show_hint()

    def _show_hint(self) -> None:
        if self.held is not None:
            hint = HELD_HINT.format(key=self.held[0])
        else:
            hint = self.ARMED_HINT if self.armed_shown else self.TYPING_HINT
        self.query_one(f"#{self.HINT_ID}", Static).update(hint)

    def answer_button(self, event: Button.Pressed, answers: Mapping[str, Any]) -> None:
        """A button answers at once once armed (a click is never typing)."""
        event.stop()
        if self.guard.armed and event.button.id in answers:
            self.dismiss(answers[event.button.id])

    def _refresh_armed(self) -> None:
        if self.held is not None and self.guard.settled:
            answer = self.held[2]
            self._hold(None)
            self.dismiss(answer)
            return
        armed = self.guard.armed
        if armed == self.armed_shown:
            return
        self.armed_shown = armed
        self.set_class(armed, "-armed")
        self._show_hint()
        for button in self.query(Button):
            button.disabled = not armed
