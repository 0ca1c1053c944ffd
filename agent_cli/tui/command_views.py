"""What the app shows for a slash command's result: the transcript cleared or repainted (/clear,
/resume, /rewind), its text inline or in the viewer, and the pickers and viewers the app opens
itself (/context, /resume without an id, /rewind without a prompt, /memory and the editor it opens).
A mixin of `AgentApp`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported

from agent_cli.core.events import CommandResult
from agent_cli.tui.paste import wants_chip
from agent_cli.tui.screens.context_screen import ContextScreen
from agent_cli.tui.screens.memory_screen import NOTE, MemoryScreen
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
    suspend: Any
    refresh: Any

    async def _command_result(self, event: CommandResult) -> None:
        assert self.renderer is not None
        if not event.is_error and event.name == "clear":
            await self.transcript.clear()
            self.renderer.reset()
        elif not event.is_error and event.name == "rewind" and "prompts" in event.data:
            self._pick_rewind(event.data["prompts"])
            return
        elif not event.is_error and event.name == "memory" and "memory_files" in event.data:
            self._pick_memory(event.data["memory_files"], str(event.data.get("note", "")))
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
        picker = SessionsScreen(others, reader.session_id, reader.sessions_passed_over())
        self.push_screen(picker, callback=picked)

    def _pick_memory(self, files: list, note: str) -> None:
        def picked(choice: str | None) -> None:
            if choice == NOTE:
                self.push_screen(TextScreen("session-memory note", note))
            elif choice:
                self.call_later(self._edit_memory, choice)

        self.push_screen(MemoryScreen(files), callback=picked)

    async def _edit_memory(self, path: str) -> None:
        """The person's editor on `path`, the app suspended meanwhile (as Claude Code's /memory)."""
        editor = editor_command()
        if editor is None:
            await self.transcript.add(
                Notice(f"no editor found: set $EDITOR (or $VISUAL) to edit {path} from here", "warning")
            )
            return
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)  # ~/.config/agent may not exist yet
            with self.suspend():
                code = subprocess.run([*editor, path], check=False).returncode
        except (OSError, SuspendNotSupported) as exc:
            await self.transcript.add(Notice(f"could not open {editor[0]}: {exc}", "warning"))
            return
        self.refresh()
        said = f"edited {path}" if code == 0 else f"{editor[0]} exited with {code} on {path}"
        await self.transcript.add(Notice(f"{said}: it applies after /clear or in a new session"))

    def _pick_rewind(self, prompts: list) -> None:
        def picked(choice: str | None) -> None:
            if choice:
                self.call_later(self.run_prompt, f"/rewind {choice}")

        self.push_screen(RewindScreen(prompts), callback=picked)


def editor_command(env: dict[str, str] | None = None) -> list[str] | None:
    """$VISUAL, else $EDITOR (with its arguments), else nano, vim or vi when installed."""
    env = dict(os.environ) if env is None else env
    for name in ("VISUAL", "EDITOR"):
        if (value := env.get(name, "").strip()) and (words := shlex.split(value)):
            return words
    found = next((shutil.which(p) for p in ("nano", "vim", "vi") if shutil.which(p)), None)
    return [found] if found else None
