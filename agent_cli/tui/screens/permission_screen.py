"""The permission modal: allow once (Enter), always for this session (a), or deny (d, Esc).

It dismisses with the decision; whoever pushed it resolves the loop's Future with it. Nothing runs
before the answer: the backend awaits that Future.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_cli.core.events import PermissionDecision, PermissionRequest


class PermissionScreen(ModalScreen[PermissionDecision]):
    CSS_PATH = "permission_screen.tcss"
    BINDINGS = [
        Binding("a", "decide('allow_always')", "always for this session"),
        Binding("d,escape", "decide('deny')", "deny"),
        Binding("enter", "decide('allow_once')", "allow once", show=False),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(self, tool: str, target: str = "", reason: str = "") -> None:
        super().__init__()
        self.tool = tool
        self.target = target
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "permission needed"
            yield Static(Text.assemble("Allow ", (self.tool, "bold"), "?"), id="permission-title")
            if self.target:
                yield Static(Text(self.target), id="permission-target")
            if self.reason:
                yield Static(Text(self.reason), id="permission-reason")
            with Horizontal(id="permission-buttons"):
                yield Button("Allow once ⏎", id="allow_once", variant="primary")
                yield Button("Always this session (a)", id="allow_always", variant="default")
                yield Button("Deny (d/Esc)", id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        decision = event.button.id
        if decision in ("allow_once", "allow_always", "deny"):
            self.dismiss(decision)  # type: ignore[arg-type]

    def action_decide(self, decision: PermissionDecision) -> None:
        self.dismiss(decision)


def ask_permission(
    app: App[Any], event: PermissionRequest, on_answer: Callable[[PermissionDecision], None] | None = None
) -> PermissionScreen | None:
    """Show the modal for `event`; the answer resolves `event.future` (then `on_answer` runs).

    If the loop stops waiting first (an interrupt cancels the future), the modal closes by itself.
    """
    future = event.future
    if future is None or future.done():
        return None
    screen = PermissionScreen(event.call.name if event.call else "tool", event.target, event.reason)

    def answer(decision: PermissionDecision | None) -> None:
        decision = decision or "deny"
        if not future.done():
            future.set_result(decision)
        if on_answer is not None:
            on_answer(decision)

    def withdrawn(_: object) -> None:
        if app.screen is screen:
            screen.dismiss("deny")

    app.push_screen(screen, callback=answer)
    future.add_done_callback(withdrawn)
    return screen
