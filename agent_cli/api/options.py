"""What a caller asks of a session (`Options`), and what that comes to once the config files, the
environment and the session store have had their say (`Prepared`).

The same options serve `api.run`, `api.Session`, the CLI's flags and the TUI's launch, so a flag and
a keyword mean the same thing everywhere. Permission modes may be given in Claude Code's words
(`default`, `acceptEdits`, `bypassPermissions`, `plan`) as well as ours.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_cli.api.compose import session_store
from agent_cli.core.errors import ConfigError, SessionError
from agent_cli.settings.config import Config, PermissionRules, SystemPrompt, load_config
from agent_cli.settings.files import CLAUDE_MODES  # Claude Code's mode names -> ours
from agent_cli.tools.rules import split_rule_list

NO_KEY = (
    "No API key found. Set one with\n\n"
    "    export ANTHROPIC_API_KEY=sk-ant-...\n\n"
    "(or point ANTHROPIC_BASE_URL at an Anthropic-compatible server), then run `agent` again.\n"
    "To try agent without a key, run `agent --demo` (a scripted model, offline)."
)


def _rules(value: str | Iterable[str]) -> tuple[str, ...]:
    """Rules given as one string ("Bash(git diff:*) Edit") or several; commas and spaces separate."""
    texts = [value] if isinstance(value, str) else list(value)
    return tuple(rule for text in texts for rule in split_rule_list(text))


@dataclass(frozen=True)
class Options:
    """A session's options; every one left as None comes from the config files and the environment.

    `allowed_tools` / `disallowed_tools` are permission rules in Claude Code's syntax, as a string or
    a sequence of strings. `resume` is a session id (a unique prefix is enough); `continue_session`
    goes on in the latest session of `cwd`; `fork_session` goes on in a copy of either. `script` runs
    the scripted provider from a YAML/JSON file, `demo` the built-in demo script (both offline).
    `mcp_servers` are MCP servers the caller brings, by name, in `.mcp.json`'s shape ({"command",
    "args", "env"} or {"type": "http", "url", "headers"}): used as the person's own (an editor's, over
    ACP), beside those of their config, whose same names they replace; `/mcp` says they came from
    `mcp_servers_origin` ("editor" over ACP). `permission_modes` are the
    modes the session may be switched to besides the one it starts in (None: every mode; `agent
    acp` leaves yolo out unless it starts in it). Claude Code's flags, as they mean there:
    `system_prompt` replaces prompts/system.md and `append_system_prompt` follows it; `mcp_config` are
    files of `.mcp.json`'s shape (or that JSON), the person's own servers; `settings` is a Claude Code
    settings file of theirs, over ~/.claude/settings.json (its hooks, rules and defaultMode)."""

    cwd: Path | str = "."
    model: str | None = None
    provider: str | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = field(default=())
    disallowed_tools: tuple[str, ...] = field(default=())
    max_turns: int | None = None
    budget_tokens: int | None = None
    resume: str | None = None
    continue_session: bool = False
    fork_session: bool = False
    trust_workspace: bool = False
    script: str | None = None
    demo: bool = False
    debug: bool = False
    mcp_servers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mcp_servers_origin: str = "caller"
    permission_modes: tuple[str, ...] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    mcp_config: tuple[str, ...] = ()
    settings: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed_tools", _rules(self.allowed_tools))
        object.__setattr__(self, "disallowed_tools", _rules(self.disallowed_tools))
        configs = self.mcp_config
        object.__setattr__(self, "mcp_config", (configs,) if isinstance(configs, str) else tuple(configs))
        mode = self.permission_mode
        if mode is not None:
            object.__setattr__(self, "permission_mode", CLAUDE_MODES.get(mode, mode))


@dataclass(frozen=True)
class Prepared:
    """Options resolved: the merged config, the workspace, and which session opens (a new one,
    `resume_id`, or a copy of it when `fork`)."""

    config: Config
    workspace: Path
    resume_id: str | None = None
    fork: bool = False
    demo: bool = False
    notes: tuple[str, ...] = ()  # what finding the session found (sessions `--continue` passed by)


def prepare(options: Options) -> Prepared:
    """Load the config layers under `options` and find the session to resume. Raises ConfigError
    (a bad value, a config file in error) or SessionError (no such session)."""
    workspace = Path(options.cwd).expanduser().resolve()
    if not workspace.is_dir():
        raise ConfigError(f"cwd {workspace} is not a directory")
    overrides = {
        "model": options.model,
        "provider": "scripted" if options.demo or options.script else options.provider,
        "permission_mode": options.permission_mode,
        "max_turns": options.max_turns,
        "script": options.script,
        "debug": options.debug or None,
        "context.budget_tokens": options.budget_tokens,
        "trust_workspace": options.trust_workspace or None,
    }
    if options.max_turns is not None and options.max_turns < 1:  # 0 is no cap only in config files
        raise ConfigError(
            f"--max-turns (max_turns) must be at least 1, not {options.max_turns}: leave it out for no cap"
        )
    config = load_config(workspace, overrides, settings=options.settings)
    if options.mcp_servers or options.mcp_config:
        from agent_cli.extensions.mcp.config import read_mcp_configs

        servers = {**read_mcp_configs(options.mcp_config), **options.mcp_servers}
        servers = {k: dict(v) for k, v in servers.items()}
        origin = options.mcp_servers_origin if options.mcp_servers else "--mcp-config"
        config = replace(config, caller_mcp_servers=servers, caller_mcp_origin=origin)
    if options.system_prompt is not None or options.append_system_prompt:
        own = SystemPrompt(options.system_prompt, options.append_system_prompt or "")
        config = replace(config, system_prompt=own)
    if options.allowed_tools or options.disallowed_tools:
        rules = PermissionRules(allow=options.allowed_tools, deny=options.disallowed_tools)
        config = replace(config, flag_permissions=rules)
    if options.resume is not None and not options.resume.strip():
        raise ConfigError("--resume (resume) needs a session id: see `agent sessions`")
    if options.resume and options.continue_session:
        raise ConfigError("--continue and --resume ID name different sessions: give one of them")
    if options.fork_session and not (options.resume or options.continue_session):
        raise ConfigError("fork_session needs resume or continue_session: the session to copy")
    store = session_store(config, workspace)
    resume_id, passed = None, ""
    if options.continue_session:
        resume_id, passed = store.pick()
        if resume_id is None:
            more = f"; {passed}" if passed else ""
            raise SessionError(f"--continue (continue_session): no earlier session in {store.root}{more}")
    elif options.resume:
        resume_id = store.resolve(options.resume)
    notes = (f"--continue: {passed}",) if passed else ()
    return Prepared(config, workspace, resume_id, options.fork_session, options.demo, notes)


def has_key(config: Config) -> bool:
    """Whether the provider has what it needs to be asked (the Anthropic API wants a key or a token)."""
    if config.provider != "anthropic":
        return True
    claude = config.claude  # the key of ~/.claude/settings.json's env (settings/claude_user.py)
    keys = (os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_AUTH_TOKEN"))
    return any((*keys, claude.api_key, claude.auth_token))
