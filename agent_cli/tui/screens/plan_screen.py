"""The finished plan, shown for approval when a plan-mode turn ends.

Approve (Enter or y) switches back to the mode from before planning and lets the model go ahead;
reject (n or Esc) stays in plan mode so the person can say what to change. Like the permission
modal, it cannot be answered by keys that were typing in progress (tui/key_guard.py).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Markdown, Static

from agent_cli.core.printable import printable
from agent_cli.tui.key_guard import KeyGuard
from agent_cli.tui.screens.armed_modal import ArmedModal

ARMED_HINT = "Enter or y approve · n or Esc keep planning · ↑↓ scroll"
TYPING_HINT = "keys go to your message while you type · pause to answer · Esc keeps planning"


class PlanScreen(ArmedModal[bool]):
    CSS_PATH = "permission_screen.tcss"
    HINT_ID = "permission-hint"
    ARMED_HINT = ARMED_HINT
    TYPING_HINT = TYPING_HINT
    ANSWER_KEYS = {"enter": True, "y": True, "n": False}
    ESCAPE = False
    DETAIL_ID = "permission-detail"

    def __init__(self, plan: str, back_to: str, guard: KeyGuard | None = None) -> None:
        super().__init__(guard)
        self.plan = plan
        self.back_to = back_to

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "plan ready"
            yield Static(f"Approve this plan and switch to {self.back_to} mode?", id="permission-title")
            with VerticalScroll(id="permission-detail", can_focus=False):
                yield Markdown(printable(self.plan))
            with Horizontal(id="permission-buttons"):
                for label, id, variant in (
                    ("Approve ⏎", "approve", "primary"),
                    ("Keep planning (n/Esc)", "reject", "default"),
                ):
                    button = Button(label, id=id, variant=variant, disabled=True)  # type: ignore[arg-type]
                    button.can_focus = False
                    yield button
            yield Static(TYPING_HINT, id="permission-hint")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.answer_button(event, {"approve": True, "reject": False})
