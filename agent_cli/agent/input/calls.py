"""Calls a person makes: tool_use blocks the loop places right after their message, answered by the
tools as if the model had called them (agent/loop.py `run(..., calls=...)`). A tool_use of the
person carries `meta.source == "user"`, so the log says who made it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agent_cli.core.events import Event
from agent_cli.core.types import Block, BlockMeta, Trust

Emit = Callable[[Event], None]
RunCall = Callable[[Block, Emit], Awaitable[Block]]  # a tool_use in, its tool_result out


@dataclass(frozen=True)
class PersonCalls:
    uses: tuple[Block, ...]  # tool_use blocks, run in order
    run: RunCall
    ack: Block | None = None  # set: the model does not answer (a `!` command); this closes the turn


def person_use(name: str, tool_input: dict[str, Any], prefix: str = "person") -> Block:
    """A tool_use the person made (an id of the API's shape, not the provider's)."""
    meta = BlockMeta(Trust.USER, "user", time.time(), tool_name=name)
    return Block.tool_use(f"toolu_{prefix}_{secrets.token_hex(8)}", name, tool_input, meta)


def is_person_use(block: Block) -> bool:
    return block.type == "tool_use" and block.meta.source == "user"
