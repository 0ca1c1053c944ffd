"""A prompt command's turn: `/name args` of a Markdown command (extensions/custom_commands.py), a
skill started by name (extensions/skills/) or /init — its expanded body is the prompt, under its
allowed-tools and model for that turn only."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_cli.core.errors import AgentError
from agent_cli.core.events import Event, Notice, TurnFinished
from agent_cli.core.types import Block, BlockMeta, Message, Trust
from agent_cli.extensions.custom_commands import PromptCommand
from agent_cli.extensions.loader import command_rules

if TYPE_CHECKING:
    from agent_cli.agent.runner import AgentSession


async def custom_turn(
    session: AgentSession, command: PromptCommand, arguments: str, label: str, emit: Callable[[Event], None]
) -> TurnFinished:
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
    if command.model and command.model != model:
        session.set_model(command.model)
    try:
        return await session._turn(label, emit, message)
    finally:
        session.permissions.rules = [r for r in session.permissions.rules if all(r is not g for g in granted)]
        if session.model != model:
            session.set_model(model)
