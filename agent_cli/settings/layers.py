"""The config files as layers, and what a workspace's file may not set.

The repository is not trusted: a cloned `.agent/config.toml` is written by whoever wrote the
repository. It may tune the agent (max_turns, [context], [permissions] deny rules, the window and
output limit of a model the built-in registry does not know, and, in a trusted workspace, its MCP
servers and hooks), but never what decides how far the agent trusts it, where the person's key goes
or what each token costs them: trust, the permission mode, the sandbox, the provider, the endpoint,
which variable holds the key, where sessions are kept, where web searches go, the model, the
summarizer model, and any other key of a `[models.NAME]` table (llm/models.py's WORKSPACE_FACTS:
a model's summarizer, provider, prices and caching). Those come only from the person: flags, the environment, `~/.config/agent/config.toml`. A workspace file
that sets one is still used for everything else, and says in one line what it tried (`Layer.warning`).

Trust itself is not a config setting anywhere: it is the person's answer, kept by settings/trust.py,
or `--trust-workspace`. A `trust_workspace` key in the person's own file is ignored too, with a line.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import ConfigError
from agent_cli.llm.models import workspace_facts

Origin = Literal["user", "workspace"]

# Keys (top level, `-` read as `_`) only the person's own config may set; tables are whole.
PERSON_ONLY = (
    "trust_workspace",  # trust is the person's answer, not a setting
    "permission_mode",
    "sandbox",  # mode, network, writable paths, the bwrap program, env_passthrough
    "provider",
    "base_url",
    "openai",  # base_url and api_key_env: the endpoint, and which variable's key is sent there
    "script",  # the scripted provider's script is the model's side of the conversation
    "sessions_dir",  # where the agent keeps (and later runs git on) its own state
    "web",  # where web_search sends queries, and web_fetch's limits
    "model",  # what the person pays for each token: a repository cannot move them to a dearer model
    "summarizer_model",
)
NOT_SETTINGS = ("trust_workspace",)  # not even the person's own file sets these


@dataclass(frozen=True)
class Layer:
    """One config file, parsed, with the keys it may not set taken out (`ignored`, dotted names)."""

    path: Path
    origin: Origin
    data: dict[str, Any] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()

    @property
    def warning(self) -> str:
        """One line naming the file and what of it was ignored ("" when nothing was)."""
        if not self.ignored:
            return ""
        keys = ", ".join(self.ignored)
        trust = "trust is your answer to the trust question, or --trust-workspace"
        if self.origin == "user":
            return f"{shown(self.path)}: ignored {keys} ({trust})"
        why = "only your own ~/.config/agent/config.toml, the environment or flags can set them"
        if "trust_workspace" in self.ignored:
            why += f"; {trust}"
        return f".agent/config.toml: ignored keys {keys} ({why})"


def read_layer(path: Path, origin: Origin) -> Layer:
    """The file at `path` ({} when it does not exist), without what its origin may not set.
    A file that cannot be read or parsed is a ConfigError naming it."""
    if not path.exists():
        return Layer(path, origin)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    forbidden = PERSON_ONLY if origin == "workspace" else NOT_SETTINGS
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in data.items():
        if key.replace("-", "_") in forbidden:
            ignored += _names(key, value)
        elif origin == "workspace" and key == "models" and isinstance(value, dict):
            kept[key], refused = _workspace_models(value)
            ignored += refused
        else:
            kept[key] = value
    return Layer(path, origin, kept, tuple(ignored))


def _workspace_models(tables: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A workspace's `[models.NAME]` tables with only the keys it may set (`models.NAME.KEY` for the
    rest); a table left empty is dropped, so it does not make an unknown model look described.
    A table that is not one is kept for load_config to refuse by name."""
    kept: dict[str, Any] = {}
    ignored: list[str] = []
    for name, table in tables.items():
        if not isinstance(table, dict):
            kept[name] = table
            continue
        allowed = workspace_facts(str(name))
        own = {key: value for key, value in table.items() if str(key).replace("-", "_") in allowed}
        ignored += [f"models.{name}.{key}" for key in table if key not in own]
        if own:
            kept[name] = own
    return kept, ignored


def _names(key: str, value: Any) -> list[str]:
    """`sandbox.mode, sandbox.network` for a table; the key itself otherwise."""
    if isinstance(value, dict) and value:
        return [f"{key}.{name}" for name in value]
    return [key]


def shown(path: Path) -> str:
    """`~/.config/agent/config.toml` rather than the whole home path."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
