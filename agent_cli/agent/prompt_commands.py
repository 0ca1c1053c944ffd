"""A prompt command's turn: `/name args` of a Markdown command (extensions/custom_commands.py), a
skill started by name (extensions/skills/) or /init — its expanded body is the prompt, under its
allowed-tools and model for that turn only.

A Markdown command's `@file` mentions attach the file as a typed prompt's do, and each
`` !`command` `` runs first as a bash call (agent/input/router.py `command_calls`), both right after
the prompt: judged as the model's would be (the rules, the command's allowed-tools, the sandbox; an
ask is the permission question, headless a refusal the result says), since the file may be a
repository's. A file it names outside the workspace is the person's yes only in their own command."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from agent_cli.agent.input.calls import PersonCalls
from agent_cli.core.errors import AgentError
from agent_cli.core.events import Event, Notice, TurnFinished
from agent_cli.core.prompt import parts_of
from agent_cli.core.types import Block, BlockMeta, Message, Trust
from agent_cli.extensions.custom_commands import CustomCommand, PromptCommand, without_shell
from agent_cli.extensions.loader import command_rules
from agent_cli.llm.models import ModelFit

Turn = Callable[[str, Callable[[Event], None], Message, PersonCalls | None], Awaitable[TurnFinished]]


class CommandHost(Protocol):
    """What of the session a prompt command's turn uses (agent/runner.py's AgentSession)."""

    clock: Callable[[], float]
    loop: Any  # its `turn` numbers the message
    trusted: bool
    model: str
    permissions: Any  # its `rules` gain the command's allowed-tools for the turn
    person: Any  # its `command_calls`: the mentions and `!` commands of a Markdown command

    def set_model(self, name: str) -> None: ...

    def switch_model(self, name: str) -> ModelFit: ...


async def custom_turn(
    session: CommandHost,
    turn: Turn,
    command: PromptCommand,
    arguments: str,
    prompt: str,
    emit: Callable[[Event], None],
) -> TurnFinished:
    """`prompt`: the `/name args` as given; a paste or piped text in it is data, so then only the
    command file's own mentions and `!` commands count, not the arguments'."""
    label, typed = prompt.strip(), not any(part.pasted for part in parts_of(prompt))
    try:
        text = command.expand(arguments)
    except AgentError as exc:  # a skill's file went away since the start, say
        emit(Notice(f"/{command.name}: {exc}", "error"))
        emit(finished := TurnFinished("error", str(exc), 0, True))
        return finished
    meta = BlockMeta(Trust.USER, "user", session.clock())
    message = Message("user", (Block.text_block(text, meta),), session.loop.turn + 1)
    granted, model = command_rules(command, session.trusted, emit), session.model
    session.permissions.rules += granted
    if command.model and command.model != model and command.origin == "workspace" and not session.trusted:
        emit(
            Notice(
                f"/{command.name} asks for {command.model}: ignored (this workspace is not trusted); "
                f"this turn runs on {model}.",
                "warning",
            )
        )
    elif command.model and command.model != model:  # judged as /model judges it
        fit = session.switch_model(command.model)
        if fit.refused:
            emit(
                Notice(
                    f"/{command.name} asks for {command.model}: {fit.refused} This turn runs on {model}.",
                    "warning",
                )
            )
        elif fit.note:
            emit(Notice(f"/{command.name} runs on {command.model}: {fit.note}", "info"))
    calls = None
    if isinstance(command, CustomCommand):
        given = arguments if typed else ""
        calls = await session.person.command_calls(
            without_shell(command.expand(given)),
            emit,
            own=command.origin == "user",
            commands=command.shell_commands(given),
            why=f"!`…` of /{command.name}",
        )
    try:
        return await turn(label, emit, message, calls)
    finally:
        session.permissions.rules = [r for r in session.permissions.rules if all(r is not g for g in granted)]
        if session.model != model:
            session.set_model(model)
