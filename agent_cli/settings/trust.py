"""Workspace trust: files in a repository that make the agent run code are used only when trusted.

A repository can carry `.mcp.json` (servers the agent starts), hooks in `.claude/settings.json` or
`.agent/settings.json` (commands the agent runs), `[mcp_servers]`/`[hooks]` in `.agent/config.toml`,
skills (`.claude/skills/` and the like: instructions for the model whose `allowed-tools` skip
permission questions) and sub-agent definitions (`.claude/agents/`: a child's prompt, tools, model).
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
from agent_cli.settings.files import WORKSPACE_SETTINGS, SettingsFile, read_settings

TRUST_FILE = "trusted_workspaces.json"
# Workspace files that can make the agent run code (relative to the workspace root).
MCP_JSON = ".mcp.json"
CODE_FILES = (MCP_JSON, *WORKSPACE_SETTINGS)
# Where a workspace keeps skills, lowest precedence first (extensions/skills/ loads them when trusted).
SKILL_DIRS = (".agents/skills", ".claude/skills", ".agent/skills")
# Where it keeps sub-agent definitions (a child's system prompt, tools and model), lowest first.
AGENT_DIRS = (".claude/agents", ".agent/agents")
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
class WorkspaceFile:
    """A workspace file (or folder) that trust decides about: what trust turns on in it (`uses`), what of
    it applies trusted or not (`applies`), and why it cannot be used either way (`problem`)."""

    path: Path
    uses: str  # "MCP servers", "hooks", "hooks and allow rules", "skills", ...
    applies: str = ""  # e.g. "deny rules": what is used even untrusted
    problem: str = ""  # it does not parse: "" when it does


@dataclass(frozen=True)
class TrustDecision:
    trusted: bool
    files: tuple[WorkspaceFile, ...]  # what the workspace carries that would run code

    @property
    def code_files(self) -> tuple[Path, ...]:
        """The files trust would turn something on in (not those that do not parse)."""
        return tuple(f.path for f in self.files if not f.problem)

    @property
    def ignored(self) -> tuple[Path, ...]:
        """Files that are present but not used, because the workspace is not trusted."""
        return () if self.trusted else self.code_files

    @property
    def broken(self) -> tuple[WorkspaceFile, ...]:
        """Files that do not parse: trust could not turn them on."""
        return tuple(f for f in self.files if f.problem)

    def not_used(self, workspace: Path) -> str:
        """What is not used, file by file, and what of it applies anyway."""
        parts = []
        for f in self.files:
            if f.problem:
                continue
            part = f"the {f.uses} of {_relative(f.path, workspace)}"
            parts.append(part + (f" (its {f.applies} apply)" if f.applies else ""))
        return ", ".join(parts)

    def notice(self, workspace: Path) -> str:
        """The one line a headless run prints when it ignores something (empty when nothing is ignored)."""
        if not self.ignored:
            return ""
        return (
            f"not using {self.not_used(workspace)}: this workspace is not trusted "
            "(pass --trust-workspace to use them)"
        )

    def problems(self, workspace: Path) -> list[str]:
        """One line for each `.mcp.json` that does not parse (a settings file's own readers say theirs)."""
        return [
            f"{_relative(f.path, workspace)} does not parse ({f.problem}): its MCP servers are not used"
            for f in self.broken
            if f.path.name == MCP_JSON
        ]


def _relative(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def workspace_code_files(
    workspace: Path, has_workspace_extensions: bool = False
) -> tuple[WorkspaceFile, ...]:
    """The workspace's files that trust decides about. A settings file holding only deny and ask rules
    is not one of them: those apply either way, so trust would change nothing."""
    found: list[WorkspaceFile] = []
    if (workspace / MCP_JSON).is_file():
        found.append(
            WorkspaceFile(
                workspace / MCP_JSON, "MCP servers", problem=_mcp_json_problem(workspace / MCP_JSON)
            )
        )
    for name in WORKSPACE_SETTINGS:
        if (workspace / name).is_file():
            entry = _settings_entry(read_settings(workspace / name, "workspace"))
            if entry is not None:
                found.append(entry)
    if has_workspace_extensions:
        found.append(WorkspaceFile(workspace / ".agent" / "config.toml", "MCP servers and hooks"))
    found += [
        WorkspaceFile(workspace / name, "skills") for name in SKILL_DIRS if skill_folders(workspace / name)
    ]
    found += [
        WorkspaceFile(workspace / name, "sub-agent definitions")
        for name in AGENT_DIRS
        if (workspace / name).is_dir() and any((workspace / name).glob("*.md"))
    ]
    return tuple(found)


def _settings_entry(file: SettingsFile) -> WorkspaceFile | None:
    if file.problem:
        return WorkspaceFile(file.path, "hooks and rules", problem=file.problem.removesuffix("; ignored"))
    permissions = file.data.get("permissions")
    rules = permissions if isinstance(permissions, dict) else {}
    uses = " and ".join(
        w
        for w, on in (("hooks", bool(file.data.get("hooks"))), ("allow rules", bool(rules.get("allow"))))
        if on
    )
    if not uses:
        return None  # nothing in it waits for trust
    applies = " and ".join(k for k in ("deny", "ask") if rules.get(k))
    return WorkspaceFile(file.path, uses, applies=f"{applies} rules" if applies else "")


def _mcp_json_problem(path: Path) -> str:
    """Why a `.mcp.json` cannot be used ("" when it parses): as extensions/mcp/config.py reads it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read: {exc}"
    except json.JSONDecodeError as exc:
        return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        return 'expected an object like {"mcpServers": {...}}'
    return ""


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
