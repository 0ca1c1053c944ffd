"""Configuration: ~/.config/agent/config.toml < .agent/config.toml < environment < flags; below them
all, the person's own Claude Code settings: its permission mode (`permissions.defaultMode`) and its
model (settings/claude_user.py, which also says what of its `env` is used).

The workspace's file cannot set trust, the permission mode, the sandbox, the provider, the endpoint
or the key's variable (settings/layers.py says which keys and why); `Config.warnings` says what it tried."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.context.model import MIN_BUDGET_TOKENS, ContextConfig
from agent_cli.core.errors import ConfigError
from agent_cli.llm.models import DEFAULT_MODEL, check_table, registry
from agent_cli.llm.openai_compat import OpenAISettings
from agent_cli.settings.checks import Sources, check_endpoints, check_values, unknown_settings
from agent_cli.settings.claude_user import ClaudeUser, claude_user
from agent_cli.settings.files import person_default_mode, read_named_settings
from agent_cli.settings.layers import read_layer, shown
from agent_cli.tools.permissions import MODES as PERMISSION_MODES  # one list of modes
from agent_cli.tools.sandbox.bwrap import SANDBOX_MODES  # auto: bubblewrap when it works; on: required; off
from agent_cli.tools.sandbox.child_env import AGENT_CREDENTIALS, ChildEnv

PROVIDERS = ("anthropic", "scripted", "openai")


@dataclass(frozen=True)
class PermissionRules:
    """`[permissions]`: rules in Claude Code's syntax (`Bash(git diff:*)`, `Edit(src/**)`, `mcp__s__t`)."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True)
class SandboxConfig:
    """`[sandbox]` (or `sandbox = "off"`): how bash is confined. Only the person's own config sets it."""

    mode: str = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()  # extra writable paths besides the workspace and a private /tmp
    bwrap: str = "bwrap"  # the bubblewrap program: a name looked up on PATH, or a path
    # variables bash, hooks and MCP servers get although they look like secrets (tools/sandbox/child_env.py)
    env_passthrough: tuple[str, ...] = ()
    allow_unix_sockets: bool = False  # let commands open unix sockets (a seccomp filter refuses them)


@dataclass(frozen=True)
class WebConfig:
    """`[web]`: the web tools. Only the person's own config sets it (settings/layers.py): a
    repository must not choose where searches go, nor loosen the limits."""

    fetch_timeout: float = 30.0  # seconds for one web_fetch (resolution, redirects, the body)
    max_page_bytes: int = 10_000_000  # body bytes web_fetch reads at most
    search_url: str = ""  # a SearXNG-compatible JSON search endpoint; "" = no web_search tool


@dataclass(frozen=True)
class Extensions:
    """Settings that make the agent run code (MCP servers, hooks), kept apart per origin: those from
    the user's own config are always used; those from the workspace only in a trusted workspace."""

    mcp_servers: dict[str, Any] = field(default_factory=dict)  # `[mcp_servers.NAME]`, as in .mcp.json
    hooks: dict[str, Any] = field(default_factory=dict)  # `[hooks]`, Claude Code's settings format


@dataclass(frozen=True)
class SystemPrompt:
    """`--system-prompt TEXT` / `--append-system-prompt TEXT`: the person's own words, flags only."""

    replace: str | None = None  # in place of prompts/system.md (None: that file)
    append: str = ""  # after it


@dataclass(frozen=True)
class Config:
    model: str = DEFAULT_MODEL
    provider: str = "anthropic"
    summarizer_model: str = ""  # "" = the cheap model of the same provider
    permission_mode: str = "ask"
    max_turns: int = 0  # model calls per prompt; 0 = no cap (Esc/Ctrl+C stop a run)
    max_tokens: int = 16_000  # output tokens per response
    context_window: int = 0  # 0 = what we know of the model (unknown models: 200k)
    sessions_dir: str = ""  # "" = <workspace>/.agent/sessions
    script: str = ""  # the scripted provider's script
    base_url: str = ""  # "" = ANTHROPIC_BASE_URL or the SDK's default (the anthropic provider)
    debug: bool = False  # check the invariants after every transformation at run time
    trust_workspace: bool = False  # --trust-workspace (the flag only): use the workspace's code files
    subfolder_memory: bool = (
        True  # a folder's memory files with the first read there (settings/folder_memory.py)
    )
    mcp_startup_wait: float = 5.0  # seconds the first turn waits for MCP servers still connecting
    mcp_connect_timeout: float = 30.0  # an MCP server not ready by then has failed
    mcp_call_timeout: float = 120.0  # seconds per MCP tool call
    stream_idle_timeout: float = 90.0  # a response stream silent this long is retried; 0 = never
    context: ContextConfig = field(default_factory=ContextConfig)
    permissions: PermissionRules = field(default_factory=PermissionRules)  # the user's config
    workspace_permissions: PermissionRules = field(default_factory=PermissionRules)  # .agent/config.toml
    flag_permissions: PermissionRules = field(default_factory=PermissionRules)  # --allowed-tools etc.
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)  # the person's config alone
    web: WebConfig = field(default_factory=WebConfig)  # the person's config alone
    user_extensions: Extensions = field(default_factory=Extensions)
    caller_mcp_servers: dict[str, Any] = field(default_factory=dict)  # api.Options.mcp_servers: ACP's
    caller_mcp_origin: str = "caller"  # where /mcp says those came from ("editor" over ACP)
    workspace_extensions: Extensions = field(default_factory=Extensions)
    openai: OpenAISettings = field(default_factory=OpenAISettings)  # `[openai]`: base_url, api_key_env
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # `[models.NAME]`: registry overrides
    claude: ClaudeUser = field(default_factory=ClaudeUser)  # the person's ~/.claude/settings.json model, env
    warnings: tuple[str, ...] = ()  # one line per config file that set what it may not (layers.py)
    system_prompt: SystemPrompt = field(default_factory=SystemPrompt)  # the flags alone set it
    settings_file: Path | None = None  # `--settings FILE`: a Claude Code settings file of the person's

    def sessions_root(self, workspace: Path) -> Path:
        return (
            Path(self.sessions_dir).expanduser() if self.sessions_dir else workspace / ".agent" / "sessions"
        )

    def child_env(self) -> ChildEnv:
        """What bash, hooks and MCP servers may see of the environment: not the agent's own key
        (wherever the config keeps it), nor secret-looking names the person did not pass through."""
        credentials = (*AGENT_CREDENTIALS, self.openai.api_key_env)
        return ChildEnv(
            passthrough=self.sandbox.env_passthrough, credentials=credentials, defaults=self.claude.child_env
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
    "AGENT_STREAM_IDLE_TIMEOUT": "stream_idle_timeout",
}


MIN_MICRO_CAP = 20_000  # below this a cap forces out what the model is working on (a 10k cap did, live)


def config_paths(workspace: Path, env: dict[str, str] | None = None) -> list[Path]:
    env = os.environ if env is None else env
    base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [base / "agent" / "config.toml", workspace / ".agent" / "config.toml"]


def load_config(
    workspace: Path,
    overrides: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    settings: str | None = None,
) -> Config:
    """Merge the layers; `overrides` are the flags (dotted keys for [context], e.g. context.budget_tokens);
    `settings` the person's `--settings FILE` (its defaultMode over ~/.claude/settings.json's)."""
    env = dict(os.environ) if env is None else env
    settings_file = read_named_settings(settings) if settings is not None else None
    mode = person_default_mode(env, settings_file)  # Claude Code's defaultMode, the person's: below all
    values: dict[str, Any] = {"permission_mode": mode} if mode else {}
    tables: dict[str, Any] = {"permissions": {}, "sandbox": {}, "openai": {}, "models": {}, "web": {}}
    rules: list[dict[str, list[str]]] = []
    extensions: list[Extensions] = []
    user_path, workspace_path = config_paths(workspace, env)
    layers = [read_layer(user_path, "user"), read_layer(workspace_path, "workspace")]
    sources, unknown = Sources(), []  # where each value came from; a workspace's unknown settings
    for layer in layers:
        data, path = dict(layer.data), layer.path
        name = shown(path) if layer.origin == "user" else ".agent/config.toml"
        sources.file(data, name)
        extensions.append(_extensions(data, path))
        tables["permissions"] = {}
        _merge_tables(tables, data, path)
        rules.append(tables["permissions"])
        _merge_provider_tables(tables, data, path)
        flat = _flatten(data)
        if layer.origin == "workspace" and (note := unknown_settings(flat, _settable, name)):
            unknown.append(note)  # a repository written for a newer version: not a reason to stop
        sources.file(flat, name)
        values.update(flat)
    for var, key in ENV.items():
        if env.get(var, "") != "":
            values[key] = env[var]
            sources.variable(key, var)
    for key, value in (overrides or {}).items():
        if value is not None:
            values[key] = value
            sources.option(key)
    models = registry(tables["models"])  # Claude Code's aliases (`sonnet`) become the ids they name
    claude = claude_user(env, base_url=str(values.get("base_url") or ""), resolve=models.resolve)
    anthropic = values.get("provider", "anthropic") == "anthropic"  # Claude Code's models are Anthropic's
    if claude.model and anthropic and "model" not in values:  # below every setting of ours
        values["model"] = claude.model
    config = _build(values, sources)
    summarizer = models.resolve(config.summarizer_model) if config.summarizer_model else ""
    config = dataclasses.replace(config, model=models.resolve(config.model), summarizer_model=summarizer)
    check_values(config, sources, models)
    config = dataclasses.replace(
        config,
        permissions=_permission_rules(rules[0]),
        workspace_permissions=_permission_rules(rules[1]),
        sandbox=_sandbox(tables["sandbox"]),
        web=_web(tables["web"]),
        openai=_openai(tables["openai"], env),
        models=tables["models"],
        claude=claude,
        user_extensions=extensions[0],
        workspace_extensions=extensions[1],
        warnings=(*(layer.warning for layer in layers if layer.warning), *unknown, *claude.notes),
        settings_file=settings_file,
    )
    check_endpoints(config, sources, env)
    return config


def _extensions(data: dict[str, Any], path: Path) -> Extensions:
    servers, hooks = data.pop("mcp_servers", {}), data.pop("hooks", {})
    if not isinstance(servers, dict) or not isinstance(hooks, dict):
        raise ConfigError(f"{path}: [mcp_servers] and [hooks] must be tables")
    return Extensions(mcp_servers=servers, hooks=hooks)


def _merge_tables(tables: dict[str, Any], data: dict[str, Any], path: Path) -> None:
    """[permissions] lists are kept per layer (a workspace's allow rules need trust); [sandbox] keys
    override (a string is the mode)."""
    permissions = data.pop("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(f"{path}: [permissions] must be a table with allow/ask/deny lists")
    for key, rules in permissions.items():
        if key not in ("allow", "ask", "deny") or not isinstance(rules, list):
            raise ConfigError(f"{path}: permissions.{key}: use allow, ask or deny, each a list of rules")
        tables["permissions"].setdefault(key, []).extend(str(rule) for rule in rules)
    sandbox = data.pop("sandbox", None)
    if isinstance(sandbox, str):
        sandbox = {"mode": sandbox}
    if sandbox is not None and not isinstance(sandbox, dict):
        raise ConfigError(f'{path}: sandbox must be "auto", "on", "off" or a table')
    tables["sandbox"].update(sandbox or {})
    web = data.pop("web", {})
    if not isinstance(web, dict):
        raise ConfigError(f"{path}: [web] must be a table")
    tables["web"].update(web)


def _merge_provider_tables(tables: dict[str, Any], data: dict[str, Any], path: Path) -> None:
    """[openai] keys override across layers; [models.NAME] tables merge key by key."""
    openai, models = data.pop("openai", {}), data.pop("models", {})
    if not isinstance(openai, dict) or not isinstance(models, dict):
        raise ConfigError(f'{path}: [openai] and [models."NAME"] must be tables')
    tables["openai"].update(openai)
    for name, table in models.items():
        checked = check_table(f"{path}: models.{name}", table)
        tables["models"][name] = {**tables["models"].get(name, {}), **checked}


def _openai(table: dict[str, Any], env: dict[str, str]) -> OpenAISettings:
    unknown = set(table) - {"base_url", "api_key_env"}
    if unknown:
        raise ConfigError(f"unknown setting openai.{sorted(unknown)[0]}: use base_url or api_key_env")
    base_url = env.get("OPENAI_BASE_URL") or str(table.get("base_url", ""))  # the environment wins
    return OpenAISettings(base_url, str(table.get("api_key_env") or "OPENAI_API_KEY"))


def _permission_rules(table: dict[str, list[str]]) -> PermissionRules:
    return PermissionRules(**{key: tuple(rules) for key, rules in table.items()})


def _sandbox(table: dict[str, Any]) -> SandboxConfig:
    unknown = set(table) - {"mode", "network", "writable", "bwrap", "env_passthrough", "allow_unix_sockets"}
    if unknown:
        raise ConfigError(f"unknown setting sandbox.{sorted(unknown)[0]}")
    mode = str(table.get("mode", "auto"))
    if mode not in SANDBOX_MODES:
        raise ConfigError(f"sandbox mode {mode!r}: use one of {', '.join(SANDBOX_MODES)}")
    network = _coerce("sandbox.network", table.get("network", False), False)
    writable = table.get("writable", [])
    if not isinstance(writable, list):
        raise ConfigError("sandbox.writable must be a list of paths")
    bwrap = table.get("bwrap", "bwrap")
    if not isinstance(bwrap, str) or not bwrap.strip():
        raise ConfigError("sandbox.bwrap must be the name or path of the bwrap program")
    passthrough = table.get("env_passthrough", [])
    if not isinstance(passthrough, list) or not all(
        isinstance(name, str) and _ENV_NAME.match(name) for name in passthrough
    ):
        raise ConfigError(
            'sandbox.env_passthrough must be a list of variable names (or patterns like "AWS_*")'
        )
    sockets = _coerce("sandbox.allow_unix_sockets", table.get("allow_unix_sockets", False), False)
    return SandboxConfig(
        mode,
        network,
        tuple(str(p) for p in writable),
        bwrap.strip(),
        env_passthrough=tuple(passthrough),
        allow_unix_sockets=sockets,
    )


def _web(table: dict[str, Any]) -> WebConfig:
    unknown = set(table) - {"fetch_timeout", "max_page_bytes", "search_url"}
    if unknown:
        raise ConfigError(
            f"unknown setting web.{sorted(unknown)[0]}: use fetch_timeout, max_page_bytes or search_url"
        )
    defaults = WebConfig()
    timeout = _coerce("web.fetch_timeout", table.get("fetch_timeout", defaults.fetch_timeout), 0.0)
    size = _coerce("web.max_page_bytes", table.get("max_page_bytes", defaults.max_page_bytes), 0)
    url = str(table.get("search_url", "")).strip()
    if timeout <= 0 or size <= 0:
        raise ConfigError("web.fetch_timeout and web.max_page_bytes must be more than 0")
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError(f"web.search_url {url!r}: give an http:// or https:// URL")
    return WebConfig(timeout, size, url)


_ENV_NAME = re.compile(r"^[A-Za-z_*?][A-Za-z0-9_*?]*$")  # a name, or an fnmatch pattern of one


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


def _settable(key: str) -> bool:
    """Whether `key` (dotted for [context]) is a setting: a plain value of Config or ContextConfig."""
    if key.startswith("context."):
        return key.removeprefix("context.") in {f.name for f in dataclasses.fields(ContextConfig)}
    top = {f.name: f for f in dataclasses.fields(Config)}
    return key in top and top[key].type in ("str", "int", "bool", "float")


def _build(values: dict[str, Any], sources: Sources | None = None) -> Config:
    ctx_defaults = ContextConfig()
    defaults = Config()
    kwargs: dict[str, Any] = {}
    ctx_kwargs: dict[str, Any] = {}
    for key, value in values.items():
        try:
            if not _settable(key):
                raise ConfigError(f"unknown setting {key if key.startswith('context.') else repr(key)}")
            if key.startswith("context."):
                name = key.removeprefix("context.")
                ctx_kwargs[name] = _coerce(key, value, getattr(ctx_defaults, name))
            else:
                kwargs[key] = _coerce(key, value, getattr(defaults, key))
        except ConfigError as exc:  # which file, variable or flag it was
            raise exc if sources is None else sources.error(key, str(exc)) from None
    if ctx_kwargs.get("cache_ttl") == "1h":
        ctx_kwargs.setdefault("cache_ttl_seconds", 3600.0)
    config = Config(**kwargs, context=ContextConfig(**ctx_kwargs))
    if config.permission_mode not in PERMISSION_MODES:
        raise ConfigError(
            f"permission mode {config.permission_mode!r}: use one of {', '.join(PERMISSION_MODES)}"
        )
    if config.provider not in PROVIDERS:
        raise ConfigError(f"provider {config.provider!r}: use one of {', '.join(PROVIDERS)}")
    if config.context.budget_tokens < MIN_BUDGET_TOKENS:
        raise ConfigError(f"context.budget_tokens must be at least {MIN_BUDGET_TOKENS}")
    if not config.context.hits_prior_weight > 0:  # the session's calibration divides by it
        raise ConfigError("context.hits_prior_weight must be above 0 (2 is the default)")
    penalty = config.context.miss_penalty_fraction  # negative: every miss a gain; inf: 0 x inf is nan
    if not (penalty >= 0 and math.isfinite(penalty)):
        raise ConfigError(
            "context.miss_penalty_fraction must be a finite number, 0 or more (1/3 of the budget is the default)"
        )
    cap = config.context.micro_cap_tokens
    if cap < 0 or 0 < cap < MIN_MICRO_CAP:  # below it every result would go right after it is seen
        raise ConfigError(f"context.micro_cap_tokens must be 0 (off) or at least {MIN_MICRO_CAP}, got {cap}")
    from agent_cli.context.policy import POLICIES  # the session builds one of these anyway

    for name, value, allowed in (
        ("policy", config.context.policy.strip().lower() or "default", tuple(POLICIES)),
        ("cache_ttl", config.context.cache_ttl, ("5m", "1h")),
        ("tool_trace", config.context.tool_trace, ("keep", "digest")),
    ):
        if value not in allowed:
            raise ConfigError(f"context.{name} {value!r}: use one of {', '.join(allowed)}")
    return config
