"""Where permission rules come from, gathered for one session (tools/rules.py parses them).

- flags: `--allowed-tools` / `--disallowed-tools`;
- the user's config (`[permissions]` in ~/.config/agent/config.toml): always;
- the workspace: `[permissions]` in `.agent/config.toml` and `permissions.allow|ask|deny` in
  `.claude/settings.json`, `.claude/settings.local.json` and `.agent/settings.json`. Their deny and
  ask rules always apply (they only make the agent more careful); their allow rules only in a
  trusted workspace (agent/trust.py), since a cloned repository must not be able to allow itself
  to run commands.
A settings file or rule that does not parse gives one warning line naming it; the rest still works.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agent_cli.agent.config import Config, PermissionRules
from agent_cli.agent.settings import WORKSPACE_SETTINGS
from agent_cli.tools.rules import EFFECTS, SourcedRule, parse_rules

SETTINGS_FILES = WORKSPACE_SETTINGS  # the same files hooks read (agent/settings.py)


@dataclass(frozen=True)
class GatheredRules:
    rules: tuple[SourcedRule, ...]
    warnings: tuple[str, ...]


def gather_rules(config: Config, workspace: Path, trusted: bool) -> GatheredRules:
    rules: list[SourcedRule] = []
    warnings: list[str] = []

    def add(table: PermissionRules, source: str, allow_counts: bool = True) -> None:
        for effect in EFFECTS:
            texts = getattr(table, effect)
            if effect == "allow" and not allow_counts:
                if texts:
                    warnings.append(
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
    for name in SETTINGS_FILES:
        path = workspace / name
        if not path.is_file():
            continue
        table, problem = read_settings_rules(path)
        if problem:
            warnings.append(f"{name}: {problem}")
        add(table, name, trusted)
    return GatheredRules(tuple(rules), tuple(warnings))


def read_settings_rules(path: Path) -> tuple[PermissionRules, str]:
    """`permissions.allow|ask|deny` of a Claude Code settings file, and a problem ("" when none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return PermissionRules(), f"cannot read it ({exc}); its permission rules are ignored"
    except json.JSONDecodeError as exc:
        return PermissionRules(), f"not valid JSON ({exc}); its permission rules are ignored"
    section = data.get("permissions", {}) if isinstance(data, dict) else None
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
