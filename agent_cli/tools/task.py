"""task: hand a self-contained piece of work to a sub-agent and get back only its final answer.

The child runs its own loop, context and log (agent/subagents.py implements `SubagentRunner`; tools/
cannot import agent/, so the runner is injected). Its tool traffic never enters the parent's
context: the result is the child's answer plus one line saying where its log is. Several task calls
in one response run concurrently (`concurrency_safe`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from agent_cli.core.events import Event, SubagentProgress
from agent_cli.core.types import Usage
from agent_cli.tools.base import ToolContext, ToolResult

DEFAULT_AGENT = "general-purpose"


@dataclass(frozen=True)
class AgentDefinition:
    """A sub-agent type: `.agent/agents/*.md`, `.claude/agents/*.md`, the user config's `agents/`, or
    built in. `tools` None means the parent's tools except `task`; `model` "" means the parent's."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    model: str = ""
    source: str = "built-in"


@dataclass(frozen=True)
class SubagentOutcome:
    answer: str  # the child's final answer (or what went wrong)
    is_error: bool = False
    stop_reason: str = ""
    child_id: str = ""
    log_path: str = ""  # the child's events.jsonl, relative to the workspace when inside it
    ref: str = ""  # recall ref of the child's transcript in the parent's store ("" when not kept)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0


Progress = Callable[[Event], None]
"""Where a child's progress goes: SubagentProgress events (the task tool adds its call id), and the few
child events the person must see as they are (a permission request, a denial, a notice)."""


class SubagentRunner(Protocol):
    async def run(
        self, definition: AgentDefinition, prompt: str, description: str, on_progress: Progress
    ) -> SubagentOutcome:
        """Run a child to its end. Never raises except asyncio.CancelledError (after the child closed
        its open tool calls as interrupted)."""
        ...


class TaskTool:
    name = "task"
    read_only = True  # it does not act itself; the child's own tools ask as usual
    compactable = False  # a child's answer is the distilled result of many calls: keep it
    concurrency_safe = True  # several task calls in one response run at the same time

    def __init__(self, runner: SubagentRunner, agents: Sequence[AgentDefinition]) -> None:
        self.runner = runner
        self.agents = {a.name: a for a in agents}
        listed = "\n".join(f"- {a.name}: {a.description}" for a in self.agents.values())
        self.description = (
            "Launch a sub-agent for a self-contained task (a broad search, an investigation across many "
            "files, an independent change). It works in its own context with its own tools and returns "
            "only its final answer, so its tool outputs never fill this conversation. Give it a complete "
            "`prompt` (it sees nothing of this conversation) and say what to report back. Several task "
            "calls in one response run concurrently.\n\nAgent types (`subagent_type`, default "
            f"{DEFAULT_AGENT if DEFAULT_AGENT in self.agents else next(iter(self.agents), '')}):\n{listed}"
        )
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A short (3-5 word) label of the task."},
                "prompt": {"type": "string", "description": "The complete task for the sub-agent."},
                "subagent_type": {
                    "type": "string",
                    "enum": list(self.agents),
                    "description": "Which agent type runs it.",
                },
            },
            "required": ["description", "prompt"],
        }

    def target(self, input: dict[str, Any]) -> str:
        kind = input.get("subagent_type") or DEFAULT_AGENT
        return f"{kind}: {input.get('description', '')}".strip()

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        prompt = str(input.get("prompt", "")).strip()
        description = str(input.get("description", "")).strip()
        kind = input.get("subagent_type") or (DEFAULT_AGENT if DEFAULT_AGENT in self.agents else "")
        definition = self.agents.get(kind)
        if definition is None:
            known = ", ".join(self.agents) or "none"
            return ToolResult(f"unknown subagent_type {kind!r}; available: {known}", is_error=True)
        if not prompt:
            return ToolResult("task needs a non-empty prompt: the sub-agent sees nothing else", is_error=True)

        def progress(event: Event) -> None:
            if isinstance(event, SubagentProgress):
                event = replace(event, call_id=ctx.call_id, description=description)
            if ctx.emit is not None:
                ctx.emit(event)

        outcome = await self.runner.run(definition, prompt, description, progress)
        return ToolResult(
            render_outcome(definition, outcome),
            is_error=outcome.is_error,
            meta={"subagent": definition.name, "child_id": outcome.child_id, "log": outcome.log_path},
        )


def render_outcome(definition: AgentDefinition, outcome: SubagentOutcome) -> str:
    """What the parent reads: the answer, then one line on where the rest is."""
    tokens = outcome.usage.total_input + outcome.usage.output_tokens
    where = f"log: {outcome.log_path}" if outcome.log_path else "no log"
    if outcome.ref:
        where += f"; recall ref {outcome.ref} for its transcript"
    status = "" if not outcome.is_error else f", {outcome.stop_reason or 'failed'}"
    calls = f"{outcome.turns} model call{'s' * (outcome.turns != 1)}"
    footer = f"[sub-agent {definition.name}: {calls}, {tokens:,} tokens{status}; {where}]"
    answer = outcome.answer.strip() or "(the sub-agent gave no answer)"
    return f"{answer}\n\n{footer}"
