"""What the app shows for a slash command's result: the transcript cleared or repainted (/clear,
/resume, /rewind), its text inline or in the viewer, and the pickers and viewers the app opens
itself (/context, /resume without an id, /rewind without a prompt). A mixin of `AgentApp`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.core.events import CommandResult
from agent_cli.tui.paste import wants_chip
from agent_cli.tui.screens.context_screen import ContextScreen
from agent_cli.tui.screens.rewind_screen import RewindScreen
from agent_cli.tui.screens.sessions_screen import SessionsScreen
from agent_cli.tui.screens.text_screen import TextScreen
from agent_cli.tui.widgets.command_output import CommandOutput
from agent_cli.tui.widgets.notice import Notice

if TYPE_CHECKING:
    from agent_cli.tui.backend_reader import BackendReader
    from agent_cli.tui.turn_renderer import TurnRenderer
    from agent_cli.tui.widgets.prompt_input import PromptInput
    from agent_cli.tui.widgets.transcript import Transcript


class CommandViews:
    """What the command views use of the app (AgentApp provides them)."""

    renderer: TurnRenderer | None
    transcript: Transcript
    prompt: PromptInput
    reader: BackendReader | None
    long_text_lines: int
    push_screen: Any
    call_later: Any
    run_prompt: Any
    _paint_conversation: Any
    _refresh_commands: Any
    _refresh_cost: Any
    _refresh_status: Any

    async def _command_result(self, event: CommandResult) -> None:
        assert self.renderer is not None
        if not event.is_error and event.name == "clear":
            await self.transcript.clear()
            self.renderer.reset()
        elif not event.is_error and event.name == "rewind" and "prompts" in event.data:
            self._pick_rewind(event.data["prompts"])
            return
        elif (
            not event.is_error
            and event.name == "resume"
            or (not event.is_error and event.name == "rewind" and event.data.get("mode") != "code")
        ):
            await self.transcript.clear()
            self.renderer.reset()
            await self._paint_conversation()
            self._refresh_commands()
            self._refresh_cost()
            said = event.data.get("prompt_text") if event.name == "rewind" else None
            if said and not self.prompt.text.strip():  # as in Claude Code: ready to edit and resend
                self.prompt.set_text(self.prompt.pastes.add(said) if wants_chip(said) else said)
        if event.text:
            if len(event.text.splitlines()) > self.long_text_lines and not event.is_error:
                await self._show_text(event.name, event.text)
            else:
                await self.transcript.add(CommandOutput(event.name, event.text, is_error=event.is_error))
            if event.is_error:
                self.renderer.error_shown()  # the TurnFinished that follows adds no second panel
        self._refresh_status()

    async def _show_text(self, name: str, text: str) -> None:
        await self.transcript.add(Notice(f"/{name}: opened in the viewer (Esc closes it)"))
        self.push_screen(TextScreen(f"/{name}", text))

    async def _show_context(self) -> None:
        if (reader := self.reader) is None:
            await self.transcript.add(Notice("/context is available once a model is loaded", "warning"))
            return
        breakdown, status = reader.breakdown(), reader.status()
        if breakdown is not None and status is not None:
            self.push_screen(ContextScreen(breakdown, status, reader.model, reader.eviction()))

    async def _pick_session(self) -> None:
        if (reader := self.reader) is None:
            await self.transcript.add(Notice("/resume is available once a model is loaded", "warning"))
            return

        def picked(session_id: str | None) -> None:
            if session_id:
                self.call_later(self.run_prompt, f"/resume {session_id}")

        others = [s for s in reader.sessions() if s.id != reader.session_id]  # not the one open now
        self.push_screen(SessionsScreen(others, reader.session_id), callback=picked)

    def _pick_rewind(self, prompts: list) -> None:
        def picked(choice: str | None) -> None:
            if choice:
                self.call_later(self.run_prompt, f"/rewind {choice}")

        self.push_screen(RewindScreen(prompts), callback=picked)
