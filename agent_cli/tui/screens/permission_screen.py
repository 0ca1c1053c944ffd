"""The permission modal: allow once (Enter), always (a: the rule it saves is shown), or deny (d, Esc).

It cannot be answered by accident. Keys that belong to typing in progress — before the modal has been
on screen half a second, or less than a second after the previous key typed, or a letter another key
follows at once (the start of a message typed while the question sat unnoticed) — go on to the prompt
(posted as `TypedThrough`), never to the modal; Space never answers; the key hints and buttons light up
only once it is armed (tui/key_guard.py, screens/armed_modal.py). Esc (deny) always works: denying is
never the harmful answer. It shows what is judged: the full command and where it runs for bash, the diff for edits,
each with its control characters, bidi controls and invisible format characters shown as escapes
(core/printable.py's `revealed`): the question cannot show another file or command than the one asked about.

It dismisses with the decision; whoever pushed it resolves the loop's Future with it. Nothing runs
before the answer: the backend awaits that Future.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from agent_cli.core.events import PermissionDecision, PermissionRequest
from agent_cli.core.printable import revealed
from agent_cli.tui.key_guard import KeyGuard
from agent_cli.tui.screens.armed_modal import ArmedModal

VERBS = {
    "bash": "bash",
    "edit_file": "edit",
    "write_file": "write",
    "read_file": "read",
    "web_fetch": "fetching",
    "web_search": "a web search for",
}
ANSWER_KEYS: dict[str, PermissionDecision] = {
    "enter": "allow_once",
    "y": "allow_once",
    "a": "allow_always",
    "d": "deny",
    "n": "deny",
}
ARMED_HINT = "Enter allow once · a always · d or Esc deny · ↑↓ scroll"
TYPING_HINT = "keys go to your message while you type · pause to answer · Esc denies"


class PermissionScreen(ArmedModal[PermissionDecision]):
    CSS_PATH = "permission_screen.tcss"
    HINT_ID = "permission-hint"
    ARMED_HINT = ARMED_HINT
    TYPING_HINT = TYPING_HINT
    ANSWER_KEYS = ANSWER_KEYS
    ESCAPE = "deny"
    DETAIL_ID = "permission-detail"

    def __init__(
        self,
        tool: str,
        target: str = "",
        reason: str = "",
        *,
        rule: str = "",
        detail: str = "",
        detail_kind: str = "",
        cwd: str = "",
        guard: KeyGuard | None = None,
    ) -> None:
        super().__init__(guard)
        self.tool = tool
        self.target = target
        self.reason = reason
        self.rule = rule
        self.detail = detail
        self.detail_kind = detail_kind
        self.cwd = cwd

    @property
    def title_text(self) -> str:
        verb = VERBS.get(self.tool, self.tool)
        if self.tool == "bash" or not self.target:
            return f"Allow {verb}?"
        shown = revealed(self.target)
        target = shown if len(shown) <= 60 else shown[:59] + "…"
        return f"Allow {verb} {target}?"

    def compose(self) -> ComposeResult:
        with Vertical(id="permission-dialog") as dialog:
            dialog.border_title = "permission needed"
            yield Static(Text(self.title_text, style="bold"), id="permission-title")
            body = self._body()
            if body is not None:
                with VerticalScroll(id="permission-detail", can_focus=False):
                    yield Static(body, id="permission-detail-text")
            if self.detail_kind == "command" and self.cwd:
                yield Static(Text.assemble(("in ", "dim"), revealed(self.cwd)), id="permission-cwd")
            if self.reason:
                yield Static(Text(revealed(self.reason)), id="permission-reason")
            if self.rule:
                yield Static(
                    Text.assemble(("Always (a) ", "bold"), revealed(self.rule)), id="permission-rule"
                )
            with Horizontal(id="permission-buttons"):
                yield _button("Allow once ⏎", "allow_once", "primary")
                yield _button("Always (a)", "allow_always", "default")
                yield _button("Deny (d/Esc)", "deny", "error")
            yield Static(TYPING_HINT, id="permission-hint")

    def _body(self) -> Syntax | Text | None:
        text = (self.detail or self.target).rstrip("\n")
        if not text:
            return None
        # what runs, ESC and bidi shown (a CRLF file's line ends are not news in its diff)
        text = revealed(text.replace("\r\n", "\n") if self.detail_kind == "diff" else text)
        if self.detail_kind == "diff":
            return Syntax(text, "diff", theme="ansi_dark", word_wrap=True, background_color="default")
        if self.detail_kind == "command" or self.tool == "bash":
            return Syntax(text, "bash", theme="ansi_dark", word_wrap=True, background_color="default")
        return Text(text)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.answer_button(event, {d: d for d in ("allow_once", "allow_always", "deny")})


def _button(label: str, id: str, variant: str) -> Button:
    button = Button(label, id=id, variant=variant, disabled=True)  # type: ignore[arg-type]
    button.can_focus = False  # Enter and Space on a focused button would answer without arming
    return button


def ask_permission(
    app: App[Any],
    event: PermissionRequest,
    on_answer: Callable[[PermissionDecision], None] | None = None,
    guard: KeyGuard | None = None,
) -> PermissionScreen | None:
    """Show the modal for `event`; the answer resolves `event.future` (then `on_answer` runs).

    If the loop stops waiting first (an interrupt cancels the future), the modal closes by itself.
    """
    future = event.future
    if future is None or future.done():
        return None
    screen = PermissionScreen(
        event.call.name if event.call else "tool",
        event.target,
        event.reason,
        rule=event.rule,
        detail=event.detail,
        detail_kind=event.detail_kind,
        cwd=event.cwd,
        guard=guard,
    )

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
