"""`/init`: a built-in prompt command (prompts/init.md) that has the model explore the repository
through the read-only `explore` sub-agent, so the exploration stays out of this conversation, and then
write or update the workspace's instruction file with write_file or edit_file, which ask and show the
diff like any edit (headless without permission: denied, and the run says so).

The file is `AGENTS.md`; when only `CLAUDE.md` exists, that one is updated instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_cli.context.prompts import load_prompt
from agent_cli.core.types import CommandSpec

NAME = "init"
HELP = "explore the repository with a read-only sub-agent, then write or update AGENTS.md (asks first)"


def target_file(workspace: Path) -> tuple[str, bool]:
    """(the instruction file /init writes, whether it exists already)."""
    for name in ("AGENTS.md", "CLAUDE.md"):
        if (workspace / name).is_file():
            return name, True
    return "AGENTS.md", False


@dataclass(frozen=True)
class InitCommand:
    """A PromptCommand (extensions/custom_commands.py)."""

    workspace: Path
    name: str = NAME
    origin: str = "builtin"
    allowed_tools: tuple[str, ...] = ()  # the write asks, as any edit does
    model: str = ""

    def expand(self, arguments: str) -> str:
        target, exists = target_file(self.workspace)
        action = "update" if exists else "create"
        values = {  # in this order: the write step names {target}; the person's words come last
            "{write_step}": load_prompt(f"init/{action}").strip(),
            "{action}": action,
            "{target}": target,
            "{focus}": f"\nThe person added: {arguments.strip()}" if arguments.strip() else "",
        }
        text = load_prompt("init/explore_and_write")
        for key, value in values.items():
            text = text.replace(key, value)
        return text.strip()

    def spec(self, workspace: Path) -> CommandSpec:
        return CommandSpec(self.name, "[focus]", HELP)
