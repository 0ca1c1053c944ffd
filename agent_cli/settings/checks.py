"""What the config is checked for once its layers are merged, each error naming where the value came
from: a file, a variable or a flag (`Sources`). A value no request could carry (an empty model, a
`max_tokens` below 1, an endpoint that is not an http(s) URL with a host) stops the start with one
line, rather than reaching the API and coming back as a misleading error or a run of retries.

A setting this version does not know is an error in the person's own file (a typo they can fix), but
only a warning in a workspace's `.agent/config.toml`: a repository may be written for a newer
version, and must not stop the person's agent from starting (`unknown_settings`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agent_cli.core.errors import ConfigError

if TYPE_CHECKING:
    from agent_cli.llm.models import ModelRegistry

Config = Any  # settings.config.Config, which imports this module (named here, not imported)

FLAGS = {"context.budget_tokens": "--budget-tokens"}  # an option's flag, where it is not `--KEY`
# (key, the least it may be, what it is): below that no request could be made of it
MINIMUMS = (
    ("max_tokens", 1, "output tokens per response"),
    ("max_turns", 0, "model calls per prompt; 0 is no cap"),
    ("context_window", 0, "0 is what the model registry knows"),
    ("stream_idle_timeout", 0, "seconds; 0 is never"),
    ("mcp_startup_wait", 0, "seconds"),
)


@dataclass
class Sources:
    """Where each merged value came from, as the person would look for it."""

    by_key: dict[str, str] = field(default_factory=dict)

    def file(self, keys: Mapping[str, Any], name: str) -> None:
        self.by_key.update(dict.fromkeys(keys, name))

    def variable(self, key: str, name: str) -> None:
        self.by_key[key] = f"${name}"

    def option(self, key: str) -> None:
        self.by_key[key] = FLAGS.get(key, "--" + key.replace("_", "-"))

    def of(self, key: str) -> str:
        return self.by_key.get(key, "the defaults")

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.of(key)}: {message}")


def unknown_settings(flat: dict[str, Any], settable: Callable[[str], bool], name: str) -> str:
    """Take the settings `settable` does not know out of a workspace file's `flat` values; the
    warning naming them ("" when there were none)."""
    unknown = [key for key in flat if not settable(key)]
    for key in unknown:
        del flat[key]
    if not unknown:
        return ""
    return (
        f"{name}: ignored {', '.join(unknown)}: not a setting this version of agent knows "
        "(the file may be written for a newer one)"
    )


def check_values(config: Config, sources: Sources, models: ModelRegistry) -> None:
    """A ConfigError naming the key and where it came from, for a value no request could carry."""
    if not config.model.strip():
        raise sources.error(
            "model", "model is empty: give a model name (sonnet, or an id like claude-sonnet-5-5)"
        )
    for key in ("model", "summarizer_model"):
        if refusal := models.refusal(getattr(config, key)):
            raise sources.error(key, refusal)
    for key, least, what in MINIMUMS:
        value = getattr(config, key)
        if not (value >= least and math.isfinite(value)):
            raise sources.error(key, f"{key} must be at least {least} ({what}), not {value}")


def check_endpoint(url: str, where: str) -> None:
    """A ConfigError naming `where` (the variable or setting) unless `url` is http(s) with a host."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - a port that is not a number raises
    except ValueError:
        ok = False
    if not ok:
        raise ConfigError(
            f"{where} {url!r} is not an http:// or https:// URL with a host "
            "(like https://api.anthropic.com or http://localhost:8000)"
        )


def check_endpoints(config: Config, sources: Sources, env: Mapping[str, str]) -> None:
    """The endpoint of the provider in use, from the config or the environment, checked at start-up:
    `htp:/bad` is one line naming where it was set, not five retries of a network error."""
    if config.provider == "anthropic":
        if config.base_url:
            check_endpoint(config.base_url, f"{sources.of('base_url')}: base_url")
        elif env.get("ANTHROPIC_BASE_URL"):
            check_endpoint(env["ANTHROPIC_BASE_URL"], "ANTHROPIC_BASE_URL")
    elif config.provider == "openai" and config.openai.base_url:
        from_env = bool(env.get("OPENAI_BASE_URL"))
        where = "OPENAI_BASE_URL" if from_env else f"{sources.of('openai')}: openai.base_url"
        check_endpoint(config.openai.base_url, where)
