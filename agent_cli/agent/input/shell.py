"""`!command`: the person runs a command without the model. It runs as a bash call of theirs, through
the same permission check (an ask shows the modal in the TUI; headless, what no rule allows is
refused), sandbox, output caps and offload as the model's bash. The command and its output stay in
the conversation for the next prompt, followed by a short note that the person ran it (it keeps the
roles alternating, and tells the model not to run it again)."""

from __future__ import annotations

import time

from agent_cli.agent.input.calls import PersonCalls, RunCall, person_use
from agent_cli.context.prompts import load_prompt
from agent_cli.core.types import Block, BlockMeta, Trust

PERSON_COMMAND_TAG = "person-command"
DESCRIPTION = "run by the person (! in the prompt)"


def shell_command(text: str) -> str | None:
    """The command of a `!` prompt; None when the prompt is not one."""
    return text[1:].strip() if text.startswith("!") else None


def shell_calls(command: str, run: RunCall) -> PersonCalls:
    use = person_use("bash", {"command": command, "description": DESCRIPTION}, "shell")
    meta = BlockMeta(Trust.ASSISTANT, "assistant", time.time(), tag=PERSON_COMMAND_TAG)
    ack = Block.text_block(load_prompt("person_command").strip(), meta)
    return PersonCalls((use,), run, ack)
