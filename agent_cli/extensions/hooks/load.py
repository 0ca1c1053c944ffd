"""Where hooks come from: the user's config and Claude Code settings, and (trusted only) the workspace's.

Order (all of them run; none replaces another, as in Claude Code): `[hooks]` in the user config.toml,
`~/.claude/settings.json`, then in a trusted workspace `.claude/settings.json`,
`.claude/settings.local.json`, `.agent/settings.json` and `[hooks]` in `.agent/config.toml`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from agent_cli.extensions.hooks.api import HookRunner, NoHooks
from agent_cli.extensions.hooks.runner import CommandHooks, HookIdentity, Record
from agent_cli.extensions.hooks.spec import HookGroup, parse_hooks
from agent_cli.settings.config import Config, config_paths
from agent_cli.settings.files import SettingsFile


def hook_groups(
    config: Config, workspace: Path, settings: Sequence[SettingsFile], *, trusted: bool
) -> tuple[list[HookGroup], list[str]]:
    """Every hook group that applies here, and one warning per problem found in them."""
    user_toml, workspace_toml = config_paths(workspace)
    sources: list[tuple[object, str]] = [(config.user_extensions.hooks, str(user_toml))]
    sources += [(f.data.get("hooks"), str(f.path)) for f in settings if not f.error]
    if trusted:
        sources.append((config.workspace_extensions.hooks, str(workspace_toml)))
    groups: list[HookGroup] = []
    warnings: list[str] = []
    for table, source in sources:
        found, problems = parse_hooks(table, source)
        groups += found
        warnings += problems
    return groups, warnings


def build_hooks(
    groups: list[HookGroup],
    workspace: Path,
    identity: Callable[[], HookIdentity],
    record: Record,
    env: Mapping[str, str] | None = None,
) -> HookRunner:
    """`env`: what hook commands see of the environment (default: tools/sandbox/child_env.py's default)."""
    return CommandHooks(groups, workspace, identity, record, env) if groups else NoHooks()
