"""Workspace trust: files in a repository that make the agent run code are used only when trusted.

A repository can carry `.mcp.json` (servers the agent starts), hooks in `.claude/settings.json` or
`.agent/settings.json` (commands the agent runs), `[mcp_servers]`/`[hooks]` in `.agent/config.toml`,
and skills (`.claude/skills/` and the like: instructions for the model whose `allowed-tools` skip
permission questions).
Cloning a repository must not be enough to run its code on the person's machine, so these are used
only in a workspace the person trusted: asked once in the TUI (remembered in the user config
directory), or `--trust-workspace` headless. The user's own config is always trusted.

Nothing in the workspace can say it is trusted (settings/layers.py). An answer is kept for the
workspace's real path (`os.path.realpath`): a symlinked checkout is the same workspace; a folder
inside it, a clone beside it or another directory of the same name is not, and is asked about itself.
The store is the person's own file, 0600 in a 0700 directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.files import PRIVATE_FILE, atomic_write

TRUST_FILE = "trusted_workspaces.json"
# Workspace files that can make the agent run code (relative to the workspace root).
CODE_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".agent/settings.json")
# Where a workspace keeps skills, lowest precedence first (extensions/skills/ loads them when trusted).
SKILL_DIRS = (".agents/skills", ".claude/skills", ".agent/skills")
SKILL_FILE = "SKILL.md"


def user_config_dir(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "agent"


@dataclass(frozen=True)
class TrustStore:
    """The list of trusted workspace roots, a JSON file in the user config directory."""

    path: Path

    @classmethod
    def default(cls) -> TrustStore:
        return cls(user_config_dir() / TRUST_FILE)

    def roots(self) -> list[str]:
        """The trusted workspaces' real paths, as stored (never resolved again: a stored path that
        has since become a symlink does not pass its trust to where it points)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # missing or unreadable: nothing is trusted, which is the safe reading
        entries = data.get("trusted", []) if isinstance(data, dict) else []
        return [p for p in entries if isinstance(p, str)]

    def is_trusted(self, workspace: Path) -> bool:
        """The person said yes for this very workspace (by its real path)."""
        return real_path(workspace) in self.roots()

    def trust(self, workspace: Path) -> None:
        roots = self.roots()
        here = real_path(workspace)
        if here not in roots:
            roots.append(here)
        atomic_write(self.path, json.dumps({"trusted": sorted(roots)}, indent=2) + "\n", mode=PRIVATE_FILE)


def real_path(workspace: Path) -> str:
    """The key a trust answer is kept under: the path with every symlink resolved."""
    return os.path.realpath(workspace)


@dataclass(frozen=True)
class TrustDecision:
    trusted: bool
    code_files: tuple[Path, ...]  # what the workspace carries that would run code

    @property
    def ignored(self) -> tuple[Path, ...]:
        """Files that are present but not used, because the workspace is not trusted."""
        return () if self.trusted else self.code_files

    def notice(self, workspace: Path) -> str:
        """The one line a headless run prints when it ignores something (empty when nothing is ignored)."""
        if not self.ignored:
            return ""
        names = ", ".join(str(p.relative_to(workspace)) for p in self.ignored)
        return f"ignoring {names}: this workspace is not trusted (pass --trust-workspace to use them)"


def workspace_code_files(workspace: Path, has_workspace_extensions: bool = False) -> tuple[Path, ...]:
    found = [workspace / name for name in CODE_FILES if (workspace / name).is_file()]
    if has_workspace_extensions:
        found.append(workspace / ".agent" / "config.toml")
    found += [workspace / name for name in SKILL_DIRS if skill_folders(workspace / name)]
    return tuple(found)


def skill_folders(directory: Path) -> list[Path]:
    """The folders right inside `directory` that hold a SKILL.md."""
    try:
        return (
            sorted(e for e in directory.iterdir() if (e / SKILL_FILE).is_file()) if directory.is_dir() else []
        )
    except OSError:
        return []


def decide_trust(
    workspace: Path, *, flag: bool, store: TrustStore, has_workspace_extensions: bool = False
) -> TrustDecision:
    """Trusted by the flag, or by an earlier "yes" for this workspace (its real path)."""
    files = workspace_code_files(workspace, has_workspace_extensions)
    return TrustDecision(flag or store.is_trusted(workspace), files)
