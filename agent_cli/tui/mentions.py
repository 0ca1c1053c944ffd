"""The app's side of `@` in the prompt: the workspace paths for the word being typed, and what the
prompt's mentions cost, asked of the backend in workers (the latest question wins) and handed back
to the prompt. A mixin of `AgentApp` (tui/app.py); a backend without these methods offers neither."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from agent_cli.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from agent_cli.agent.api import AgentBackend


class MentionActions:
    """What the mention handlers use of the app (AgentApp sets them)."""

    backend: AgentBackend | None
    prompt: PromptInput

    def on_prompt_input_files_wanted(self, message: PromptInput.FilesWanted) -> None:
        message.stop()
        if getattr(self.backend, "complete_files", None) is not None:
            self._complete_files(message.query)

    def on_prompt_input_mentions_changed(self, message: PromptInput.MentionsChanged) -> None:
        message.stop()
        if getattr(self.backend, "describe_mentions", None) is not None:
            self._describe_mentions(message.text)

    @work(exclusive=True, group="complete-files", exit_on_error=False)
    async def _complete_files(self, query: str) -> None:
        assert self.backend is not None
        try:
            paths = await self.backend.complete_files(query)
        except Exception:  # noqa: BLE001 - no completion, typing goes on
            return
        self.prompt.show_file_completions(query, paths)

    @work(exclusive=True, group="describe-mentions", exit_on_error=False)
    async def _describe_mentions(self, text: str) -> None:
        assert self.backend is not None
        try:
            infos = await self.backend.describe_mentions(text)
        except Exception:  # noqa: BLE001 - the chip stays empty; sending says what went wrong
            return
        self.prompt.show_mentions(text, infos)
