"""Configuration: ~/.config/agent/config.toml < .agent/config.toml < environment < flags."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.context.model import ContextConfig
from agent_cli.core.errors import ConfigError
from agent_cli.llm.models import DEFAULT_MODEL
from agent_cli.tools.permissions import MODES as PERMISSION_MODES  # one list of modes

PROVIDERS = ("anthropic", "scripted", "openai")


@dataclass(frozen=True)
class Config:
    model: str = DEFAULT_MODEL
    provider: str = "anthropic"
    summarizer_model: str = ""  # "" = the cheap model of the same provider
    permission_mode: str = "ask"
    max_turns: int = 100  # model calls per prompt
    max_tokens: int = 16_000  # output tokens per response
    context_window: int = 0  # 0 = what we know of the model (unknown models: 200k)
    sessions_dir: str = ""  # "" = <workspace>/.agent/sessions
    script: str = ""  # the scripted provider's script
    base_url: str = ""  # "" = ANTHROPIC_BASE_URL or the SDK's default
    debug: bool = False  # check the invariants after every transformation at run time
    context: ContextConfig = field(default_factory=ContextConfig)

    def sessions_root(self, workspace: Path) -> Path:
        return (
            Path(self.sessions_dir).expanduser() if self.sessions_dir else workspace / ".agent" / "sessions"
        )


ENV = {
    "AGENT_MODEL": "model",
    "AGENT_PROVIDER": "provider",
    "AGENT_SUMMARIZER_MODEL": "summarizer_model",
    "AGENT_PERMISSION_MODE": "permission_mode",
    "AGENT_MAX_TURNS": "max_turns",
    "AGENT_MAX_TOKENS": "max_tokens",
    "AGENT_SESSIONS_DIR": "sessions_dir",
    "AGENT_DEBUG": "debug",
    "AGENT_CONTEXT_BUDGET_TOKENS": "context.budget_tokens",
    "AGENT_AUTO_COMPACT": "context.auto_compact",
    "AGENT_TOOL_TRACE": "context.tool_trace",
    "AGENT_CACHE_TTL": "context.cache_ttl",
}


def config_paths(workspace: Path) -> list[Path]:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [base / "agent" / "config.toml", workspace / ".agent" / "config.toml"]


def load_config(
    workspace: Path, overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> Config:
    """Merge the layers; `overrides` are the flags (dotted keys for [context], e.g. context.budget_tokens)."""
    env = dict(os.environ) if env is None else env
    values: dict[str, Any] = {}
    for path in config_paths(workspace):
        if path.exists():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{path}: {exc}") from exc
            values.update(_flatten(data))
    for var, key in ENV.items():
        if env.get(var, "") != "":
            values[key] = env[var]
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key] = value
    return _build(values)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}".replace("-", "_")
        if isinstance(value, dict) and name == "context":
            out.update(_flatten(value, "context."))
        else:
            out[name] = value
    return out


def _coerce(name: str, value: Any, default: Any) -> Any:
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if isinstance(default, int):
            return int(str(value).replace("_", "").replace(",", ""))
        if isinstance(default, float):
            return float(value)
        return str(value)
    except ValueError:
        raise ConfigError(f"config {name}: {value!r} is not a valid {type(default).__name__}") from None


def _build(values: dict[str, Any]) -> Config:
    top = {f.name: f for f in dataclasses.fields(Config)}
    ctx_fields = {f.name: f for f in dataclasses.fields(ContextConfig)}
    ctx_defaults = ContextConfig()
    defaults = Config()
    kwargs: dict[str, Any] = {}
    ctx_kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key.startswith("context."):
            name = key.removeprefix("context.")
            if name not in ctx_fields:
                raise ConfigError(f"unknown setting context.{name}")
            ctx_kwargs[name] = _coerce(key, value, getattr(ctx_defaults, name))
        elif key in top and key != "context":
            kwargs[key] = _coerce(key, value, getattr(defaults, key))
        else:
            raise ConfigError(f"unknown setting {key!r}")
    if ctx_kwargs.get("cache_ttl") == "1h":
        ctx_kwargs.setdefault("cache_ttl_seconds", 3600.0)
    config = Config(**kwargs, context=ContextConfig(**ctx_kwargs))
    if config.permission_mode not in PERMISSION_MODES:
        raise ConfigError(
            f"permission mode {config.permission_mode!r}: use one of {', '.join(PERMISSION_MODES)}"
        )
    if config.provider not in PROVIDERS:
        raise ConfigError(f"provider {config.provider!r}: use one of {', '.join(PROVIDERS)}")
    if config.context.budget_tokens < 1_000:
        raise ConfigError("context.budget_tokens must be at least 1000")
    return config
