"""Where permission rules come from, gathered for one session (tools/rules.py parses them).

- flags: `--allowed-tools` / `--disallowed-tools`;
- the user's config (`[permissions]` in ~/.config/agent/config.toml) and `permissions.allow|ask|deny`
  in their Claude Code settings (`~/.claude/settings.json`, as Claude Code reads it): always;
- the workspace: `[permissions]` in `.agent/config.toml` and `permissions.allow|ask|deny` in
  `.claude/settings.json`, `.claude/settings.local.json` and `.agent/settings.json`. Their deny and
  ask rules always apply (they only make the agent more careful); their allow rules only in a
  trusted workspace (settings/trust.py), since a cloned repository must not be able to allow itself
  to run commands.
A settings file or rule that does not parse gives one warning line naming it (the person's own
`~/.claude/settings.json` included: this is the one place that says it); the rest still works.
An untrusted workspace settings file's allow rules are not warned about here: the trust notice names
that file (settings/trust.py); `GatheredRules.untrusted` keeps the line for /permissions.
A workspace settings file that sets what only the person may (settings/files.py `PERSON_ONLY_KEYS`:
the mode, the sandbox, the environment, credential helpers; and `model`) gets one line naming those
keys; so does the person's own for those we do not read from it (all but a `defaultMode` we have,
`env` and `model`: settings/files.py).
The settings files come parsed (settings/files.py), the same parse the hooks read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.settings.config import Config, PermissionRules
from agent_cli.settings.files import SettingsFile, ignored_keys, load_all_settings
from agent_cli.tools.rules import EFFECTS, SourcedRule, parse_rules


@dataclass(frozen=True)
class GatheredRules:
    rules: tuple[SourcedRule, ...]
    warnings: tuple[str, ...]
    # the allow rules of settings files left out for want of trust: the trust notice already names
    # those files (settings/trust.py), so these are for /permissions, not said again at the start
    untrusted: tuple[str, ...] = ()


def gather_rules(
    config: Config, workspace: Path, trusted: bool, settings: Sequence[SettingsFile] | None = None
) -> GatheredRules:
    """Every rule, in order of source; `settings` are the session's parsed settings files (read
    here when not given)."""
    rules: list[SourcedRule] = []
    warnings: list[str] = []
    untrusted: list[str] = []

    def add(table: PermissionRules, source: str, allow_counts: bool = True, told: bool = False) -> None:
        for effect in EFFECTS:
            texts = getattr(table, effect)
            if effect == "allow" and not allow_counts:
                if texts:
                    (untrusted if told else warnings).append(
                        f"{source}: allow rules ignored (this workspace is not trusted; "
                        "pass --trust-workspace to use them)"
                    )
                continue
            parsed, bad = parse_rules(texts, effect, source)
            rules.extend(parsed)
            warnings.extend(bad)

    flags = config.flag_permissions
    add(PermissionRules(allow=flags.allow), "--allowed-tools")
    add(PermissionRules(deny=flags.deny, ask=flags.ask), "--disallowed-tools")
    add(config.permissions, "user config")
    add(config.workspace_permissions, ".agent/config.toml", trusted)
    files = list(settings if settings is not None else load_all_settings(workspace))
    # the person's own Claude Code settings count like their config; the workspace's need trust to allow
    for file in sorted(files, key=lambda f: f.origin != "user"):
        name = (
            file.path.relative_to(workspace).as_posix()
            if file.path.is_relative_to(workspace)
            else _home_relative(file.path)
        )
        table, problem = (PermissionRules(), file.problem) if file.problem else settings_rules(file.data)
        if problem:
            warnings.append(f"{name}: {problem}")
        if tried := ignored_keys(file):
            why = (
                "a workspace cannot set the mode, the sandbox, credentials, the environment or the model"
                if file.origin == "workspace"
                else "agent does not read them from Claude Code's settings: set them in "
                "~/.config/agent/config.toml, the environment or flags"
            )
            warnings.append(f"{name}: ignored keys {', '.join(tried)} ({why})")
        add(table, name, trusted or file.origin == "user", told=True)
    return GatheredRules(tuple(rules), tuple(warnings), tuple(untrusted))


def settings_rules(data: Mapping[str, Any]) -> tuple[PermissionRules, str]:
    """`permissions.allow|ask|deny` of a parsed Claude Code settings file, and a problem ("" when none)."""
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        return PermissionRules(), '"permissions" must be an object with allow/ask/deny lists; ignored'
    kept: dict[str, tuple[str, ...]] = {}
    problems: list[str] = []
    for effect in EFFECTS:
        value = section.get(effect, [])
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            kept[effect] = tuple(value)
        else:
            problems.append(f"permissions.{effect} must be a list of strings; ignored")
    return PermissionRules(**kept), "; ".join(problems)


def _home_relative(path: Path) -> str:
    """`~/.claude/settings.json` rather than the whole home path, in warnings and rule sources."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
