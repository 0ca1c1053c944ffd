"""Keeping the model aware of its background shells, as an engine attachment source
(context/intake.py's `AttachmentSource`): a compaction may cut the result that gave a shell's id, so
after one the running shells are listed again (T2/T4 pin the list beside the todo list; the other
tiers and /clear get it as a `<system-reminder>` with the next user message), and a shell that
ended is said once, unless the model has read its end already. Nothing is said while nothing changed:
a reminder costs tokens in every later request."""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.tools.shells.manager import Shell, ShellManager, one_line


class ShellReminders:
    def __init__(self, shells: ShellManager, template: str) -> None:
        self.shells = shells
        self.template = template  # prompts/background_shells.md: `{shells}` is the list
        self._compactions: int | None = None  # the engine's count when it last asked
        self._pinned = False  # T2/T4 pinned the list since the last ask

    def pending(self, compactions: int) -> str:
        """At a new user message: the running shells again if the view may have lost them (a
        compaction, or a view that never saw them: the first ask after /clear or /resume), and the
        shells that ended since the last word about them."""
        lost = compactions != self._compactions and not self._pinned
        self._compactions, self._pinned = compactions, False
        ended = [s for s in self.shells.all() if not s.running and not s.told_end]
        running = self.shells.running() if lost else []
        for shell in ended:
            shell.told_end = True
        return self._render(running + ended)

    def pinned(self) -> str:
        """T2/T4's re-attachment: the running shells, beside the todo list."""
        running = self.shells.running()
        self._pinned = bool(running)
        return self._render(running)

    def _render(self, shells: Sequence[Shell]) -> str:
        if not shells:
            return ""
        lines = "\n".join(f"- {s.id} ({s.status_text()}): {one_line(s.command)}" for s in shells)
        return self.template.replace("{shells}", lines).strip()
