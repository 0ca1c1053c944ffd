"""CommandHooks: run the configured hook commands for each event and fold their answers into one.

Every hook that matches runs, concurrently (the same command once). Their replies combine as Claude
Code combines them: any block blocks (reasons joined), deny > ask > allow, any `continue: false`
stops. Warnings and `systemMessage`s reach the person as Notices; every run is recorded in the log.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.core.events import Event, Notice
from agent_cli.core.types import ToolCall
from agent_cli.extensions.hooks.api import (
    Emit,
    HookPermission,
    PostToolOutcome,
    PreToolOutcome,
    PromptOutcome,
    StopOutcome,
)
from agent_cli.extensions.hooks.process import HookReply, HookRun, interpret, label, run_hook
from agent_cli.extensions.hooks.spec import FILE_TOOLS, HookGroup, claude_input, claude_name, select
from agent_cli.tools.base import ToolResult
from agent_cli.tools.sandbox.child_env import ChildEnv

Record = Callable[..., None]  # EventLog.append(kind, **fields)
LOG_CHARS = 2_000
PERMISSION_MODES = {"ask": "default", "auto-edit": "acceptEdits", "yolo": "bypassPermissions"}


@dataclass(frozen=True)
class HookIdentity:
    """The session as hooks see it (it changes on /clear and /resume)."""

    session_id: str
    transcript_path: Path  # our events.jsonl (not Claude Code's transcript format)
    permission_mode: str


class CommandHooks:
    """Implements agent.hooks.api.HookRunner with shell commands."""

    def __init__(
        self,
        groups: list[HookGroup],
        workspace: Path,
        identity: Callable[[], HookIdentity],
        record: Record | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.groups = groups
        self.workspace = workspace
        self.identity = identity
        self.record = record or (lambda kind, **fields: None)
        base = ChildEnv().build() if env is None else env  # never the agent's keys or other secrets
        self.env = {**base, "CLAUDE_PROJECT_DIR": str(workspace)}

    # -- events ------------------------------------------------------------------------------------
    async def pre_tool_use(self, call: ToolCall, emit: Emit) -> PreToolOutcome:
        fields = {"tool_name": claude_name(call.name), "tool_input": self._tool_input(call)}
        replies = await self._fire("PreToolUse", (call.name, claude_name(call.name)), fields, emit, call)
        blocks = [r.block for r in replies if r.block]
        permission, reason = _strongest(replies)
        given = [self._our_input(call, r.updated_input) for r in replies if r.updated_input is not None]
        if len({json.dumps(g, sort_keys=True, default=str) for g in given}) > 1:
            emit(
                Notice(
                    "PreToolUse hooks changed one call's input differently; the first one's is used",
                    "warning",
                )
            )
        return PreToolOutcome(
            blocked="\n".join(blocks) if blocks else None,
            permission=permission,
            reason=reason,
            stop=_first_stop(replies),
            context="\n".join(r.context for r in replies if r.context),
            updated_input=given[0] if given else None,
        )

    async def post_tool_use(self, call: ToolCall, result: ToolResult, emit: Emit) -> PostToolOutcome:
        """PostToolUse after a success; PostToolUseFailure after a failure (with the error), as in Claude Code."""
        fields: dict[str, Any] = {"tool_name": claude_name(call.name), "tool_input": self._tool_input(call)}
        if result.is_error:
            event = "PostToolUseFailure"
            fields.update(error=result.output, is_interrupt=False)  # an interrupt fires no hook
        else:
            event = "PostToolUse"
            fields["tool_response"] = self._tool_response(call, result)
        replies = await self._fire(event, (call.name, claude_name(call.name)), fields, emit, call)
        feedback = [text for r in replies for text in (r.block, r.context) if text]
        return PostToolOutcome("\n".join(feedback), _first_stop(replies))

    async def user_prompt_submit(self, prompt: str, emit: Emit) -> PromptOutcome:
        replies = await self._fire("UserPromptSubmit", (), {"prompt": prompt}, emit)
        refusals = [text for r in replies for text in (r.block, r.stop) if text]
        if refusals:
            return PromptOutcome(blocked="\n".join(refusals))
        return PromptOutcome(context=tuple(r.context for r in replies if r.context))

    async def stop(self, active: bool, emit: Emit) -> StopOutcome:
        return await self._stop("Stop", active, emit)

    async def subagent_stop(self, active: bool, emit: Emit) -> StopOutcome:
        return await self._stop("SubagentStop", active, emit)

    async def pre_compact(self, trigger: str, instructions: str, emit: Emit) -> None:
        fields = {"trigger": trigger, "custom_instructions": instructions}
        await self._fire("PreCompact", (trigger,), fields, emit)

    async def session_start(self, source: str, emit: Emit) -> tuple[str, ...]:
        replies = await self._fire("SessionStart", (source,), {"source": source}, emit)
        return tuple(r.context for r in replies if r.context)

    async def session_end(self, reason: str) -> None:
        await self._fire("SessionEnd", (), {"reason": reason}, _nowhere)

    async def notification(self, message: str, emit: Emit) -> None:
        await self._fire("Notification", (), {"message": message}, emit)

    # -- running -----------------------------------------------------------------------------------
    async def _stop(self, event: str, active: bool, emit: Emit) -> StopOutcome:
        replies = await self._fire(event, (), {"stop_hook_active": active}, emit)
        if _first_stop(replies) is not None:
            return StopOutcome()  # `continue: false` wins over "block": the turn ends
        reasons = [r.block for r in replies if r.block]
        return StopOutcome("\n".join(reasons) if reasons else None)

    async def _fire(
        self,
        event: str,
        names: tuple[str, ...],
        fields: dict[str, Any],
        emit: Emit,
        call: ToolCall | None = None,
    ) -> list[HookReply]:
        commands = select(self.groups, event, *names)
        if not commands:
            return []
        who = self.identity()
        payload = {
            "session_id": who.session_id,
            "transcript_path": str(who.transcript_path),
            "cwd": str(self.workspace),
            "permission_mode": PERMISSION_MODES.get(who.permission_mode, who.permission_mode),
            "hook_event_name": event,
            **fields,
        }
        if call is not None:
            payload["tool_use_id"] = call.id
        text = json.dumps(payload, default=str)
        runs = await asyncio.gather(*(run_hook(c, text, self.workspace, self.env) for c in commands))
        replies = [interpret(event, run) for run in runs]
        for run, reply in zip(runs, replies, strict=True):
            self._report(event, run, reply, emit)
        return replies

    def _report(self, event: str, run: HookRun, reply: HookReply, emit: Emit) -> None:
        if reply.warning:
            emit(Notice(reply.warning, "warning"))
        if reply.message:
            emit(Notice(f"{event} hook: {reply.message}", "info"))
        if reply.stop:
            emit(Notice(f"stopped by a {event} hook: {reply.stop}", "warning"))
        self.record(
            "hook",
            event=event,
            command=label(run.command),
            source=run.command.source,
            exit_code=run.exit_code,
            stdout="" if reply.suppress_output else run.stdout[:LOG_CHARS],
            stderr=run.stderr[:LOG_CHARS],
            error=run.error,
            blocked=bool(reply.block),
        )

    # -- payloads ----------------------------------------------------------------------------------
    def _tool_input(self, call: ToolCall) -> dict[str, Any]:
        """Our input, plus Claude Code's absolute `file_path` for the file tools."""
        return claude_input(call.name, call.input, self.workspace)

    def _our_input(self, call: ToolCall, given: Any) -> Any:
        """A hook's updatedInput in our terms: the absolute `file_path` we add for the file tools
        (_tool_input) is dropped when it is the one we sent, and is the new `path` when it is not (or
        when the hook gave no `path`: Claude Code's file tools take `file_path` alone)."""
        if call.name not in FILE_TOOLS or not isinstance(given, dict) or "file_path" not in given:
            return given
        out = dict(given)
        file_path = out.pop("file_path")
        if file_path != self._tool_input(call).get("file_path") or "path" not in out:
            out["path"] = file_path
        return out

    def _tool_response(self, call: ToolCall, result: ToolResult) -> dict[str, Any]:
        out: dict[str, Any] = {"output": result.output, "is_error": result.is_error}
        out["success"] = not result.is_error
        if "file_path" in (tool_input := self._tool_input(call)):
            out["filePath"] = tool_input["file_path"]
        return out


def _strongest(replies: list[HookReply]) -> tuple[HookPermission | None, str]:
    for wanted in ("deny", "ask", "allow"):
        for reply in replies:
            if reply.permission == wanted:
                return wanted, reply.permission_reason
    return None, ""


def _first_stop(replies: list[HookReply]) -> str | None:
    return next((r.stop for r in replies if r.stop), None)


def _nowhere(event: Event) -> None:
    return None
