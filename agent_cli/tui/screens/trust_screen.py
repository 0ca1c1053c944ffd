"""Workspace trust, asked once before the session is built: this repository carries files that make
the agent run code (hooks, MCP servers, settings). Trust (t) uses them from now on (remembered);
Not now (n, Esc) starts without them and asks again next time.

Like the permission modal it cannot be answered by accident (tui/key_guard.py): the question appears
as the app opens, when the person may already be typing; until it is armed, keys go on to the prompt
(as ArmedModal.TypedThrough) and the buttons are off. Esc (not now) always works.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from agent_cli.core.printable import revealed
from agent_cli.tui.key_guard import KeyGuard
from agent_cli.tui.screens.armed_modal import ArmedModal

ANSWER_KEYS = {"t": True, "n": False, "enter": False}
ARMED_HINT = "t trust · n, Enter or Esc not now"
TYPING_HINT = "keys go to your message while you type · pause to answer · Esc: not now"


@dataclass(frozen=True)
class TrustQuestion:
    workspace: Path
    files: tuple[Path, ...]  # what trust would turn on
    answer: Callable[[bool], str]  # records the answer; returns a line to show ('' for nothing)
    uses: Mapping[Path, str] = field(default_factory=dict)  # what each file would turn on, in words
    broken: tuple[str, ...] = ()  # files that do not parse (with why): not used either way


class TrustScreen(ArmedModal[bool]):
    CSS_PATH = "trust_screen.tcss"
    HINT_ID = "trust-hint"
    ARMED_HINT = ARMED_HINT
    TYPING_HINT = TYPING_HINT
    ANSWER_KEYS = ANSWER_KEYS
    ESCAPE = False

    def __init__(self, question: TrustQuestion, guard: KeyGuard | None = None) -> None:
        super().__init__(guard)
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog") as dialog:
            dialog.border_title = "trust this workspace?"
            yield Static(
                Text.assemble(
                    (str(self.question.workspace), "bold"),
                    " has files that make agent run code on this machine:",
                ),
                id="trust-title",
            )
            yield Static(Text(revealed("\n".join(self._lines()))), id="trust-files")
            if self.question.broken:
                broken = revealed("\n".join(f"  {line}" for line in self.question.broken))
                yield Static(
                    Text(f"These do not parse, so they are not used either way:\n{broken}", style="yellow"),
                    id="trust-broken",
                )
            yield Static(
                Text("Trust it only if you trust where it came from. Without trust, they are ignored."),
                id="trust-reason",
            )
            with Horizontal(id="trust-buttons"):
                yield _button("Trust (t)", "trust", "warning")
                yield _button("Not now (n/Esc)", "not-now", "primary")
            yield Static(TYPING_HINT, id="trust-hint")

    def _lines(self) -> list[str]:
        lines = []
        for path in self.question.files:
            uses = self.question.uses.get(path, "")
            lines.append(f"  {self._shown(path)}" + (f" — {uses}" if uses else ""))
        return lines

    def _shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.question.workspace))
        except ValueError:
            return str(path)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.answer_button(event, {"trust": True, "not-now": False})


def _button(label: str, id: str, variant: str) -> Button:
    button = Button(label, id=id, variant=variant, disabled=True)  # type: ignore[arg-type]
    button.can_focus = False  # Enter on a focused button would answer without arming
    return button
