"""The app's keys: Esc interrupts (twice on an empty prompt: /rewind), Ctrl+C interrupts, copies a
selection or quits on a second press, Shift+Tab cycles the permission mode, PageUp/PageDown scroll
the transcript, Ctrl+L clears the screen. A mixin of `AgentApp` (tui/app.py), which binds the keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.actions import SkipAction
from textual.worker import Worker

from agent_cli.agent.api import MODE_CYCLE, AgentBackend
from agent_cli.tui.double_press import DoublePress
from agent_cli.tui.screens.armed_modal import ArmedModal
from agent_cli.tui.screens.permission_screen import PermissionScreen
from agent_cli.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from agent_cli.tui.turn_renderer import TurnRenderer
    from agent_cli.tui.widgets.activity_line import ActivityLine
    from agent_cli.tui.widgets.transcript import Transcript

QUIT_HINT = "press Ctrl+C again to quit"
DRAFT_HINT = "prompt cleared (Up brings it back)"


class KeyActions:
    """What the key actions use of the app (AgentApp sets them)."""

    backend: AgentBackend | None
    renderer: TurnRenderer | None
    transcript: Transcript
    prompt: PromptInput
    activity: ActivityLine
    turn_running: bool
    _clock: Callable[[], float]
    _last_prompt_key: float | None
    _quit_press: DoublePress
    _rewind_press: DoublePress
    _turn: Worker[None] | None
    _interrupting: bool

    def on_prompt_input_edited(self, message: PromptInput.Edited) -> None:
        self._last_prompt_key = self._clock()

    def on_armed_modal_typed_through(self, message: ArmedModal.TypedThrough) -> None:
        self._last_prompt_key = self._clock()
        self.prompt.type_through(message.key, message.character)

    def action_cycle_mode(self) -> None:
        """Shift+Tab: ask → auto-edit → plan → ask (yolo only by flag or /permissions)."""
        if len(self.screen_stack) > 1 or self.backend is None:
            raise SkipAction()
        current = self.backend.permission_mode
        self._set_mode(
            MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)] if current in MODE_CYCLE else "ask"
        )

    def _set_mode(self, mode: str) -> None:
        try:
            assert self.backend is not None
            self.backend.set_permission_mode(mode)
        except Exception as exc:  # noqa: BLE001 - the app stays up and says why
            self._backend_error(f"could not switch to {mode}: {exc}")
        self._refresh_status()

    def action_interrupt(self) -> None:
        if len(self.screen_stack) > 1:
            raise SkipAction()
        if not self.turn_running:
            # Esc Esc on an empty prompt: rewind (as in Claude Code)
            if self.backend is not None and not self.prompt.text.strip() and self._rewind_press.press():
                self.call_later(self.run_prompt, "/rewind", False)  # the picker, not a typed command
                return
            raise SkipAction()
        self._interrupt()

    def action_ctrl_c(self) -> None:
        if self.turn_running:
            if isinstance(self.screen, PermissionScreen):
                self.screen.dismiss("deny")
            self._interrupt()
            return
        if len(self.screen_stack) > 1:
            self.screen.dismiss(None)
            return
        selected = self.screen.get_selected_text() or self.prompt.text_area.selected_text
        if selected:  # Ctrl+C copies a selection, as it does everywhere else
            self.copy_to_clipboard(selected)
            self.activity.show("copied")
            self.set_timer(self._quit_press.window, self._clear_quit_hint)
        elif self.prompt.clear_draft():  # a draft is cleared first (Up brings it back), never quit on
            self._quit_press.reset()
            self.activity.show(DRAFT_HINT)
            self.set_timer(self._quit_press.window, self._clear_quit_hint)
        elif self._quit_press.press():
            self.exit()
        else:
            self.activity.show(QUIT_HINT)
            self.set_timer(self._quit_press.window, self._clear_quit_hint)

    def _clear_quit_hint(self) -> None:
        if self.activity.text in (QUIT_HINT, DRAFT_HINT, "copied"):
            self.activity.show("")

    def _interrupt(self) -> None:
        if self._interrupting:  # asked twice: stop waiting for the backend
            if self._turn is not None:
                self._turn.cancel()
            return
        self._interrupting = True
        self.activity.show("interrupting…", busy=True)
        try:
            assert self.backend is not None
            self.backend.interrupt()
        except Exception:
            if self._turn is not None:
                self._turn.cancel()

    def action_scroll_transcript(self, direction: int) -> None:
        """PageUp/PageDown scroll the transcript while typing goes on in the prompt."""
        if len(self.screen_stack) > 1:
            raise SkipAction()  # a viewer or picker on top scrolls itself
        self.transcript.page(direction)

    async def action_clear_screen(self) -> None:
        await self.transcript.clear()
        if self.renderer is not None:
            self.renderer.reset()
