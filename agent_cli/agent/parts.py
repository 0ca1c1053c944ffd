"""What a session is made of, handed to it already built by the one composition root (api/compose.py).

`SessionParts` holds the session-wide pieces; `SessionBuilder` builds the pieces that belong to one
open log (the parent's at every open, /clear and /resume, and each sub-agent's), so nothing in
agent/ builds a provider, a permission checker, a store, a sandbox or an engine from config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_cli.context.prompts import load_prompt
from agent_cli.core.errors import AgentError
from agent_cli.tools.mentions.index import FileIndex
from agent_cli.tools.permissions import MODES
from agent_cli.tools.sandbox.child_env import ChildEnv
from agent_cli.tools.shells.manager import ShellManager

if TYPE_CHECKING:
    from agent_cli.agent.loop import Loop
    from agent_cli.agent.memory import SessionMemory
    from agent_cli.context.engine import ContextEngine
    from agent_cli.context.model import Summarizer
    from agent_cli.context.store import DirStore
    from agent_cli.core.types import ModelInfo, Totals
    from agent_cli.extensions.custom_commands import CustomCommands
    from agent_cli.extensions.hooks.api import HookRunner
    from agent_cli.extensions.hooks.runner import HookIdentity, Record
    from agent_cli.extensions.mcp.runtime import McpRuntime
    from agent_cli.extensions.skills.tool import SessionSkills
    from agent_cli.llm.base import Provider
    from agent_cli.llm.models import ModelRegistry
    from agent_cli.session.log import EventLog, SessionStore
    from agent_cli.settings.config import Config
    from agent_cli.tools.base import FileAccess, OutputLimits, ToolContext
    from agent_cli.tools.permissions import Permissions
    from agent_cli.tools.registry import ToolRegistry
    from agent_cli.tools.sandbox.bwrap import Sandbox


@dataclass(frozen=True)
class SessionSetup:
    """Where and how a session starts: a new id, or one to resume."""

    workspace: Path
    resume_id: str | None = None
    interactive: bool = True
    trusted: bool = False  # the workspace's .mcp.json, hooks and settings may be used (settings/trust.py)
    fork: bool = False  # go on in a copy of `resume_id` (a new session), leaving the original alone
    # the permission modes it may be switched to besides the one it starts in (None: every mode);
    # the front end that opens it decides (`agent acp`: yolo only when it started in it)
    permission_modes: tuple[str, ...] | None = None


class ModeRefused(AgentError, ValueError):
    """A permission mode the session may not be switched to (or no mode at all)."""


def offered_modes(allowed: tuple[str, ...] | None, start: str) -> tuple[str, ...]:
    """The modes a session that starts in `start` may be switched to: `allowed` and `start`."""
    return MODES if allowed is None else tuple(dict.fromkeys((*allowed, start)))


def check_mode(mode: str, offered: tuple[str, ...]) -> None:
    """The one rule every switch obeys — `/permissions MODE`, Shift+Tab, an editor's mode picker, a
    plan's approval: ModeRefused, saying why, unless `mode` is one of `offered`."""
    if mode in offered:
        return
    if mode not in MODES:
        raise ModeRefused(f"unknown permission mode {mode!r}: use {', '.join(offered)}")
    raise ModeRefused(
        f"{mode} mode is not available in this session (its modes: {', '.join(offered)}); "
        "it is offered only to a session that starts in it"
    )


class SubagentRunner(Protocol):
    """The task tool's runner (agent/subagents.py's `Subagents`): built before the session, which
    attaches itself as the host."""

    host: Any


class SessionBuilder(Protocol):
    """Builds what belongs to one open log, from the config the composition root holds."""

    def engine(
        self,
        *,
        model: ModelInfo,
        system_prompt: str,
        tools: ToolRegistry,
        store: DirStore,
        summarizer: Summarizer,
        file_reader: Callable[[str], str | None] | None = None,
    ) -> ContextEngine: ...

    def output_limits(self) -> OutputLimits: ...

    def loop(
        self,
        *,
        provider: Provider,
        engine: ContextEngine,
        tools: ToolRegistry,
        permissions: Permissions,
        log: EventLog,
        tool_ctx: ToolContext,
        model: ModelInfo,
        interactive: bool,
        totals: Totals,
        hooks: HookRunner,
    ) -> Loop: ...

    def memory(self, session_dir: Path, summarizer: Summarizer, engine: ContextEngine) -> SessionMemory: ...


@dataclass
class SessionParts:
    """Everything a session is made of. `config` is kept for the values a turn reads (max tokens,
    the summarizer model, the context window); the session builds nothing from it."""

    config: Config
    provider: Provider
    tools: ToolRegistry  # the task tool installed (its runner is `subagents`)
    subagents: SubagentRunner
    permissions: Permissions
    sandbox: Sandbox
    store: SessionStore
    models: ModelRegistry  # models.toml with the config's [models.NAME] over it
    commands: CustomCommands
    hooks: Callable[[Callable[[], HookIdentity], Record], HookRunner]  # bound to the session's identity
    builder: SessionBuilder
    mcp: McpRuntime | None = None  # MCP servers: their tools join `tools` between turns
    skills: SessionSkills | None = None  # the catalog, the listing the system prompt carries, grants
    clock: Callable[[], float] = field(default=lambda: 0.0)
    rule_warnings: list[str] = field(default_factory=list)  # said first, and kept for /permissions
    rule_notes: list[str] = field(default_factory=list)  # for /permissions only (said by the trust notice)
    system_prompt: str = field(default_factory=lambda: load_prompt("system"))  # the flags may change it
    warnings: list[str] = field(default_factory=list)  # told once, after what opening the log found
    child_env: ChildEnv = field(
        default_factory=ChildEnv
    )  # the environment bash gets (tools/sandbox/child_env.py)
    shells: ShellManager = field(default_factory=ShellManager)  # background shells (tools/shells/)
    files: FileIndex | None = None  # the workspace's files `@` completes against
    file_access: FileAccess | None = None  # an editor's buffers for the file tools (ACP), else the disk
