"""The one composition root: everything a session is made of is built here, from the config, and
handed to `AgentSession` already built. The Python API (`api.Session`, `api.run`) and through it the
TUI and `agent -p`, the tests and sub-agents (through the `SessionBuilder` below) all get their
pieces from this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.agent.api import COMMANDS
from agent_cli.agent.loop import Loop
from agent_cli.agent.memory_schedule import open_memory
from agent_cli.agent.parts import SessionParts, SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.agent.subagents import Subagents, install_task_tool
from agent_cli.agent.workspace_reads import name_files
from agent_cli.context.assemble import environment_text
from agent_cli.context.engine import ContextEngine
from agent_cli.context.prompts import load_prompt
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.events import ContextStatus
from agent_cli.extensions.loader import load_extensions
from agent_cli.extensions.skills.listing import listing_cap
from agent_cli.extensions.skills.tool import NAME as SKILL_TOOL
from agent_cli.extensions.skills.tool import install_skill_tools
from agent_cli.llm.models import registry
from agent_cli.session.log import SessionStore
from agent_cli.session.seal import SessionSeal
from agent_cli.settings.files import load_all_settings
from agent_cli.settings.folder_memory import FolderMemory
from agent_cli.settings.memory_files import read_user_context, user_memory_paths
from agent_cli.settings.permission_sources import gather_rules
from agent_cli.tools.base import OutputLimits, Tool
from agent_cli.tools.mentions.index import FileIndex
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.read import ReadTool
from agent_cli.tools.registry import ToolRegistry, default_tools
from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy
from agent_cli.tools.shells.manager import ShellManager
from agent_cli.tools.shells.tools import install_shell_tools
from agent_cli.tools.web.fetch import FetchLimits
from agent_cli.tools.web.permission import explicit_rule
from agent_cli.tools.web.search import WebSearchTool
from agent_cli.tools.web.tool import WebFetchTool

if TYPE_CHECKING:
    from agent_cli.agent.memory import SessionMemory
    from agent_cli.context.model import Summarizer
    from agent_cli.context.store import DirStore
    from agent_cli.core.types import ModelInfo, Totals
    from agent_cli.extensions.hooks.api import HookRunner
    from agent_cli.extensions.mcp.runtime import McpRuntime
    from agent_cli.llm.base import Provider
    from agent_cli.session.log import EventLog
    from agent_cli.settings.config import Config
    from agent_cli.settings.trust import TrustDecision
    from agent_cli.tools.base import FileAccess, ToolContext

BUILTIN_COMMANDS = tuple(c.name for c in COMMANDS) + ("exit",)  # names a custom command may not take


def compose_session(
    config: Config,
    provider: Provider,
    setup: SessionSetup,
    *,
    tools: ToolRegistry | None = None,
    clock: Callable[[], float] = time.time,
    mcp: McpRuntime | None = None,
    hooks: HookRunner | None = None,
    file_access: FileAccess | None = None,
) -> AgentSession:
    """A session on `setup.workspace`: the settings files parsed once (permission rules and hooks
    read them), the sandbox, the store, the extensions and the tools, then the session opens its log.
    `tools` and `hooks` replace the defaults (tests); `mcp` is the running servers, if any;
    `file_access` an editor's buffers for the file tools (ACP), else they use the disk."""
    workspace = setup.workspace.resolve()
    settings = load_all_settings(workspace, extra=config.settings_file)
    gathered = gather_rules(config, workspace, setup.trusted, settings)
    permissions = Permissions(config.permission_mode, workspace, gathered.rules)  # type: ignore[arg-type]
    store = session_store(config, workspace)
    store.check_writable()
    sandbox = make_sandbox(config, workspace)
    ext = load_extensions(config, workspace, setup.trusted, settings, BUILTIN_COMMANDS, permissions)
    models = registry(config.models)
    # the skill listing is sized once, for the configured model's budget: it stays the same (and
    # cached) for the whole session, across /model and /clear
    model = models.info(config.model, config.context_window or None)
    cap = listing_cap(config.context.budget(model.context_window, model.max_output_tokens)[0])
    counter = TokenCounter(config.model)
    base = tools
    if base is None:
        base = default_tools()
        base.add(web_tools(config, permissions))
    with_skills, skills = install_skill_tools(base, ext.skills, ext.skill_grants, cap, counter.text)
    subagents = Subagents()
    shells = ShellManager(clock)
    registry_, agent_warnings = install_task_tool(with_skills, subagents, workspace, setup.trusted)
    install_shell_tools(registry_, shells)
    parts = SessionParts(
        config=config,
        provider=provider,
        tools=registry_,
        subagents=subagents,
        permissions=permissions,
        sandbox=sandbox,
        store=store,
        models=models,
        commands=ext.commands,
        hooks=(lambda *_: hooks) if hooks is not None else ext.hooks,
        builder=Builder(config, workspace, clock, skills.listing.text, permissions),
        system_prompt=system_prompt(config),
        skills=skills,
        mcp=mcp,
        clock=clock,
        rule_warnings=list(gathered.warnings),
        rule_notes=list(gathered.untrusted),
        warnings=[*config.warnings, *agent_warnings, *ext.warnings]
        + ([refused] if sandbox and (refused := sandbox.refusal_at_start(config.permission_mode)) else []),
        child_env=config.child_env(),
        shells=shells,
        files=FileIndex(workspace),
        file_access=file_access,
    )
    return AgentSession(parts, setup)


def system_prompt(config: Config) -> str:
    """prompts/system.md, or the person's `--system-prompt` in its place; their
    `--append-system-prompt` after it (Claude Code's flags, as they mean there)."""
    own = config.system_prompt
    text = load_prompt("system") if own.replace is None else own.replace
    return f"{text}\n\n{own.append}" if own.append else text


def web_tools(config: Config, permissions: Permissions) -> list[Tool]:
    """web_fetch, judged by host (tools/web/permission.py), reaching a loopback, private or
    link-local address only through an explicit rule for that host, read when it connects (so a
    rule added by "always allow" counts at once); web_search only when the person configured a
    search endpoint (`[web] search_url`, their own config alone)."""
    limits = FetchLimits(config.web.fetch_timeout, config.web.max_page_bytes)
    fetch = WebFetchTool(
        limits,
        special_ok=lambda host: explicit_rule(permissions.rules, host) is not None,
        answer_prompt=load_prompt("web_fetch"),
    )
    if not config.web.search_url:
        return [fetch]
    return [fetch, WebSearchTool(config.web.search_url, config.web.fetch_timeout)]


def starting_status(config: Config) -> ContextStatus:
    """The gauge of a session of this config before it has a prompt: what the TUI shows while none is
    open (no key, or the provider loading), so it never shows a budget no session would have."""
    model = registry(config.models).info(config.model, config.context_window or None)
    budget, reserved = config.context.budget(model.context_window, model.max_output_tokens)
    ctx = config.context
    return ContextStatus(
        budget=budget,
        window=model.context_window,
        reserved=reserved,
        warn_fraction=ctx.warn_fraction,
        auto_fraction=ctx.auto_fraction,
        auto_compact=ctx.auto_compact,
    )


def session_store(config: Config, workspace: Path) -> SessionStore:
    """The workspace's sessions, sealed with the person's key (session/seal.py): `--continue` and the
    picker pass by a session a repository shipped."""
    from agent_cli.settings.trust import user_config_dir

    seal = SessionSeal(user_config_dir() / "session.key")
    return SessionStore(config.sessions_root(workspace), seal, workspace.resolve())


def make_sandbox(config: Config, workspace: Path) -> Sandbox:
    """bash's sandbox from the person's `[sandbox]` (a workspace's config cannot set it:
    settings/layers.py). The sessions folder is protected wherever it lives (AGENT_SESSIONS_DIR can
    move it)."""
    sandbox = config.sandbox
    policy = SandboxPolicy(
        sandbox.mode, sandbox.network, sandbox.writable, sandbox.bwrap, sandbox.allow_unix_sockets
    )
    return Sandbox(policy, workspace, sessions=config.sessions_root(workspace))


@dataclass(frozen=True)
class Builder:
    """agent.parts.SessionBuilder: the engine, loop and note of one open log, from the config."""

    config: Config
    workspace: Path
    clock: Callable[[], float]
    skills: str = ""  # the skill listing, for an engine whose tools include `skill`
    permissions: Permissions | None = None  # their deny and ask rules bind a memory file's imports

    def engine(
        self,
        *,
        model: ModelInfo,
        system_prompt: str,
        tools: ToolRegistry,
        store: DirStore,
        summarizer: Summarizer,
        file_reader: Callable[[str], str | None] | None = None,
    ) -> ContextEngine:
        return ContextEngine(
            config=self.config.context,
            model=model,
            system_prompt=system_prompt,
            tools=tools.schemas(),
            user_context=read_user_context(self.workspace, user_memory_paths(), self._refusal(tools)),
            environment=environment_text(self.workspace, self.clock()),
            store=store,
            summarizer=summarizer,
            clock=self.clock,
            tool_compactable=tools.is_compactable,
            file_reader=file_reader,
            skills=self.skills if SKILL_TOOL in tools else "",
            name_files=lambda message: name_files(self.workspace, message),
        )

    def _refusal(self, tools: ToolRegistry) -> Callable[[Path], str]:
        """Why a deny or ask rule refuses reading a file a memory file imports ("" when none does:
        where an import may lead is settings/memory_files.py's to judge)."""
        # read_file's rules whether or not this registry offers it (a sub-agent's `tools: Bash, Grep`)
        read, permissions = tools.get("read_file") or ReadTool(), self.permissions

        def refusal(path: Path) -> str:
            if permissions is None:
                return ""
            decision = permissions.decide(read, {"path": str(path)})
            refused = decision.action == "deny" or (decision.action == "ask" and decision.rule)
            return decision.reason if refused else ""

        return refusal

    def output_limits(self) -> OutputLimits:
        context = self.config.context
        return OutputLimits(
            inline_chars=context.offload_result_chars,
            preview_chars=context.preview_chars,
            ceiling_chars=context.output_ceiling_chars,
        )

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
    ) -> Loop:
        loop = Loop(
            provider=provider,
            engine=engine,
            tools=tools,
            permissions=permissions,
            log=log,
            tool_ctx=tool_ctx,
            model=model,
            max_tokens=min(self.config.max_tokens, model.max_output_tokens),  # what the model can give
            max_turns=self.config.max_turns,
            interactive=interactive,
            totals=totals,
            debug=self.config.debug,
            hooks=hooks,
        )
        if self.config.subfolder_memory:  # a folder's memory files with the first read there
            template = load_prompt("folder_memory")
            memory = FolderMemory(self.workspace, self._refusal(tools), template, lambda: engine.messages)
            loop.calls.result_parts.append(memory)
        return loop

    def memory(self, session_dir: Path, summarizer: Summarizer, engine: ContextEngine) -> SessionMemory:
        return open_memory(session_dir, self.workspace, summarizer, self.config.context, engine)


def open_session(
    config: Config,
    workspace: Path,
    *,
    resume_id: str | None = None,
    fork: bool = False,
    interactive: bool,
    demo: bool = False,
    trusted: bool | None = None,
    report: Callable[[str, str], None] | None = None,
    file_access: FileAccess | None = None,
    permission_modes: tuple[str, ...] | None = None,
) -> AgentSession:
    """The session a front end runs (through api.Session: the TUI, `agent -p`, programs): the
    provider the config names, the trust decision, the workspace's MCP servers, then
    `compose_session`. `report` says problems as they happen (headless: a line on stderr); without
    it they reach the session's notices. `trusted` is the caller's decision (the TUI asked);
    `permission_modes` the modes it may switch to besides its first (None: every one)."""
    if demo and config.model == "claude-sonnet-5-5":
        from agent_cli.llm.scripted import DEMO_MODEL

        config = replace(config, model=DEMO_MODEL)
    provider = make_provider(config)
    prepare = getattr(provider, "prepare", None)
    if interactive and callable(prepare):
        prepare()  # import the SDK here, off the UI's event loop (the TUI calls this in a thread)
    trust = trust_decision(config, workspace)
    untold = trust.notice(workspace) if trust.ignored and report is None and trusted is None else None
    if report is not None and trust.ignored:
        report(trust.notice(workspace), "warning")
    trusted = trust.trusted if trusted is None else trusted
    problems = [] if trusted else trust.problems(workspace)  # trusted: the MCP loader says them
    for line in problems if report is not None else ():
        report(line, "warning")
    from agent_cli.extensions.mcp.runtime import runtime_for

    mcp = runtime_for(config, workspace, trusted=trusted, interactive=interactive, report=report)
    setup = SessionSetup(
        workspace, resume_id, interactive, trusted, fork=fork, permission_modes=permission_modes
    )
    session = compose_session(config, provider, setup, mcp=mcp, file_access=file_access)
    if untold:  # what the workspace brought and was left out: a notice with the first prompt
        session.warnings.append(untold)
    if report is None:
        session.warnings += problems  # the TUI shows them as notices
    return session


def make_provider(config: Config) -> Provider:
    """The provider the config names. Raises ConfigError when it cannot be built."""
    if config.provider == "scripted":
        from agent_cli.llm.scripted import Script, ScriptedProvider, demo_provider

        if config.script:
            return ScriptedProvider(Script.load(Path(config.script)), model=config.model)
        return demo_provider()
    if config.provider == "openai":
        from agent_cli.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            config.openai, registry=registry(config.models), idle_timeout=config.stream_idle_timeout
        )
    from agent_cli.llm.anthropic import AnthropicProvider

    claude = config.claude  # the endpoint and key of ~/.claude/settings.json, when nothing above names one
    return AnthropicProvider(
        api_key=claude.api_key or None,
        auth_token=claude.auth_token or None,
        base_url=config.base_url or claude.base_url or None,
        idle_timeout=config.stream_idle_timeout,
        registry=registry(config.models),
    )


def trust_decision(config: Config, workspace: Path) -> TrustDecision:
    """Whether the workspace's code-running files (.mcp.json, hooks, settings) may be used."""
    from agent_cli.settings.trust import TrustStore, decide_trust

    ext = config.workspace_extensions
    return decide_trust(
        workspace,
        flag=config.trust_workspace,
        store=TrustStore.default(),
        has_workspace_extensions=bool(ext.mcp_servers or ext.hooks),
    )
