"""The memory files: instructions every session starts with (the user context, layer 3 of a request).

The person's own, for every workspace: `~/.config/agent/AGENTS.md` (`$XDG_CONFIG_HOME`) and Claude
Code's `~/.claude/CLAUDE.md` (`$CLAUDE_CONFIG_DIR`); the workspace's: `AGENTS.md` and `CLAUDE.md` at its
root (context/assemble.py reads those). `/memory` lists them to open one in an editor: those that
exist, and for a scope that has none, the `AGENTS.md` that saving would create.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_cli.settings.files import claude_user_dir
from agent_cli.settings.trust import user_config_dir

Scope = Literal["user", "workspace"]
MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md")  # the workspace's, in the order they are read


@dataclass(frozen=True)
class MemoryFile:
    scope: Scope
    path: Path
    exists: bool

    @property
    def label(self) -> str:
        whose = "yours, every workspace" if self.scope == "user" else "this workspace"
        return f"{self.path.name} ({whose})" + ("" if self.exists else " — new, created when you save it")


def user_memory_paths(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The person's own memory files, in the order they are read (whether or not they exist)."""
    env = os.environ if env is None else env
    return (user_config_dir(dict(env)) / "AGENTS.md", claude_user_dir(env) / "CLAUDE.md")


def memory_files(workspace: Path, env: Mapping[str, str] | None = None) -> list[MemoryFile]:
    """The memory files to offer for editing: the person's, then the workspace's."""
    out: list[MemoryFile] = []
    for scope, paths in (
        ("user", user_memory_paths(env)),
        ("workspace", tuple(workspace / name for name in MEMORY_NAMES)),
    ):
        present = [MemoryFile(scope, p, True) for p in paths if p.is_file()]  # type: ignore[arg-type]
        out += present or [MemoryFile(scope, paths[0], False)]  # type: ignore[arg-type]
    return out
