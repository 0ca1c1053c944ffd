"""`PersonInput`: where a prompt that is not a slash command goes.

- `!command` runs the command (input/shell.py); `# line` adds to the memory file (input/memory_line.py);
- anything else is a turn: the person's message, their words and their pastes as separate blocks
  (a large paste is offloaded on its own; the words typed around it stay theirs), and what their
  `@` mentions and pasted image paths attach, as reads right after it (input/mentions.py).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from agent_cli.agent.input.calls import PersonCalls, person_use
from agent_cli.agent.input.memory_line import add_memory_line, memory_line
from agent_cli.agent.input.mentions import MentionInfo, Mentions
from agent_cli.agent.input.shell import shell_calls, shell_command
from agent_cli.context.prompts import load_prompt
from agent_cli.core.events import CommandResult, Event, Notice, TurnFinished
from agent_cli.core.prompt import parts_of
from agent_cli.core.types import Block, BlockMeta, Message, Trust

if TYPE_CHECKING:
    from pathlib import Path

    from agent_cli.agent.loop import Loop
    from agent_cli.context.engine import ContextEngine
    from agent_cli.tools.mentions.resolve import Attachment

Emit = Callable[[Event], None]
LABEL_CHARS = 500


class InputHost(Protocol):
    """What the router uses of the session (agent/runner.py's AgentSession)."""

    workspace: Path
    loop: Loop
    engine: ContextEngine

    def _turn(
        self, prompt: str, emit: Emit, user_message: Message | None = None, calls: PersonCalls | None = None
    ) -> Awaitable[TurnFinished]: ...


class PersonInput:
    def __init__(self, host: InputHost, mentions: Mentions) -> None:
        self.host = host
        self.mentions = mentions

    async def turn(self, text: str, emit: Emit) -> TurnFinished:
        parts = parts_of(text)
        typed = bool(parts) and not parts[0].pasted  # `!` and `#` are typed, never pasted or piped
        if typed and (command := shell_command(text)) is not None:
            return await self._shell(text, command, emit)
        if typed and (line := memory_line(text)) is not None and all(not p.pasted for p in parts):
            return self._remember(line, emit)
        message, calls = await self.message(text, emit)
        return await self.host._turn(text, emit, message, calls)

    async def message(self, text: str, emit: Emit) -> tuple[Message, PersonCalls | None]:
        """The person's message (words and pastes as their own blocks) and the reads its mentions
        attach; a mention that attaches nothing is said in one notice line."""
        loop = self.host.loop
        meta = BlockMeta(Trust.USER, "user", time.time())
        blocks = tuple(Block.text_block(p.text, meta) for p in parts_of(text) if p.text.strip())
        words = "".join(" " if p.pasted else p.text for p in parts_of(text))
        attached, problems = await self.mentions.attachments(words)
        for line in problems:
            emit(Notice(f"{line} — not attached", "warning"))
        message = Message("user", blocks or (Block.text_block(str(text), meta),), loop.turn + 1)
        return message, self._calls(attached)

    async def command_calls(
        self, words: str, emit: Emit, *, own: bool, commands: Sequence[str] = (), why: str = ""
    ) -> PersonCalls | None:
        """A prompt command's calls: `commands` run first as bash calls judged like the model's (a
        command file's `` !`…` `` is not the person's yes; `why` is their description), then a read
        for each `@` mention in `words`. `own`: the person wrote the words, so a file they name
        outside the workspace is read without asking (a repository's command file asks, as the
        model's read would; headless it is not attached)."""
        attached, problems = await self.mentions.attachments(words, own=own)
        for line in problems:
            emit(Notice(f"{line} — not attached", "warning"))
        shells = tuple(person_use("bash", {"command": c, "description": why}, "shell") for c in commands)
        return self._calls(attached, shells)

    def _calls(self, attached: list[Attachment], first: tuple[Block, ...] = ()) -> PersonCalls | None:
        if not attached and not first:
            return None
        reads = self.mentions.uses(attached)
        named = {use.id for use, found in zip(reads, attached, strict=True) if not found.ask}

        async def run(use: Block, emit: Emit) -> Block:  # a read that asks goes through the question
            return await self.host.loop.calls.run(use, emit, mentioned=use.id in named)

        return PersonCalls((*first, *reads), run)

    async def _shell(self, text: str, command: str, emit: Emit) -> TurnFinished:
        if not command:
            emit(CommandResult("shell", "Type a command after `!`, e.g. `!git status`.", is_error=True))
            finished = TurnFinished("command", "", 0, True)
            emit(finished)
            return finished
        meta = BlockMeta(Trust.USER, "user", time.time())
        message = Message("user", (Block.text_block(str(text), meta),), self.host.loop.turn + 1)
        return await self.host._turn(text, emit, message, shell_calls(command, self.host.loop.calls.run))

    def _remember(self, line: str, emit: Emit) -> TurnFinished:
        if not line:
            text, error = "Type the line to remember after `#`, e.g. `# run tests with pytest -q`.", True
        else:
            try:
                path = add_memory_line(self.host.workspace, line)
            except (ValueError, OSError) as exc:
                text, error = f"Not remembered: {exc}", True
            else:
                text, error = f"Remembered in {path.name}: - {line}", False
                said = load_prompt("memory_line").replace("{file}", path.name).replace("{line}", line)
                self.host.engine.inject(Block.text_block(said, BlockMeta(Trust.USER, "user", time.time())))
        emit(CommandResult("remember", text, is_error=error))
        finished = TurnFinished("command", text, 0, error)
        emit(finished)
        return finished

    async def describe(self, text: str) -> list[MentionInfo]:
        """The prompt's mentions with their token costs (or why not), before it is sent."""
        words = "".join(" " if p.pasted else p.text for p in parts_of(text))
        return await self.mentions.describe(words)

    async def complete(self, query: str) -> list[str]:
        return await self.mentions.complete(query)
