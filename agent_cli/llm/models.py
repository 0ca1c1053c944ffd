"""The model registry: windows, output limits, prices, caching, provider — from models.toml, with the
user's `[models.NAME]` tables from config laid over it.

Claude Code's aliases (`sonnet`, `opus`, `haiku`, ...) are models.toml's [aliases]: each names the
newest model of its family here, and the config resolves one when it is read (`resolve`); the ones
that are a behaviour rather than a model (`opusplan`) are [unsupported_aliases], refused with why.

An unknown model gets models.toml's [default] (a 200k window) and `ModelRegistry.warning` says so, once
per session, with how to describe it. Lookups accept a date suffix (`claude-sonnet-4-5-20250929`,
`gpt-4o-2024-08-06`) and a routing prefix (`anthropic/claude-sonnet-5-5`, as LiteLLM names them).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from importlib import resources
from typing import Any

from agent_cli.core.errors import ConfigError
from agent_cli.core.types import ModelInfo

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_SUMMARIZER = "claude-haiku-5-5"
NO_CACHE_MIN_TOKENS = 10**12  # `prompt_cache = false`: no prefix is ever long enough to be cached

# the keys of a model's table, and the ModelInfo field each sets (None: not a ModelInfo field)
_KEYS: dict[str, str | None] = {
    "window": "context_window",
    "max_output": "max_output_tokens",
    "input_price": "input_price",
    "output_price": "output_price",
    "cache_write": "cache_write_multiplier",
    "cache_write_1h": "cache_write_1h_multiplier",
    "cache_read": "cache_read_multiplier",
    "cache_min_tokens": "cache_min_tokens",
    "prompt_cache": None,
    "provider": None,
    "summarizer": None,
    "thinking_binding": None,
    "thinking_turns": None,
}
# What a workspace's `.agent/config.toml` may say of a model (settings/layers.py takes out the rest,
# with a warning): only what a model the built-in registry does not know needs to work at all (a
# 32k-window model overflows the 200k default; one with 8k output tokens refuses every request that
# asks for 32k), and nothing of a model models.toml knows. Every other key changes which model is
# called (summarizer), whose it is (provider), what is spent (prompt_cache, cache_min_tokens, the
# thinking facts) or what the person is shown it costs (the prices): the person's own config alone
# sets those. A window set too small does no more than the `[context] budget_tokens` a workspace
# may set anyway; one set too large is met by the endpoint's own limit, as an unknown model's is.
WORKSPACE_FACTS = ("window", "max_output")
_DATED = re.compile(r"^[-@](\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


@dataclass(frozen=True)
class ModelEntry:
    info: ModelInfo
    provider: str = ""
    summarizer: str = ""  # "" = the model itself
    known: bool = True
    binds_thinking: bool = False  # preserved thinking: blocks bound to their prefix (thinking_binding.py)
    thinking_turns: int = 0  # the API keeps the last N turns' thinking (0: all; replay/thinking_turns.py)


@dataclass(frozen=True)
class ModelFit:
    """Whether a session's provider can serve a model: `refused` says why not ("" = it may), `note`
    what to know when switching to it (another provider's model through a gateway, an unknown one)."""

    refused: str = ""
    note: str = ""


_OWN_API = {"anthropic": "Anthropic's API", "openai": "OpenAI's API"}


@dataclass(frozen=True)
class ModelRegistry:
    default: Mapping[str, Any]
    models: Mapping[str, Mapping[str, Any]]
    aliases: Mapping[str, str] = field(default_factory=dict)  # Claude Code's `sonnet` -> a model id
    unsupported: Mapping[str, str] = field(default_factory=dict)  # an alias we lack -> what it is

    def names(self) -> tuple[str, ...]:
        return tuple(self.models)

    def resolve(self, name: str) -> str:
        """The model id an alias stands for (`sonnet`, any case); any other name as it is (a model
        the person's `[models.NAME]` calls `sonnet` too)."""
        if name in self.models:
            return name
        return self.aliases.get(name.strip().lower(), name)

    def refusal(self, name: str) -> str:
        """Why `name` cannot be used ("" when it can): one of Claude Code's aliases we do not have."""
        what = self.unsupported.get(name.strip().lower())
        if what is None:
            return ""
        usable = ", ".join(sorted(self.aliases))
        return f"model {name!r} is Claude Code's {what}, which agent does not do: give one model ({usable} or an id)"

    def lookup(self, name: str) -> ModelEntry:
        table = self._table(name)
        spec = {**self.default, **(table or {})}
        return ModelEntry(
            _info(name, spec),
            str(spec.get("provider") or ""),
            str(spec.get("summarizer") or ""),
            known=table is not None,
            binds_thinking=bool(spec.get("thinking_binding")),
            thinking_turns=int(spec.get("thinking_turns") or 0),
        )

    def info(self, name: str, window: int | None = None) -> ModelInfo:
        info = self.lookup(name).info
        return replace(info, context_window=window) if window else info

    def summarizer_for(self, model: str, provider: str = "") -> str:
        """The cheap model of the same provider; the model itself when `provider` is not the one the
        registry names (a gateway serving claude-sonnet-5-5 need not serve claude-haiku-5-5)."""
        entry = self.lookup(model)
        if provider and entry.provider and entry.provider != provider:
            return model
        return entry.summarizer or model

    def warning(self, name: str, window: int | None = None) -> str | None:
        """What to tell the person when `name` is not in the registry (None when it is)."""
        if self.lookup(name).known:
            return None
        info = self.info(name, window)
        assumed = (
            f"a {info.context_window:,}-token window"
            + ("" if window else " (the default)")
            + f", {info.max_output_tokens:,} output tokens, ${info.input_price:g}/${info.output_price:g} "
            "per million input/output tokens"
        )
        return (
            f"model {name!r} is not in the model registry: assuming {assumed}. Describe it in "
            f'~/.config/agent/config.toml: [models."{name}"] window = ..., max_output = ..., input_price = ..., '
            "output_price = ..."
        )

    def fit(self, name: str, provider: str, routes_any: bool, window: int | None = None) -> ModelFit:
        """Can `provider` (a Provider's name; `routes_any`: its endpoint may route any model) serve
        `name`? A model the registry gives to another provider is refused on a provider's own API and
        allowed, with a note, through a gateway; an unknown model is allowed with the registry's
        warning, since only the endpoint knows what it serves."""
        entry = self.lookup(name)
        if not entry.known:
            return ModelFit(
                note=(self.warning(name, window) or "") + ". The provider says at the next request "
                "whether it serves it."
            )
        owner = entry.provider
        if not owner or owner == provider or provider not in _OWN_API:
            return ModelFit()
        if routes_any:
            return ModelFit(
                note=f"{name} is a model of {owner}: this session's {provider} endpoint must route it"
            )
        return ModelFit(
            refused=f"{name} is a model of {owner}, and this session talks to {_OWN_API[provider]}, which "
            f"does not serve it. To use it, start agent with `--provider {owner} --model {name}`."
        )

    def with_overrides(self, overrides: Mapping[str, Mapping[str, Any]]) -> ModelRegistry:
        """This registry with the user's `[models.NAME]` tables laid over it (key by key)."""
        if not overrides:
            return self
        merged = {name: dict(table) for name, table in self.models.items()}
        for name, table in overrides.items():
            merged[name] = {**merged.get(name, {}), **check_table(f"models.{name}", table)}
        return ModelRegistry(self.default, merged, self.aliases, self.unsupported)

    def _table(self, name: str) -> Mapping[str, Any] | None:
        for candidate in (name, name.rsplit("/", 1)[-1]):
            if candidate in self.models:
                return self.models[candidate]
            for known in sorted(self.models, key=len, reverse=True):
                if candidate.startswith(known) and _DATED.match(candidate[len(known) :]):
                    return self.models[known]
        return None


def check_table(where: str, table: Any) -> dict[str, Any]:
    """A `[models.NAME]` table with its values checked (ConfigError naming the bad one)."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table (window = ..., input_price = ...)")
    out: dict[str, Any] = {}
    for key, value in table.items():
        key = str(key).replace("-", "_")
        if key not in _KEYS:
            raise ConfigError(f"unknown setting {where}.{key}: use one of {', '.join(_KEYS)}")
        if key in ("provider", "summarizer"):
            ok = isinstance(value, str)
        elif key in ("prompt_cache", "thinking_binding"):
            ok = isinstance(value, bool)
        elif key in ("window", "max_output", "cache_min_tokens"):
            ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        elif key == "thinking_turns":
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
        if not ok:
            raise ConfigError(f"{where}.{key}: {value!r} is not a valid value")
        out[key] = value
    return out


def _info(name: str, spec: Mapping[str, Any]) -> ModelInfo:
    values = {field: spec[key] for key, field in _KEYS.items() if field is not None and key in spec}
    if spec.get("prompt_cache") is False:
        values["cache_min_tokens"] = NO_CACHE_MIN_TOKENS
    known = {f.name for f in fields(ModelInfo)}
    return ModelInfo(name, **{k: v for k, v in values.items() if k in known})


@cache
def builtin_registry() -> ModelRegistry:
    """models.toml, shipped in the package (read once)."""
    text = resources.files("agent_cli.llm").joinpath("models.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    default = check_table("models.toml [default]", data.get("default", {}))
    models = {name: check_table(f"models.toml [models.{name}]", t) for name, t in data["models"].items()}
    aliases = {str(alias): str(target) for alias, target in data.get("aliases", {}).items()}
    unknown = sorted(target for target in aliases.values() if target not in models)
    if unknown:  # a release that renamed a model and not its alias must not ship
        raise ConfigError(f"models.toml [aliases]: {unknown[0]} is not one of its [models]")
    unsupported = {str(alias): str(what) for alias, what in data.get("unsupported_aliases", {}).items()}
    return ModelRegistry(default, models, aliases, unsupported)


def workspace_facts(name: str) -> tuple[str, ...]:
    """The keys of `[models.NAME]` a workspace's config may set (`WORKSPACE_FACTS` above)."""
    return () if builtin_registry().lookup(name).known else WORKSPACE_FACTS


def registry(overrides: Mapping[str, Mapping[str, Any]] | None = None) -> ModelRegistry:
    return builtin_registry().with_overrides(overrides or {})


# -- the built-in registry, for callers without a config ---------------------------------------


def known_models() -> tuple[str, ...]:
    return builtin_registry().names()


def model_info(name: str, window: int | None = None) -> ModelInfo:
    """Known facts for `name`; `window` overrides the window."""
    return builtin_registry().info(name, window)


def summarizer_for(model: str) -> str:
    """The cheap model of the same provider."""
    return builtin_registry().summarizer_for(model)
