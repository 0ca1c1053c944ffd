"""Sub-agents: the runner behind the `task` tool (tools/task.py).

A child is a Loop of its own: its own ContextEngine (the parent's context config, so the same budget
by default), its own log in `<session>/subagents/<child-id>/` (events.jsonl + tool-results/), the
parent's tools except `task` (or what its definition names), the parent's Permissions object (same
mode and rules; a permission ask reaches the person through the parent's event stream; in plan mode
it reads the parent's plan-mode reminder) and provider.
The parent gets the final answer and the usage; the child's tool traffic stays in the child's log,
and its transcript is kept in the parent's store under a ref so `recall` can bring it back.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent_cli.agent.loop import Loop
from agent_cli.agent.side_requests import summarize
from agent_cli.context.engine import ContextEngine
from agent_cli.context.intake import reminder
from agent_cli.context.model import Summarizer
from agent_cli.context.prompts import load_prompt
from agent_cli.context.store import DirStore
from agent_cli.context.tiers.rendering import render_transcript
from agent_cli.core.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    Notice,
    PermissionDenied,
    PermissionRequest,
    SubagentProgress,
    ToolFinished,
    ToolStarted,
    UsageUpdate,
)
from agent_cli.core.types import Totals, Usage
from agent_cli.extensions.hooks.api import SubagentHooks
from agent_cli.llm.models import ModelRegistry
from agent_cli.session.log import EventLog, conversation, read_events
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.task import AgentDefinition, Progress, SubagentOutcome

if TYPE_CHECKING:
    from agent_cli.agent.parts import SessionBuilder
    from agent_cli.llm.base import Provider
    from agent_cli.settings.config import Config
    from agent_cli.tools.permissions import Permissions

STEP_CHARS = 100
MAX_STEPS_SHOWN = 200


class SubagentHost(Protocol):
    """What a child takes from its parent session (AgentSession satisfies it). Read at each run, so a
    /model or /clear of the parent applies to the next child."""

    config: Config
    provider: Provider
    workspace: Path
    session_id: str
    session_dir: Path
    tools: ToolRegistry
    permissions: Permissions
    interactive: bool
    totals: Totals
    log: EventLog
    dir_store: DirStore
    model: str
    loop: Loop
    models: ModelRegistry  # the registry with the config's [models.NAME] over it
    builder: SessionBuilder  # the engine and loop of a child, as the parent's (api/compose.py)


StopHook = Callable[[AgentDefinition, SubagentOutcome], Awaitable[None]]


class Subagents:
    """Implements tools.task.SubagentRunner for one parent session."""

    def __init__(self, host: SubagentHost | None = None, on_stop: StopHook | None = None) -> None:
        self._host = host  # the composition root builds the runner first; the session attaches itself
        # extensions/hooks' SubagentStop event is to be called here, once per finished child
        self.on_stop = on_stop

    @property
    def host(self) -> SubagentHost:
        if self._host is None:
            raise RuntimeError("the sub-agent runner has no session attached")
        return self._host

    @host.setter
    def host(self, host: SubagentHost) -> None:
        self._host = host

    def child_tools(self, definition: AgentDefinition) -> ToolRegistry:
        """The parent's tools except `task`, or those the definition names (in the parent's order) and
        `recall`: a large output reaches the child as a preview naming its ref, to be recalled."""
        wanted = {*definition.tools, "recall"} if definition.tools is not None else None
        return ToolRegistry(
            t for t in self.host.tools if (t.name in wanted if wanted is not None else t.name != "task")
        )

    async def run(
        self, definition: AgentDefinition, prompt: str, description: str, on_progress: Progress
    ) -> SubagentOutcome:
        host = self.host
        child_id = f"{_slug(definition.name)}-{secrets.token_hex(3)}"
        child_dir = host.session_dir / "subagents" / child_id
        model_name = definition.model or host.model
        info = host.models.info(model_name, host.config.context_window or None)
        tools = self.child_tools(definition)
        log = EventLog(child_dir)
        store = DirStore(child_dir)
        totals = Totals()
        log.append(
            "session_start",
            id=child_id,
            parent=host.session_id,
            agent=definition.name,
            description=description,
            cwd=str(host.workspace),
            model=model_name,
        )
        engine = host.builder.engine(
            model=info,
            system_prompt=definition.prompt,
            tools=tools,
            store=store,
            summarizer=_summarizer(host, model_name, log, totals),
        )
        if host.permissions.mode == "plan":  # restricted as the parent is, and told so as the parent is
            engine.inject(reminder(load_prompt("plan_mode")))
        loop = host.builder.loop(
            provider=host.provider,
            engine=engine,
            tools=tools,
            permissions=host.permissions,
            log=log,
            # a child's commands are recorded with the parent's, so a kill -9 leaves none behind for good
            # the parent's context (sandbox, permission mode, output limits, process records), with the
            # child's own store and log directory; a child's bash is confined exactly as the parent's
            tool_ctx=replace(
                host.tool_ctx,
                session_dir=child_dir,
                store=store,
                todo_state=[],
                seen_read=None,  # the parent's view is not the child's
                call_id="",
                emit=None,
                on_output=None,
            ),
            model=info,
            interactive=host.interactive,
            totals=totals,
            hooks=SubagentHooks(host.hooks),  # its tools fire the parent's hooks; its end, SubagentStop
        )
        # the parent's checkpoint (/rewind) is taken before the first change, whoever makes it
        loop.before_change = lambda _emit: host.loop.first_change(on_progress)
        watcher = _Watcher(definition, engine, on_progress)
        outcome: SubagentOutcome | None = None
        try:
            finished = await loop.run(prompt, watcher.emit)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # the child closed its calls; the parent stops too
            outcome = watcher.outcome(finished.stop_reason, finished.result, host.config.max_turns)
        except asyncio.CancelledError:
            outcome = SubagentOutcome("interrupted", True, "interrupted")
            raise
        except Exception as exc:  # noqa: BLE001 - a child's crash is the parent's error result
            log.append("error", kind="internal", message=f"{type(exc).__name__}: {exc}")
            outcome = SubagentOutcome(f"The sub-agent crashed: {type(exc).__name__}: {exc}", True, "error")
        finally:
            log.close()
            outcome = self._settle(outcome, definition, child_id, log, totals, model_name, watcher)
        if self.on_stop is not None:
            await self.on_stop(definition, outcome)
        return outcome

    def _settle(
        self,
        outcome: SubagentOutcome | None,
        definition: AgentDefinition,
        child_id: str,
        log: EventLog,
        totals: Totals,
        model_name: str,
        watcher: _Watcher,
    ) -> SubagentOutcome:
        """Add the child's spending to the parent's, keep its transcript for recall, say where it is."""
        host = self.host
        host.totals.usage = host.totals.usage + totals.usage
        host.totals.cost_usd += totals.cost_usd
        host.totals.subagent_requests += totals.all_requests
        host.log.append(
            "subagent_usage",
            child_id=child_id,
            agent=definition.name,
            model=model_name,
            usage=totals.usage.to_json(),
            cost_usd=totals.cost_usd,
            requests=totals.all_requests,
        )
        totals_now = host.totals
        watcher.on_progress(
            UsageUpdate(Usage(), totals_now.usage, totals_now.cost_usd, totals_now.cache_hit_rate())
        )
        ref = f"subagent-{child_id}"
        try:
            messages = conversation(read_events(log.path).events)
            host.dir_store.put(ref, render_transcript(messages))
        except Exception:  # noqa: BLE001 - the log itself is still there
            ref = ""
        watcher.finish(totals.requests)
        base = outcome or SubagentOutcome("interrupted", True, "interrupted")
        return SubagentOutcome(
            answer=base.answer,
            is_error=base.is_error,
            stop_reason=base.stop_reason,
            child_id=child_id,
            log_path=_display_path(log.path, host.workspace),
            ref=ref,
            turns=totals.requests,
            usage=totals.usage,
            cost_usd=totals.cost_usd,
        )


@dataclass
class _Watcher:
    """Turns a child's events into progress for the parent's line; keeps what the outcome needs."""

    definition: AgentDefinition
    engine: ContextEngine
    on_progress: Progress
    steps: list[str] = field(default_factory=list)
    turns: int = 0
    errors: list[str] = field(default_factory=list)
    _asked: set[str] = field(default_factory=set)

    def emit(self, event: Event) -> None:
        if isinstance(event, ToolStarted) and event.call is not None:
            step = f"{event.call.name} {event.target}".strip()
            self.steps.append(step[:STEP_CHARS])
            self._progress(step)
        elif isinstance(event, AssistantMessage):
            self.turns += 1
            self._progress("thinking" if event.message and event.message.tool_uses() else "answering")
        elif isinstance(event, PermissionRequest):
            if event.call is not None:
                self._asked.add(event.call.id)
            self.on_progress(event)
        elif isinstance(event, PermissionDenied):
            if event.call is not None:
                self.steps.append(f"{event.call.name} {event.target} (denied)".strip()[:STEP_CHARS])
                self._progress(self.steps[-1])
            self.on_progress(event)
        elif isinstance(event, ToolFinished) and event.call is not None and event.call.id in self._asked:
            self.on_progress(event)  # the person saw this call in a permission modal: close its line
        elif isinstance(event, ErrorEvent):
            self.errors.append(event.message + (f" ({event.hint})" if event.hint else ""))
            self.on_progress(Notice(f"sub-agent {self.definition.name}: {event.message}", "warning"))

    def _progress(self, step: str, done: bool = False) -> None:
        self.on_progress(
            SubagentProgress(
                agent=self.definition.name,
                step=step[:STEP_CHARS],
                steps=tuple(self.steps[-MAX_STEPS_SHOWN:]),
                turns=self.turns,
                tokens=self.engine.status().used,
                done=done,
            )
        )

    def finish(self, turns: int) -> None:
        self.turns = turns
        self._progress("done", done=True)

    def outcome(self, stop_reason: str, result: str, max_turns: int) -> SubagentOutcome:
        if stop_reason in ("end_turn", "stop_sequence"):
            return SubagentOutcome(result, False, stop_reason)
        said = f"\n\nIts last words: {result.strip()}" if result.strip() else ""
        if stop_reason == "max_turns":
            why = f"stopped after {max_turns} model calls (max_turns) without finishing"
        elif stop_reason == "error":
            why = "failed: " + (self.errors[-1] if self.errors else "the model call failed")
        elif stop_reason == "max_tokens":
            return SubagentOutcome(
                result + "\n\n[the answer was cut at the output limit]", False, stop_reason
            )
        else:
            why = f"ended early ({stop_reason})"
        return SubagentOutcome(f"The sub-agent {self.definition.name} {why}.{said}", True, stop_reason)


def _summarizer(host: SubagentHost, model_name: str, log: EventLog, totals: Totals) -> Summarizer:
    """The child's summarizer: the cheap model, its usage counted in the child's totals."""

    async def summarize_for_child(system: str, content: str) -> str:
        return await summarize(
            host.provider, host.config, host.models, model_name, totals, log, system, content
        )

    return summarize_for_child


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")[:40] or "agent"


def _display_path(path: Path, workspace: Path) -> str:
    try:
        return str(path.resolve().relative_to(workspace.resolve()))
    except ValueError:
        return str(path)


def install_task_tool(
    tools: ToolRegistry, runner: Subagents, workspace: Path, trusted: bool
) -> tuple[ToolRegistry, list[str]]:
    """`tools` plus the task tool (with every agent definition found: the workspace's only when
    `trusted`), and one line per bad or skipped definition."""
    from agent_cli.extensions.agent_definitions import agent_dirs, load_agents
    from agent_cli.settings.files import claude_user_dir
    from agent_cli.settings.trust import user_config_dir
    from agent_cli.tools.task import TaskTool

    if "task" in tools:
        return tools, []
    dirs = agent_dirs(workspace, user_config_dir(), claude_user_dir())
    loaded = load_agents(dirs, tools.names(), trusted)
    return ToolRegistry([*tools, TaskTool(runner, loaded.agents)]), loaded.warnings
