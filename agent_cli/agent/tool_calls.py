"""One response's tool calls, run: PreToolUse hooks (which may block a call, change its input or
stop the turn), the permission question (or the refusal a headless run gives), the tool itself,
PostToolUse (or PostToolUseFailure) hooks, and the result block the model reads, with what the hooks
added to it. Concurrency-safe calls (several `task` calls) run together; anything else one at a time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_cli.context.offload import with_hook_parts
from agent_cli.core.events import (
    Event,
    Notice,
    PermissionDenied,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
)
from agent_cli.core.types import Block, BlockMeta, ToolCall, Trust
from agent_cli.extensions.hooks.api import HookRunner, PreToolOutcome, combine_permission
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.permissions import Decision, Permissions
from agent_cli.tools.preview import permission_preview
from agent_cli.tools.registry import InputError, ToolRegistry, run_call, validate_input
from agent_cli.tools.sandbox.bwrap import permission_note

if TYPE_CHECKING:
    from agent_cli.session.log import EventLog

Emit = Callable[[Event], None]
SETTLE_SECONDS = 5.0  # on an interrupt, how long the calls of a batch get to end (a sub-agent its spending)
# what the composition root adds to a result after the tool ran (a folder's memory files after a read):
# (its tag, core/tags.py RESULT_PART_TAGS; the element) or None
ResultPart = Callable[[ToolCall, ToolResult], "tuple[str, str] | None"]


class ToolCalls:
    """Runs tool calls for a loop. `first_change(emit)` is awaited before a call that may change the
    workspace (the loop takes its checkpoint once per prompt). `hook_stop` holds a hook's `continue:
    false` reason (the loop clears it at each prompt): once it is set, no later call runs, each gets a
    result saying so, and the loop ends the turn. `metas`: the facts tools reported for the ledger."""

    def __init__(
        self,
        *,
        tools: ToolRegistry,
        permissions: Permissions,
        tool_ctx: ToolContext,
        interactive: bool,
        log: EventLog,
        hooks: HookRunner,
        first_change: Callable[[Emit], Awaitable[None]],
    ) -> None:
        self.tools = tools
        self.permissions = permissions
        self.tool_ctx = tool_ctx
        self.interactive = interactive
        self.log = log
        self.hooks = hooks
        self.first_change = first_change
        self.hook_stop: str | None = None  # a hook's `continue: false` during this prompt's tools
        self.metas: list[tuple[str, dict]] = []
        self.result_parts: list[ResultPart] = []  # installed by the composition root (api/compose.py)

    def batch(self, pending: list[Block]) -> list[Block]:
        """The next calls to run: a run of consecutive concurrency-safe calls (several `task` calls)
        together, anything else one at a time. Results keep the order of the calls."""
        batch = [pending[0]]
        if not self._concurrent(pending[0]):
            return batch
        for block in pending[1:]:
            if not self._concurrent(block):
                break
            batch.append(block)
        return batch

    async def run_batch(self, batch: list[Block], emit: Emit) -> list[Block]:
        """The results of a batch's calls, in order. Interrupted, every call is cancelled and waited for
        (up to SETTLE_SECONDS; a second interrupt stops the wait) before the interrupt goes on: a
        sub-agent records its spending as it ends, and the turn must not end before the last one has."""
        tasks = [asyncio.ensure_future(self.run(block, emit)) for block in batch]
        try:
            return list(await asyncio.gather(*tasks))
        except asyncio.CancelledError:
            for task in tasks:
                if not task.cancelling():  # once: a second cancel would cut a call's own cleanup short
                    task.cancel()
            await asyncio.wait(tasks, timeout=SETTLE_SECONDS)
            raise

    def _concurrent(self, block: Block) -> bool:
        return bool(getattr(self.tools.get(block.name), "concurrency_safe", False))

    async def run(self, block: Block, emit: Emit, *, mentioned: bool = False) -> Block:
        """One call. `mentioned`: a read the person asked for with `@` — their naming it is the
        yes an outside-the-workspace read would ask for (deny rules were checked before)."""
        tool = self.tools.get(block.name)
        call = _normalized(tool, ToolCall.from_block(block))
        meta = BlockMeta(Trust.TOOL, "tool", time.time(), call.name)
        if self.hook_stop is not None:  # a hook stopped the turn: the response's later calls do not run
            return self._unrun(
                call, _target(tool, call), meta, emit, f"a hook stopped the turn ({self.hook_stop})"
            )
        hooked = await self.hooks.pre_tool_use(call, emit)
        self.hook_stop = self.hook_stop or hooked.stop
        before = [hooked.context] if hooked.context else []  # what the model reads after the result
        denied: str | None = None
        given = hooked.updated_input if hooked.stop is None and hooked.blocked is None else None
        given = given if tool is not None else None  # an unknown tool's call fails as it is
        if given is not None:
            rewritten = self._rewritten(tool, call, given, emit)
            if isinstance(rewritten, str):
                denied = rewritten
            else:
                call, mentioned = rewritten, False  # not the call the person named
                before.append(f"A PreToolUse hook changed this call's input to: {json.dumps(call.input)}")
        target = _target(tool, call)
        if hooked.stop is not None:
            why = f"a PreToolUse hook stopped the turn: {hooked.stop}"
            return self._unrun(call, target, meta, emit, why, before)
        if hooked.blocked is not None:
            emit(PermissionDenied(call, target, f"blocked by a PreToolUse hook: {hooked.blocked}"))
            denied = hooked.blocked
        elif denied is None and tool is not None and not mentioned:
            denied = await self._permission(tool, call, target, emit, hooked)
        if self.hook_stop is not None and not denied:  # a call run together with this one stopped the turn
            return self._unrun(
                call, target, meta, emit, f"a hook stopped the turn ({self.hook_stop})", before
            )
        started = time.monotonic()  # after the person answered: the duration is the tool's own
        after, added = "", []
        if denied:
            result = ToolResult(denied, is_error=True)
        else:
            if tool is not None and not tool.read_only:
                await self.first_change(emit)
            emit(ToolStarted(call, target))
            ctx = replace(self.tool_ctx, call_id=call.id, emit=emit)  # per call: calls may run together
            result = await run_call(self.tools, call, ctx)
            hooked_after = await self.hooks.post_tool_use(call, result, emit)
            self.hook_stop = self.hook_stop or hooked_after.stop
            after = hooked_after.feedback
            added = [part for add in self.result_parts if (part := add(call, result))]
        # tagged, so the engine knows the program's parts are ours (context/offload.py)
        output, tag = with_hook_parts(result.output, "\n".join(before), after, added)
        result, meta = replace(result, output=output), replace(meta, tag=tag)
        duration = time.monotonic() - started
        emit(ToolFinished(call, target, result.output, result.is_error, duration, result.display))
        if result.meta:
            self.metas.append((call.id, result.meta))  # the ledger takes them once it saw the results
            meta_json = json.dumps(result.meta, default=str)
            self.log.append("tool_meta", tool_use_id=call.id, meta=json.loads(meta_json))
        if isinstance(result.meta.get("output_ref"), str):  # the tool kept its full output in the store
            meta = replace(meta, ref=result.meta["output_ref"])
        block = Block.tool_result(call.id, result.output, result.is_error, meta)
        if result.image is not None:  # read_file of a PNG: the image travels in the result
            block = replace(block, media_type=result.image.media_type, data=result.image.data)
        return block

    def _rewritten(self, tool, call: ToolCall, given, emit: Emit) -> ToolCall | str:
        """The call with a PreToolUse hook's updatedInput, as the tool will run it (the permission
        check then judges it, as any input); or why it must not run: it does not fit the tool's
        schema. Either way the log says so."""
        given_json = json.loads(json.dumps(given, default=str))
        try:
            normalized = validate_input(getattr(tool, "accepts", tool.input_schema), given)
        except InputError as exc:
            reason = f"a PreToolUse hook changed the input of {call.name} to one that is not valid: {exc}"
            emit(Notice(f"{reason}; the call was not run", "warning"))
            self.log.append("tool_input", tool_use_id=call.id, rejected=given_json, reason=str(exc))
            return f"Not run: {reason}."
        self.log.append("tool_input", tool_use_id=call.id, input=given_json, original=call.input)
        return replace(call, input=normalized)

    def _unrun(
        self, call: ToolCall, target: str, meta: BlockMeta, emit: Emit, why: str, before: Sequence[str] = ()
    ) -> Block:
        """The result of a call that does not run because a hook stopped the turn (`continue: false`):
        every tool_use still gets its result."""
        output, tag = with_hook_parts(f"Not run: {why}.", "\n".join(before), "")
        emit(ToolFinished(call, target, output, True))
        return Block.tool_result(call.id, output, True, replace(meta, tag=tag))

    async def _permission(
        self, tool, call: ToolCall, target: str, emit: Emit, hooked: PreToolOutcome | None = None
    ) -> str | None:
        """None when the call may run; else the message the model reads."""
        decision = self.permissions.decide(tool, call.input)
        decision = combine_permission(decision, hooked)
        if decision.action == "allow":
            return None
        if decision.action == "ask" and self.interactive:
            future: asyncio.Future = asyncio.get_running_loop().create_future()
            preview = permission_preview(call.name, call.input, self.tool_ctx.workspace)
            rule = self.permissions.describe_rule(tool, call.input)
            cwd = str(self.tool_ctx.workspace)
            reason = _with_note(decision.reason, tool, call, self.tool_ctx, "\n")
            emit(PermissionRequest(call, target, reason, rule, preview.text, preview.kind, cwd, future))
            answer = await future
            self.log.append("permission", tool=call.name, target=target, answer=answer)
            if answer == "allow_always":
                saved = self.permissions.allow_always(tool, call.input)
                if saved:
                    emit(Notice(f"saved for this session: {', '.join(saved)}", "info"))
                return None
            if answer == "allow_once":
                return None
            emit(PermissionDenied(call, target, "denied by the person"))
            return (
                f"The person denied permission to run {call.name} on {target}. Ask them or try another way."
            )
        if decision.action == "ask":
            rules = self.permissions.always_rules(tool, call.input)
            hint = f" (e.g. --allowed-tools '{' '.join(rules)}')" if rules else ""
            reason = f"not allowed without a person to ask: {decision.reason}"
            advice = _advice(self.permissions.mode, call.name, decision, hint)
        else:
            reason, advice = decision.reason, ""
        shown = _with_note(reason, tool, call, self.tool_ctx)
        emit(PermissionDenied(call, target, shown))
        self.log.append("permission", tool=call.name, target=target, answer="deny", reason=shown)
        return f"Permission denied: {call.name} {target}: {reason.rstrip('.')}. {advice}".rstrip()


def _advice(mode: str, tool: str, decision: Decision, hint: str) -> str:
    """What would let a refused headless call run: a mode that allows it, else only a rule, else (an
    ask that always asks: outside the sandbox, a write outside the workspace) only a person."""
    if decision.always:
        return "No mode or rule allows it: only a person can, in `agent` (the TUI) or an editor."
    if "protected path" in decision.reason or mode == "yolo":  # a protected path asks in every mode
        return f"Allow it by a rule that names it{hint}."
    modes = "auto-edit or yolo" if mode == "ask" and tool in ("write_file", "edit_file") else "yolo"
    return f"Re-run agent with --permission-mode {modes}, or allow it by a rule{hint}."


def _with_note(text: str, tool, call: ToolCall, ctx: ToolContext, sep: str = "; ") -> str:
    """`text` and, for bash, where the command would run (sandboxed, unconfined, outside the sandbox)."""
    note = permission_note(tool.name if tool else "", call.input, ctx.sandbox)
    return f"{text}{sep}{note}" if note else text


def _target(tool, call: ToolCall) -> str:
    if tool is None:
        return ""
    try:
        return tool.target(call.input)
    except Exception:  # noqa: BLE001 - a label must never break a turn
        return ""


def _normalized(tool, call: ToolCall) -> ToolCall:
    """The call with its input as the tool will run it (registry.validate_input: "true" is true, "10"
    is 10), so that hooks, the permission check and the sandbox judge what runs: a string "true" for
    `dangerously_disable_sandbox` was judged as no escape and run as one. Input that does not fit
    stays as it is (run_call says why)."""
    if tool is None:
        return call
    try:
        return replace(call, input=validate_input(getattr(tool, "accepts", tool.input_schema), call.input))
    except InputError:
        return call
