"""The MCP room as a session sees it: servers start in the background; before each user turn the
tools of servers that connected since are added to the registry, and the tools of servers whose
list changed (`notifications/tools/list_changed`, a reconnect) are replaced — the tool list stays
frozen within a turn, for the prompt cache —, and what went wrong is reported once: headless
through `report` as it happens; in the TUI, which subscribes, as a notice as soon as it is known
(before a subscriber, with the next turn's events). A reconnect's failure is its command's to say.

When all MCP schemas together exceed `defer_fraction` of the budget they are added deferred and
the small `mcp_search` tool is offered instead (search.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from agent_cli.context.tokens import TokenCounter
from agent_cli.core.events import Notice
from agent_cli.extensions.mcp.config import Loaded, load_servers
from agent_cli.extensions.mcp.manager import McpManager, ServerStatus
from agent_cli.extensions.mcp.search import NAME as SEARCH_NAME
from agent_cli.extensions.mcp.search import McpSearchTool
from agent_cli.extensions.mcp.tool import McpTool, ToolInfo, tool_name
from agent_cli.settings.config import Config, config_paths
from agent_cli.tools.base import Tool, schema
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.sandbox.child_env import ChildEnv

Level = Literal["info", "warning", "error"]
SETTLE_GRACE = 1.0  # seconds a wait for servers allows past the connect timeout, which fails them
Report = Callable[[str, Level], None]


@dataclass(frozen=True)
class McpSettings:
    startup_wait: float = 5.0  # how long the first turn waits for servers still connecting
    connect_timeout: float = 30.0  # a server not ready by then has failed
    call_timeout: float = 120.0  # per tool call
    defer_fraction: float = 0.10  # MCP schemas above this share of the budget are loaded on demand
    child_env: ChildEnv = ChildEnv()  # what a stdio server sees of the environment, besides its `env`


@dataclass(frozen=True)
class NotOffered:
    """A server's tool the model is not offered: its name (`mcp__server__tool`) is another tool's."""

    server: str
    tool: str  # the server's name for it
    name: str  # the name it would have had
    taken_by: str  # whose the name is: "mcp server 'a'", or "the agent's own tools"


class McpRuntime:
    def __init__(
        self,
        loaded: Loaded,
        *,
        workspace: Path,
        settings: McpSettings = McpSettings(),
        report: Report | None = None,
    ) -> None:
        """`report` gets each problem as it happens (headless prints it); without one, problems wait
        for the next turn and come out as notices (the TUI)."""
        self.settings = settings
        self.problems = loaded.problems
        self.manager = McpManager(
            loaded.servers,
            workspace=workspace,
            connect_timeout=settings.connect_timeout,
            call_timeout=settings.call_timeout,
            on_change=self._changed,
            child_env=settings.child_env,
        )
        self._report = report
        self._listener: Callable[[Notice], None] | None = None
        self._queued: list[tuple[str, Level]] = []
        self._reconnecting: set[str] = set()  # servers whose failure the reconnect's result says
        self._synced: dict[str, tuple[ToolInfo, ...]] = {}  # server -> its tools in the registry
        self._waited = False
        self._synced_once = False
        for problem in loaded.problems:
            self._say(problem, "warning")

    @property
    def servers(self) -> int:
        return len(self.manager)

    def start(self) -> None:
        """Start the servers on the running event loop (does nothing the second time)."""
        if len(self.manager):
            self.manager.start()

    def subscribe(self, listener: Callable[[Notice], None]) -> Callable[[], None]:
        """`listener` gets each problem (a server failed or stopped) as a Notice as soon as it is
        known, those waiting for the next turn at once; what the tools offered became still comes
        with the turn. Returns the unsubscribe."""
        self._listener = listener
        waiting = [(text, level) for text, level in self._queued if level != "info"]
        self._queued = [(text, level) for text, level in self._queued if level == "info"]
        for text, level in waiting:
            listener(Notice(text, level))

        def unsubscribe() -> None:
            if self._listener is listener:
                self._listener = None

        return unsubscribe

    async def settle(self) -> None:
        """Once per session: start the servers and wait `startup_wait` for those still connecting."""
        if not self._waited and len(self.manager):
            self._waited = True
            await self.manager.wait(self.settings.startup_wait)

    async def before_turn(
        self, registry: ToolRegistry, budget: int, counter: TokenCounter
    ) -> list[tuple[str, Level]]:
        """Add the tools of servers that connected since the last turn, replace those of servers
        whose list changed; the notices to show."""
        await self.settle()
        await self.manager.wait_current(self.settings.connect_timeout)
        self._sync(registry, budget, counter, late=self._synced_once)
        self._synced_once = True
        notices, self._queued = self._queued, []
        return notices

    async def reconnect(self, name: str) -> ServerStatus:
        """Stop the server (if it runs) and start it again; its state once it connected or failed.
        KeyError for an unknown name. Its tools are offered again from the next turn."""
        await self.settle()
        self._reconnecting.add(name)
        try:
            return await self.manager.restart(name, self.settings.connect_timeout + SETTLE_GRACE)
        finally:
            self._reconnecting.discard(name)

    def offered(self, registry: ToolRegistry) -> tuple[list[ServerStatus], list[NotOffered]]:
        """The session's servers as they are now (no probe), each with only the tools the model is
        offered (or is from the next turn, for a server that connected or changed since the last),
        and the tools left out because another tool has their name."""
        return split_offered(self.manager.statuses(), registry, self._synced)

    async def aclose(self) -> None:
        await self.manager.aclose()

    # -- internals -----------------------------------------------------------------------------------
    def _sync(self, registry: ToolRegistry, budget: int, counter: TokenCounter, *, late: bool) -> None:
        connected = [s for s in self.manager.statuses() if s.state == "connected"]
        changed = {s.name for s in connected if s.name in self._synced and self._synced[s.name] != s.tools}
        fresh = [s for s in connected if s.name not in self._synced or s.name in changed]
        if not fresh:
            return
        registry.remove(t.name for t in registry if isinstance(t, McpTool) and t.server in changed)
        tools = [McpTool(s.name, info, self.manager) for s in fresh for info in s.tools]
        offered = [t for t in registry if isinstance(t, McpTool)]
        total = schema_tokens(offered + tools, counter)
        defer = total > self.settings.defer_fraction * budget
        if defer and SEARCH_NAME not in registry:
            registry.add([McpSearchTool(registry)])
        registry.add(tools, deferred=defer)
        for left in split_offered(fresh, registry, {})[1]:
            self._say(
                f"mcp server {left.server!r}: its tool {left.tool!r} is not offered, the name {left.name} "
                f"is taken by {left.taken_by}",
                "warning",
            )
        for status in fresh:
            self._synced[status.name] = status.tools
            if status.name in changed:
                self._say(f"mcp server {status.name!r} changed its tools: now {len(status.tools)}", "info")
            elif late:
                self._say(f"mcp server {status.name!r} connected: {len(status.tools)} tools added", "info")
        if defer and tools:
            self._say(
                f"MCP tool schemas ({total:,} tokens) exceed {self.settings.defer_fraction:.0%} of the "
                f"budget: the model finds and loads them with {SEARCH_NAME}",
                "info",
            )

    def _changed(self, status: ServerStatus) -> None:
        if status.name in self._reconnecting:
            return  # /mcp reconnect says how it went
        if status.state == "failed":
            self._say(f"mcp server {status.name!r} failed: {status.reason}", "warning")
        elif status.state == "dead":
            self._say(f"mcp server {status.name!r} stopped: {status.reason}", "warning")

    def _say(self, text: str, level: Level) -> None:
        if self._report is not None and level != "info":
            self._report(text, level)
        elif self._listener is not None and level != "info":
            self._listener(Notice(text, level))
        elif self._report is None:
            self._queued.append((text, level))


def schema_tokens(tools: Iterable[McpTool], counter: TokenCounter) -> int:
    return counter.scale(counter.raw_tools([schema(t) for t in tools]))


def split_offered(
    statuses: Iterable[ServerStatus], registry: ToolRegistry, synced: Mapping[str, tuple[ToolInfo, ...]]
) -> tuple[list[ServerStatus], list[NotOffered]]:
    """Each status with only its tools the model is offered, and those left out, their name taken.
    A tool is offered when the registry holds it; a connected server's tools not yet added (`synced`
    holds each server's tools as last added) will be, in this order, but for a name already held."""
    claimed: dict[str, str] = {}  # a name -> whose it will be, among tools not yet added
    kept: list[ServerStatus] = []
    left: list[NotOffered] = []
    for status in statuses:
        connected = status.state == "connected"
        pending = connected and synced.get(status.name) != status.tools
        offered: list[ToolInfo] = []
        for info in status.tools:
            name = tool_name(status.name, info.name)
            holder = registry.get(name)
            if isinstance(holder, McpTool) and (holder.server, holder.remote_name) == (
                status.name,
                info.name,
            ):
                offered.append(info)
            elif holder is not None:
                left.append(NotOffered(status.name, info.name, name, _whose(holder)))
            elif pending and name not in claimed:
                claimed[name] = f"mcp server {status.name!r}"
                offered.append(info)
            elif connected:  # another pending tool claims it, or it was taken when its server was added
                left.append(NotOffered(status.name, info.name, name, claimed.get(name, "another tool")))
        kept.append(replace(status, tools=tuple(offered)))
    return kept, left


def _whose(tool: Tool) -> str:
    return f"mcp server {tool.server!r}" if isinstance(tool, McpTool) else "the agent's own tools"


def server_rows(
    statuses: Iterable[ServerStatus], counter: TokenCounter
) -> list[tuple[str, str, str, int, int]]:
    """For `agent mcp list`: (name, origin, state, tool count, tokens of the schemas as sent)."""
    rows = []
    for status in statuses:
        schemas = [
            {
                "name": tool_name(status.name, t.name),
                "description": t.description,
                "input_schema": t.input_schema,
            }
            for t in status.tools
        ]
        tokens = counter.scale(counter.raw_tools(schemas))
        rows.append((status.name, status.origin, status.describe(), len(schemas), tokens))
    return rows


def runtime_for(
    config: Config, workspace: Path, *, trusted: bool, interactive: bool, report: Report | None
) -> McpRuntime | None:
    """The session's MCP runtime: servers from the user's config always, from `.mcp.json` and the
    workspace config when trusted. None when nothing is configured (and nothing is wrong).

    A headless run waits for its servers up to the connect timeout (it has one task, and a server
    that connects after it started is of no use to it, as in Claude Code's `-p`); the TUI waits
    `mcp_startup_wait` and adds late servers before a later turn."""
    loaded = load_servers(
        workspace,
        config.user_extensions.mcp_servers,
        config.workspace_extensions.mcp_servers,
        trusted=trusted,
        user_origin=str(config_paths(workspace)[0]),
        caller=(config.caller_mcp_origin, config.caller_mcp_servers),
        child_env=config.child_env(),
    )
    if not loaded.servers and not loaded.problems:
        return None
    settings = McpSettings(
        # headless: past the connect timeout, by which the manager has failed every server still
        # starting (the grace lets that be said before the wait ends; the wait ends when all settled)
        startup_wait=config.mcp_startup_wait if interactive else config.mcp_connect_timeout + SETTLE_GRACE,
        connect_timeout=config.mcp_connect_timeout,
        call_timeout=config.mcp_call_timeout,
        child_env=config.child_env(),
    )
    return McpRuntime(loaded, workspace=workspace, settings=settings, report=report)


async def probe(runtime: McpRuntime) -> list[ServerStatus]:
    """Start every server, wait until each has connected or failed, stop them: for `agent mcp list`."""
    try:
        await runtime.manager.wait(runtime.settings.connect_timeout + SETTLE_GRACE)
        return runtime.manager.statuses()
    finally:
        await runtime.aclose()
