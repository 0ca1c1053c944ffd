"""What agent takes from the person's own Claude Code settings (`~/.claude/settings.json`,
`$CLAUDE_CONFIG_DIR`) besides its hooks, permission rules and mode (settings/files.py): its `model`
and `env`, as Claude Code would use them. The file is the person's, so what it says is theirs to
say; it only ever sits below what agent's own settings and the real environment say. Never from a
workspace's `.claude/settings*.json` (the repository is not trusted: settings/files.py names those
keys in a warning and nothing more).

- **The model**: Claude Code's choice — `ANTHROPIC_MODEL` (the environment's, else the file's `env`),
  else the file's `model` — is the model when none of agent's own settings name one (config files,
  `AGENT_MODEL`, `--model`). Claude Code's aliases are read as Claude Code reads them: `opus`,
  `sonnet`, `haiku` name `ANTHROPIC_DEFAULT_<FAMILY>_MODEL` when set, else what models.toml's
  `[aliases]` name (the table `--model sonnet` reads too); `opusplan` is `sonnet` (the model that does the work), a `[1m]`
  suffix is dropped, `default` names nothing.
- **The endpoint and its key** (`ENDPOINT`: `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
  `ANTHROPIC_AUTH_TOKEN`) come from the file's `env` together, and only when neither the environment
  nor agent's config (`base_url`) names any of them: a key never goes to an endpoint named somewhere
  else. When they are passed over, one line says which and why (unless the environment already
  holds the same values).
- **What agent starts** — bash (inside the sandbox), hooks, MCP servers — gets the file's other
  variables below the real environment (a variable the environment sets keeps its value), through
  the same filter as the environment's (tools/sandbox/child_env.py: the agent's keys and
  secret-looking names only when `[sandbox] env_passthrough` names them). A variable does not open
  the sandbox: it opens no path and no network. Those that change how a program is loaded
  (`LD_*`, `DYLD_*`) are not taken: they would act on the sandbox's launcher before it confines
  anything. Of the rest of `env`, agent itself reads nothing (`CLAUDE_CODE_*`, `HTTPS_PROXY`, …: set
  those in the environment).

A value that is not a string (or a number, or true/false) is passed over with one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_cli.llm.models import registry
from agent_cli.settings.files import claude_user_dir, read_settings

ENDPOINT = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
MODEL_VAR = "ANTHROPIC_MODEL"
LOADER_PREFIXES = ("LD_", "DYLD_")  # how a program is loaded: never from the file for what agent starts
FAMILIES = ("opus", "sonnet", "haiku")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ClaudeUser:
    """The parts of the person's Claude Code settings agent uses ("" / () when none)."""

    model: str = ""  # Claude Code's model choice, aliases resolved
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    auth_token: str = field(default="", repr=False)
    child_env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # below the environment
    notes: tuple[str, ...] = ()  # one line each: what of the file was passed over, and why


def claude_user(
    env: Mapping[str, str], *, base_url: str = "", resolve: Callable[[str], str] | None = None
) -> ClaudeUser:
    """What the person's own `settings.json` gives, with `env` (the real environment) and agent's own
    `base_url` above it; `resolve`: the model registry's aliases (the built-in one's when None)."""
    resolve = resolve or registry().resolve
    path = claude_user_dir(env) / "settings.json"
    if not path.is_file():
        return ClaudeUser(model=_model(env, {}, {}, resolve))
    data = read_settings(path, "user").data  # a file that does not parse is said by the rules' reader
    shown = _home_relative(str(path))
    notes: list[str] = []
    variables = _strings(data.get("env"), f"{shown}: env", notes)
    raw = data.get("model")
    if raw is not None and not isinstance(raw, str):
        notes.append(f"{shown}: model must be a string, not {type(raw).__name__}; ignored")
    model = _model(env, data if isinstance(raw, str) else {}, variables, resolve)
    endpoint = {name: variables[name] for name in ENDPOINT if variables.get(name)}
    above = {name: env[name] for name in ENDPOINT if env.get(name)}
    said = [f"the environment sets {', '.join(above)}"] if above else []
    if base_url:
        above["ANTHROPIC_BASE_URL"] = base_url  # agent's config wins over the environment's
        said.append("your config sets base_url")
    if above and any(above.get(name) != value for name, value in endpoint.items()):
        notes.append(
            f"{shown}: env {', '.join(endpoint)} not used: {' and '.join(said)} "
            "(an endpoint and its key are taken from one place)"
        )
    endpoint = {} if above else endpoint
    children = tuple((k, v) for k, v in variables.items() if not k.startswith(LOADER_PREFIXES))
    return ClaudeUser(
        model,
        endpoint.get("ANTHROPIC_BASE_URL", ""),
        endpoint.get("ANTHROPIC_API_KEY", ""),
        endpoint.get("ANTHROPIC_AUTH_TOKEN", ""),
        children,
        tuple(notes),
    )


def _model(
    env: Mapping[str, str],
    data: Mapping[str, Any],
    variables: Mapping[str, str],
    resolve: Callable[[str], str],
) -> str:
    """Claude Code's model choice (the module docstring says in which order), aliases resolved."""
    name = (env.get(MODEL_VAR) or variables.get(MODEL_VAR) or str(data.get("model") or "")).strip()

    def default_of(family: str) -> str:
        var = f"ANTHROPIC_DEFAULT_{family.upper()}_MODEL"
        return env.get(var) or variables.get(var) or ""

    return resolve_alias(name, resolve, default_of)


def resolve_alias(
    name: str, resolve: Callable[[str], str], default_of: Callable[[str], str] = lambda _f: ""
) -> str:
    """A Claude Code model name as a model agent can ask for (the module docstring says how)."""
    base = name.removesuffix("[1m]").strip()
    if base == "default":
        return ""
    family = "sonnet" if base == "opusplan" else base
    if family not in FAMILIES:
        return base
    if chosen := default_of(family).strip():
        return chosen
    return resolve(family)  # models.toml's [aliases]: the one table our flags and config use too


def _strings(value: object, where: str, notes: list[str]) -> dict[str, str]:
    """`env` as names and string values (a number or true/false read as its text, as Claude Code
    does); what is not one is passed over, in one line."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        notes.append(f"{where} must be an object of names and string values; ignored")
        return {}
    kept: dict[str, str] = {}
    for name, raw in value.items():
        text = str(raw).lower() if isinstance(raw, bool) else str(raw) if isinstance(raw, int | str) else None
        if text is not None and _ENV_NAME.match(str(name)) and "\0" not in text:
            kept[str(name)] = text
    if passed := [str(name) for name in value if name not in kept]:
        notes.append(
            f"{where}: {', '.join(passed)} not used (a name of letters, digits and _, a string value)"
        )
    return kept


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~").rstrip("/") + "/"
    return "~/" + path[len(home) :] if path.startswith(home) else path
