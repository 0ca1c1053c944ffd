"""MCP server entries: Claude Code's `.mcp.json` shape, from the file and from config tables.

`{"mcpServers": {name: {"command", "args", "env", "cwd"} | {"type": "http" | "sse", "url", "headers"}}}`;
`[mcp_servers.NAME]` tables in config.toml take the same keys. `${VAR}` and `${VAR:-default}` are
expanded in command, args, env, url and headers, as Claude Code does: from the whole environment in
the person's own config, but in the workspace's (`.mcp.json`, `.agent/config.toml`) only from what
a child process may see (tools/sandbox/child_env.py), so a repository's server cannot name the person's
tokens into its environment or its headers. A bad entry costs only that server (one clear problem
line); a malformed file costs only that file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import ConfigError
from agent_cli.tools.sandbox.child_env import ChildEnv

Transport = Literal["stdio", "http", "sse"]
MCP_JSON = ".mcp.json"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerSpec:
    """One server to start: a command (stdio) or a URL (streamable HTTP, or legacy SSE)."""

    name: str
    origin: str  # where it was configured, for messages (".mcp.json", "~/.config/agent/config.toml")
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Loaded:
    servers: tuple[ServerSpec, ...]
    problems: tuple[str, ...]  # one line each: the file, the server, what is wrong


class SpecError(ValueError):
    pass


class _Scrubbed(dict[str, str]):
    """The variables a workspace's server entry may expand, remembering which were withheld."""

    def __init__(self, kept: Mapping[str, str], withheld: list[str]) -> None:
        super().__init__(kept)
        self.withheld = frozenset(withheld)


def load_servers(
    workspace: Path,
    user_servers: Mapping[str, Any],
    workspace_servers: Mapping[str, Any],
    *,
    trusted: bool,
    user_origin: str = "user config",
    caller: tuple[str, Mapping[str, Any]] = ("caller", {}),
    env: Mapping[str, str] | None = None,
    child_env: ChildEnv | None = None,
) -> Loaded:
    """Every configured server: the user's config and the `caller`'s (origin, servers: an editor's,
    over ACP) always; `.mcp.json` and the workspace config only in a trusted workspace. A later source
    overrides an earlier one of the same name (user < caller < .mcp.json < .agent/config.toml), as
    Claude Code's project scope overrides its user scope."""
    env = os.environ if env is None else env
    policy = child_env or ChildEnv()
    scrubbed = _Scrubbed(policy.build(env), policy.withheld(env))
    found: dict[str, ServerSpec] = {}
    problems: list[str] = []
    sources: list[tuple[str, Mapping[str, Any], Mapping[str, str]]] = [
        (user_origin, user_servers, env),
        (caller[0], caller[1], env),
    ]
    if trusted:
        file_servers, problem = read_mcp_json(workspace / MCP_JSON)
        if problem:
            problems.append(problem)
        sources += [(MCP_JSON, file_servers, scrubbed), (".agent/config.toml", workspace_servers, scrubbed)]
    for origin, entries, variables in sources:
        for name, entry in entries.items():
            try:
                found[name] = parse_server(name, entry, origin, variables)
            except SpecError as exc:
                found.pop(name, None)
                problems.append(f"mcp server {name!r} in {origin}: {exc}")
    return Loaded(tuple(found.values()), tuple(problems))


def read_mcp_json(path: Path) -> tuple[dict[str, Any], str]:
    """The `mcpServers` table of a `.mcp.json` ({} when absent), and a problem line when malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"{path}: cannot read it ({exc}); its MCP servers are not used"
    servers, problem = _servers_in(text)
    return servers, f"{path}: {problem}; its MCP servers are not used" if problem else ""


def read_mcp_configs(values: Sequence[str]) -> dict[str, Any]:
    """`--mcp-config`'s servers, by name: each value a file of `.mcp.json`'s shape or that JSON itself,
    a later one winning on a name. The person named them, so one that cannot be used is a ConfigError
    naming it, not a warning."""
    servers: dict[str, Any] = {}
    for value in values:
        path = Path(value).expanduser()
        if value.lstrip().startswith("{"):
            found, problem = _servers_in(value)
        elif not path.is_file():
            raise ConfigError(f"--mcp-config {value}: no such file")
        else:
            try:
                found, problem = _servers_in(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                found, problem = {}, f"cannot read it ({exc})"
        if problem:
            raise ConfigError(f"--mcp-config {value if path.is_file() else 'JSON'}: {problem}")
        servers.update(found)
    return servers


def _servers_in(text: str) -> tuple[dict[str, Any], str]:
    """The `mcpServers` table of `.mcp.json`-shaped text, and what is wrong with it ("" when nothing)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if not isinstance(data, dict):
        return {}, 'expected an object like {"mcpServers": {...}}'
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        return {}, '"mcpServers" must be an object of servers by name'
    return servers, ""


def parse_server(name: str, entry: Any, origin: str, env: Mapping[str, str]) -> ServerSpec:
    if not _NAME.match(name):
        raise SpecError("a server name may use letters, digits, '_' and '-' only (1 to 64 of them)")
    if not isinstance(entry, dict):
        raise SpecError("expected an object with a command or a url")
    kind = entry.get("type", "stdio" if "command" in entry else "http" if "url" in entry else None)
    if kind == "streamable-http":
        kind = "http"
    if kind not in ("stdio", "http", "sse"):
        raise SpecError(
            f'type {kind!r} is not supported: use "stdio" (command) or "http" / "sse" (url)'
            if kind is not None
            else 'needs a "command" (stdio) or a "url" (http)'
        )
    if kind == "stdio":
        command = _string(entry, "command", env, required=True)
        return ServerSpec(
            name,
            origin,
            "stdio",
            command=command,
            args=tuple(_expand(a, env, "args") for a in _strings(entry, "args")),
            env=_table(entry, "env", env),
            cwd=_string(entry, "cwd", env),
        )
    url = _string(entry, "url", env, required=True)
    if not url.startswith(("http://", "https://")):
        raise SpecError(f"url {url!r} must start with http:// or https://")
    return ServerSpec(name, origin, kind, url=url, headers=_table(entry, "headers", env))


def _string(entry: dict[str, Any], key: str, env: Mapping[str, str], *, required: bool = False) -> str:
    value = entry.get(key)
    if value is None or value == "":
        if required:
            raise SpecError(f'"{key}" is missing')
        return ""
    if not isinstance(value, str):
        raise SpecError(f'"{key}" must be a string')
    return _expand(value, env, key)


def _strings(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SpecError(f'"{key}" must be a list of strings')
    return [str(v) for v in value]


def _table(entry: dict[str, Any], key: str, env: Mapping[str, str]) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise SpecError(f'"{key}" must be an object of strings')
    return {str(k): _expand(str(v), env, f"{key}.{k}") for k, v in value.items()}


def _expand(text: str, env: Mapping[str, str], where: str) -> str:
    """`${VAR}` and `${VAR:-default}` from the environment; an unset variable without a default is
    an error naming it (a server started with a literal `${TOKEN}` would fail in a stranger way)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        if name in getattr(env, "withheld", ()):
            raise SpecError(
                f"{where}: {name} is withheld from the workspace's servers (it looks like a secret); "
                "to pass it, name it in env_passthrough under [sandbox] in your own config"
            )
        raise SpecError(f"{where}: environment variable {name} is not set (and no ${{{name}:-default}})")

    return _VAR.sub(one, text)
