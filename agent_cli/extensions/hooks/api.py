"""What the loop and the session know of hooks: a runner with one method per event, and the outcomes.

The loop holds a `HookRunner` (NoHooks when none are configured); where hooks come from (settings
files, config) is agent/hooks/load.py's business, composed in the session runner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agent_cli.core.events import ContextStatus, Event
from agent_cli.core.types import Block, BlockMeta, ToolCall, Trust
from agent_cli.tools.base import ToolResult
from agent_cli.tools.permissions import Decision

Emit = Callable[[Event], None]
HookPermission = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class PreToolOutcome:
    """PreToolUse: `blocked` (exit 2 / deny) is the tool's result; `permission` joins the permission check;
    `updated_input` replaces the call's input (checked against the tool's schema, then judged by the
    permission check as any input is); `context` is added to the tool's result."""

    blocked: str | None = None  # the reason the model reads instead of the tool's output
    permission: HookPermission | None = None
    reason: str = ""  # permissionDecisionReason, shown in the permission modal on "ask"
    # `continue: false` (the stopReason): this call and the response's later ones do not run; the turn ends
    stop: str | None = None
    context: str = ""  # additionalContext
    updated_input: Any = None  # hookSpecificOutput.updatedInput (None: the input stays)


@dataclass(frozen=True)
class PostToolOutcome:
    """PostToolUse (the tool succeeded) or PostToolUseFailure (it failed)."""

    feedback: str = ""  # exit 2 stderr, `decision: block` reason, additionalContext: added to the result
    stop: str | None = None  # `continue: false`: the response's later calls do not run; the turn ends


@dataclass(frozen=True)
class PromptOutcome:
    """UserPromptSubmit: `blocked` refuses the prompt (the person is told why); `context` is added."""

    blocked: str | None = None
    context: tuple[str, ...] = ()


@dataclass(frozen=True)
class StopOutcome:
    """Stop / SubagentStop: `resume` (exit 2 / `decision: block`) is what the model is told to do next."""

    resume: str | None = None


class HookRunner(Protocol):
    async def pre_tool_use(self, call: ToolCall, emit: Emit) -> PreToolOutcome: ...

    async def post_tool_use(self, call: ToolCall, result: ToolResult, emit: Emit) -> PostToolOutcome:
        """PostToolUse when `result` is a success, PostToolUseFailure when it is an error."""
        ...

    async def user_prompt_submit(self, prompt: str, emit: Emit) -> PromptOutcome: ...

    async def stop(self, active: bool, emit: Emit) -> StopOutcome: ...

    async def subagent_stop(self, active: bool, emit: Emit) -> StopOutcome: ...

    async def pre_compact(self, trigger: str, instructions: str, emit: Emit) -> None: ...

    async def session_start(self, source: str, emit: Emit) -> tuple[str, ...]:
        """Context to add to the conversation (stdout / additionalContext of the hooks)."""
        ...

    async def session_end(self, reason: str) -> None: ...

    async def notification(self, message: str, emit: Emit) -> None: ...


class NoHooks:
    """No hooks configured: every event goes on unchanged."""

    async def pre_tool_use(self, call: ToolCall, emit: Emit) -> PreToolOutcome:
        return PreToolOutcome()

    async def post_tool_use(self, call: ToolCall, result: ToolResult, emit: Emit) -> PostToolOutcome:
        return PostToolOutcome()

    async def user_prompt_submit(self, prompt: str, emit: Emit) -> PromptOutcome:
        return PromptOutcome()

    async def stop(self, active: bool, emit: Emit) -> StopOutcome:
        return StopOutcome()

    async def subagent_stop(self, active: bool, emit: Emit) -> StopOutcome:
        return StopOutcome()

    async def pre_compact(self, trigger: str, instructions: str, emit: Emit) -> None:
        return None

    async def session_start(self, source: str, emit: Emit) -> tuple[str, ...]:
        return ()

    async def session_end(self, reason: str) -> None:
        return None

    async def notification(self, message: str, emit: Emit) -> None:
        return None


class HookDelegate:
    """A HookRunner that passes every event to `inner`; subclasses change one or two of them."""

    def __init__(self, inner: HookRunner) -> None:
        self.inner = inner

    async def pre_tool_use(self, call: ToolCall, emit: Emit) -> PreToolOutcome:
        return await self.inner.pre_tool_use(call, emit)

    async def post_tool_use(self, call: ToolCall, result: ToolResult, emit: Emit) -> PostToolOutcome:
        return await self.inner.post_tool_use(call, result, emit)

    async def user_prompt_submit(self, prompt: str, emit: Emit) -> PromptOutcome:
        return await self.inner.user_prompt_submit(prompt, emit)

    async def stop(self, active: bool, emit: Emit) -> StopOutcome:
        return await self.inner.stop(active, emit)

    async def subagent_stop(self, active: bool, emit: Emit) -> StopOutcome:
        return await self.inner.subagent_stop(active, emit)

    async def pre_compact(self, trigger: str, instructions: str, emit: Emit) -> None:
        await self.inner.pre_compact(trigger, instructions, emit)

    async def session_start(self, source: str, emit: Emit) -> tuple[str, ...]:
        return await self.inner.session_start(source, emit)

    async def session_end(self, reason: str) -> None:
        await self.inner.session_end(reason)

    async def notification(self, message: str, emit: Emit) -> None:
        await self.inner.notification(message, emit)


class SubagentHooks(HookDelegate):
    """The hooks of a sub-agent's loop (`Loop(hooks=SubagentHooks(parent_hooks))`): its tools fire
    PreToolUse/PostToolUse as the parent's do; its end fires SubagentStop instead of Stop; its prompt
    (written by the parent model, not a person) fires no UserPromptSubmit; session events stay the parent's."""

    async def user_prompt_submit(self, prompt: str, emit: Emit) -> PromptOutcome:
        return PromptOutcome()

    async def stop(self, active: bool, emit: Emit) -> StopOutcome:
        return await self.inner.subagent_stop(active, emit)

    async def session_start(self, source: str, emit: Emit) -> tuple[str, ...]:
        return ()

    async def session_end(self, reason: str) -> None:
        return None


def combine_permission(decision: Decision, hooked: PreToolOutcome | None) -> Decision:
    """A PreToolUse hook's permissionDecision joined with the permission check, as Claude Code joins
    them: a deny (either side) wins; a hook's "ask" forces the question; a hook's "allow" skips the
    question, but not one a rule asks for (an `ask` rule, a protected path) nor one that always asks
    (running outside the sandbox, writing outside the workspace): a hook judges what it reads of the
    call, and the model can add to a call what the hook does not read."""
    wanted = hooked.permission if hooked else None
    reason = hooked.reason if hooked else ""
    if wanted is None or decision.action == "deny":
        return decision
    if wanted == "deny":
        return Decision("deny", reason or "denied by a PreToolUse hook")
    if wanted == "ask":
        said = f"a PreToolUse hook asks: {reason}" if reason else "a PreToolUse hook asks"
        return Decision(
            "ask", said if decision.action == "allow" else f"{said}; {decision.reason}", decision.rule
        )
    if decision.action == "ask" and (decision.rule or decision.always):
        return decision
    return Decision("allow", "allowed by a PreToolUse hook")


def hook_block(text: str, tag: str) -> Block:
    """What a hook adds to the context (UserPromptSubmit, SessionStart), as a tagged injection."""
    return Block.text_block(text, BlockMeta(Trust.TOOL, "hook", time.time(), tag=tag))


def stop_feedback(reason: str) -> Block:
    """A Stop hook blocked the end of the turn: the model reads why, and goes on."""
    return Block.text_block(f"Stop hook feedback:\n{reason}", BlockMeta(Trust.USER, "hook", time.time()))


def compaction_due(status: ContextStatus) -> bool:
    """The auto-compaction threshold is reached: PreCompact hooks run before the engine compacts."""
    return status.auto_compact and status.fraction >= status.auto_fraction
