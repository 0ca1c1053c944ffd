"""Claude Code's JSON settings files, found and parsed once per session: hooks and permission rules
read the same parsed files (`load_all_settings`; the session hands them to both).

Which files, lowest precedence first:
- user:      `$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`): the person's own
             Claude Code settings, always trusted, so their hooks and rules carry over; then the file
             they name with `--settings FILE` (`extra`), theirs too;
- workspace: `.claude/settings.json`, `.claude/settings.local.json`, `.agent/settings.json`, read only
             in a trusted workspace (settings/trust.py): they can make the agent run code.

Permission rules read the workspace's files trusted or not (their deny and ask rules only make the
agent more careful; settings/permission_sources.py); hooks only the files `trusted_files` keeps.
A file that is missing is skipped; one that cannot be read or is not a JSON object comes back with
`problem` set (`error`: one line naming the file) and empty `data`, so every other file still works.

Only `hooks` and `permissions.allow|ask|deny` are read from any of them, and from the person's own
`permissions.defaultMode` (`person_default_mode`: the mode below every config file, the environment
and flags), `model` and `env` (settings/claude_user.py: below agent's own settings and the real
environment). Claude Code's other keys that would change the mode, the sandbox, credentials, the
environment or the model (`PERSON_ONLY_KEYS`, and a workspace's `model`) are never applied; a file
that sets one, the person's or a workspace's, is told about in one line
(settings/permission_sources.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import ConfigError

Origin = Literal["user", "workspace"]
WORKSPACE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json", ".agent/settings.json")
# What a repository's settings file may try to set and never does here: the permission mode and
# directories, the sandbox, the environment, credential helpers (commands), MCP auto-approval.
PERSON_ONLY_KEYS = (
    "permissions.defaultMode",
    "permissions.additionalDirectories",
    "env",
    "sandbox",
    "apiKeyHelper",
    "awsAuthRefresh",
    "awsCredentialExport",
    "otelHeadersHelper",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
)


# Claude Code's permission modes -> ours (`manual` is its newer name for `default`)
CLAUDE_MODES = {
    "default": "ask",
    "manual": "ask",
    "acceptEdits": "auto-edit",
    "plan": "plan",
    "bypassPermissions": "yolo",
}
PERSON_READ_KEYS = ("env", "model")  # read from the person's own file alone (settings/claude_user.py)


@dataclass(frozen=True)
class SettingsFile:
    path: Path
    origin: Origin
    data: Mapping[str, Any] = field(default_factory=dict)
    problem: str = ""  # what is wrong with the file ("" when nothing); data is empty then

    @property
    def error(self) -> str:
        """One line: "<path>: <what is wrong>" ("" when nothing is)."""
        return f"{self.path}: {self.problem}" if self.problem else ""


def claude_user_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's user directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR", "")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def settings_paths(
    workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None, extra: Path | None = None
) -> list[tuple[Path, Origin]]:
    """The settings files that apply here, lowest precedence first (whether or not they exist)."""
    paths: list[tuple[Path, Origin]] = [(claude_user_dir(env) / "settings.json", "user")]
    paths += [(extra, "user")] if extra is not None else []
    if trusted:
        paths += [(workspace / name, "workspace") for name in WORKSPACE_SETTINGS]
    return paths


def load_settings(
    workspace: Path, *, trusted: bool, env: Mapping[str, str] | None = None
) -> list[SettingsFile]:
    """The existing settings files that may run code here, parsed (the module docstring says which)."""
    return trusted_files(load_all_settings(workspace, env), trusted)


def load_all_settings(
    workspace: Path, env: Mapping[str, str] | None = None, extra: Path | None = None
) -> list[SettingsFile]:
    """Every existing settings file, the user's and the workspace's whether trusted or not, parsed:
    each reader keeps what it may use. `extra`: the person's `--settings FILE`."""
    return [
        read_settings(path, origin)
        for path, origin in settings_paths(workspace, trusted=True, env=env, extra=extra)
        if path.is_file()
    ]


def trusted_files(files: Sequence[SettingsFile], trusted: bool) -> list[SettingsFile]:
    """The files whose hooks may run: the user's own, and the workspace's when it is trusted."""
    return [f for f in files if f.origin == "user" or trusted]


def read_settings(path: Path, origin: Origin) -> SettingsFile:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return SettingsFile(path, origin, problem=f"cannot be read ({exc}); ignored")
    if not text.strip():
        return SettingsFile(path, origin)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        return SettingsFile(path, origin, problem=f"invalid JSON at {where}: {exc.msg}; ignored")
    if not isinstance(data, dict):
        return SettingsFile(
            path, origin, problem=f"must be a JSON object, not {type(data).__name__}; ignored"
        )
    return SettingsFile(path, origin, data)


def person_default_mode(env: Mapping[str, str] | None = None, extra: Path | None = None) -> str | None:
    """Our name for the `permissions.defaultMode` of the person's own Claude Code settings (their
    `--settings FILE`'s over ~/.claude's); None when it is not set, or names a mode we do not have
    (`dontAsk`, `auto`: said by `ignored_keys`)."""
    found = None
    for path in (claude_user_dir(env) / "settings.json", extra):
        mode = _default_mode(read_settings(path, "user").data) if path and path.is_file() else None
        found = CLAUDE_MODES.get(mode, found) if isinstance(mode, str) else found
    return found


def read_named_settings(value: str) -> Path:
    """The settings file the person named with `--settings`, checked: a ConfigError naming it when it
    is missing or is not a JSON object (they asked for it, so it is not skipped with a warning)."""
    path = Path(value).expanduser().absolute()
    if not path.is_file():
        raise ConfigError(f"--settings {value}: no such file")
    if problem := read_settings(path, "user").problem:
        raise ConfigError(f"--settings {value}: {problem.removesuffix('; ignored')}")
    return path


def ignored_keys(file: SettingsFile) -> list[str]:
    """What of `file` is not applied and is worth a line: for a workspace's, the `PERSON_ONLY_KEYS` and
    the `model` it sets; for the person's own, those we do not read (a `defaultMode` we have is read,
    and `env` and `model` are: settings/claude_user.py)."""
    if file.origin == "workspace":
        return person_only_keys(file.data, (*PERSON_ONLY_KEYS, "model"))
    mode = _default_mode(file.data)
    return [
        key
        for key in person_only_keys(file.data)
        if key not in PERSON_READ_KEYS
        and (key != "permissions.defaultMode" or not (isinstance(mode, str) and mode in CLAUDE_MODES))
    ]


def _default_mode(data: Mapping[str, Any]) -> object:
    section = data.get("permissions")
    return section.get("defaultMode") if isinstance(section, Mapping) else None


def person_only_keys(data: Mapping[str, Any], keys: Sequence[str] = PERSON_ONLY_KEYS) -> list[str]:
    """The `keys` (`PERSON_ONLY_KEYS`) a parsed settings file sets, dotted, in that order."""
    found = []
    for dotted in keys:
        table: Any = data
        *parents, last = dotted.split(".")
        for part in parents:
            table = table.get(part) if isinstance(table, Mapping) else None
        if isinstance(table, Mapping) and last in table:
            found.append(dotted)
    return found
