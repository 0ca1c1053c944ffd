"""The agent loop: send the view, stream the answer, run the tools, feed the results back.

It knows the engine only as "append, build, observe, compact if the policy says so, recover from
an overflow": the tiers are the engine's business. Every change to the view is logged first.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_cli.agent.response_reader import PARTIAL_MARK, ResponseReader
from agent_cli.agent.tool_calls import ToolCalls
from agent_cli.core.errors import ContextOverflowError, ProviderError
from agent_cli.core.events import (
    AssistantMessage,
    Compacted,
    CompactionMeasured,
    ContextUpdate,
    ErrorEvent,
    Event,
    Notice,
    RequestStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdate,
)
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Totals, Trust, Usage
from agent_cli.extensions.hooks.api import (
    HookRunner,
    NoHooks,
    compaction_due,
    hook_block,
    stop_feedback,
)
from agent_cli.llm.base import (
    Provider,
    StreamDone,
)
from agent_cli.tools.base import ToolContext
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from agent_cli.agent.input.calls import PersonCalls
    from agent_cli.context.engine import ContextEngine
    from agent_cli.context.model import Compaction
    from agent_cli.session.log import EventLog

Emit = Callable[[Event], None]
INTERRUPTED = "[interrupted by the person before this tool finished]"
PROMPT_LABEL_CHARS = 500


class Loop:
    def __init__(
        self,
        *,
        provider: Provider,
        engine: ContextEngine,
        tools: ToolRegistry,
        permissions: Permissions,
        log: EventLog,
        tool_ctx: ToolContext,
        model: ModelInfo,
        max_tokens: int,
        max_turns: int,
        interactive: bool,
        totals: Totals | None = None,
        debug: bool = False,
        hooks: HookRunner | None = None,
    ):
        self.provider = provider
        self.engine = engine
        self.tools = tools
        self.permissions = permissions
        self.log = log
        self.tool_ctx = tool_ctx
        self.model = model
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.interactive = interactive
        self.totals = totals or Totals()
        self.debug = debug
        self.hooks: HookRunner = hooks or NoHooks()
        self.turn = 0
        self.requests_this_run = 0
        # called once per prompt, before its first tool call that may change the workspace (checkpoints)
        self.before_change: Callable[[Emit], Awaitable[None]] | None = None
        self._changed_this_run = False
        self.interrupt_reason = ""  # set by whoever cancels the turn; "" = the person interrupted
        self.calls = ToolCalls(
            tools=tools,
            permissions=permissions,
            tool_ctx=tool_ctx,
            interactive=interactive,
            log=log,
            hooks=self.hooks,
            first_change=self.first_change,
        )

    # -- the view: every change is logged, then applied ------------------------------------------
    def _append(self, kind: str, message: Message, emit: Emit, **extra: object) -> None:
        appended = self.engine.append(message)
        self.log.message(kind, appended.to_log, **extra)
        for compaction in appended.compactions:
            self._record(compaction, emit, applied=True)
        self._check()

    def _record(self, compaction: Compaction, emit: Emit, *, applied: bool) -> None:
        self.log.compaction(compaction)
        if not applied:
            self.engine.apply(compaction)
        if not compaction.routine:
            emit(compacted_event(compaction))
        self._check()

    def _check(self) -> None:
        if self.debug:
            from agent_cli.context.invariants import assert_valid

            assert_valid(self.engine.messages)

    def _close_dangling_user(self) -> None:
        """Roles must alternate: a person's message after an unanswered one gets a visible stand-in."""
        if self.engine.messages and self.engine.messages[-1].role == "user":
            stand_in = Message(
                "assistant",
                (
                    Block.text_block(
                        "(no response: the previous turn ended early)",
                        BlockMeta(Trust.ASSISTANT, "assistant"),
                    ),
                ),
                self.turn,
            )
            appended = self.engine.append(stand_in)
            self.log.message(
                "assistant", appended.message, usage=Usage().to_json(), model="", stop_reason="stand_in"
            )

    # -- a turn ------------------------------------------------------------------------------------
    async def run(
        self,
        prompt: str,
        emit: Emit,
        *,
        user_message: Message | None = None,
        calls: PersonCalls | None = None,
    ) -> TurnFinished:
        """One prompt: the person's message, the calls they made with it (`@` mentions, a `!`
        command: a tool pair right after it), then the model until it answers."""
        self.turn += 1
        self.requests_this_run = 0
        self._changed_this_run = False
        self.interrupt_reason = ""
        self.calls.hook_stop = None
        emit(TurnStarted(prompt))
        self._close_dangling_user()
        submitted = await self.hooks.user_prompt_submit(prompt, emit)
        if submitted.blocked is not None:
            emit(Notice(f"prompt refused by a UserPromptSubmit hook: {submitted.blocked}", "warning"))
            return self._finish(emit, "blocked_by_hook", submitted.blocked, is_error=True)
        for text in submitted.context:
            self.engine.inject(hook_block(text, "user-prompt-submit-hook"))
        message = user_message or Message(
            "user", (Block.text_block(prompt, BlockMeta(Trust.USER, "user", time.time())),), self.turn
        )
        # the message holds the full text; `prompt` is only the label `agent sessions` shows
        label = prompt if len(prompt) <= PROMPT_LABEL_CHARS else prompt[:PROMPT_LABEL_CHARS] + "…"
        self._append("user", message, emit, prompt=label)
        emit(ContextUpdate(self.engine.status()))
        result = ""
        pending: list[Block] = []  # tool_use blocks of the current response still to be answered
        results: list[Block] = []
        stop_hook_active = False
        try:
            if calls is not None and calls.uses:
                pending = list(calls.uses)
                self._append(
                    "assistant", Message("assistant", calls.uses, self.turn), emit, stop_reason="person"
                )
                for use in calls.uses:
                    results.append(await calls.run(use, emit))
                self._append("tool_results", Message("user", tuple(results), self.turn), emit)
                self._record_metas()
                pending, ran, results = [], results[0], []
                if calls.ack is not None:  # a `!` command: its output waits for the next prompt
                    self._append("assistant", Message("assistant", (calls.ack,), self.turn), emit)
                    return self._finish(emit, "command", ran.text, is_error=ran.is_error)
                if self.calls.hook_stop is not None:  # a hook stopped the turn at an `@` mention's read
                    return self._finish(emit, "stopped_by_hook", self.calls.hook_stop)
            for step in itertools.count() if self.max_turns <= 0 else range(self.max_turns):
                if compaction_due(self.engine.status()):
                    await self.hooks.pre_compact("auto", "", emit)
                for compaction in await self.engine.maybe_compact():
                    self._record(compaction, emit, applied=True)
                emit(ContextUpdate(self.engine.status()))
                done = await self._request(step, emit)
                if done is None:
                    return self._finish(emit, "error", result, is_error=True)
                result = done.message.text or result
                pending = done.message.tool_uses()
                if not pending:
                    resume = (await self.hooks.stop(stop_hook_active, emit)).resume
                    if resume is None:
                        return self._finish(emit, done.stop_reason or "end_turn", result)
                    stop_hook_active = True  # the model goes on, told why; the hook sees it next time
                    self._append("user", Message("user", (stop_feedback(resume),), self.turn), emit)
                    continue
                results = []
                while pending:
                    batch = self.calls.batch(pending)
                    results += await self.calls.run_batch(batch, emit)
                    del pending[: len(batch)]
                self._append("tool_results", Message("user", tuple(results), self.turn), emit)
                self._record_metas()
                results = []
                emit(ContextUpdate(self.engine.status()))
                if self.calls.hook_stop is not None:
                    return self._finish(emit, "stopped_by_hook", self.calls.hook_stop)
            emit(
                Notice(
                    f"stopped after {self.max_turns} model calls (--max-turns); the task is not finished: "
                    "say 'continue' to go on",
                    "warning",
                )
            )
            return self._finish(emit, "max_turns", result, is_error=True)
        except asyncio.CancelledError:
            self._close_interrupted(pending, results)
            self._record_metas()
            emit(Notice("interrupted", "warning"))
            return self._finish(emit, "interrupted", result)

    def _close_interrupted(self, pending: list[Block], results: list[Block]) -> None:
        """Every tool_use of the last response gets a result, so the conversation stays valid."""
        if not pending:
            return
        text = (
            f"[interrupted: {self.interrupt_reason} before this tool finished]"
            if self.interrupt_reason
            else INTERRUPTED
        )
        closed = list(results) + [
            Block.tool_result(
                b.id, text, is_error=True, meta=BlockMeta(Trust.TOOL, "tool", time.time(), b.name)
            )
            for b in pending
        ]
        appended = self.engine.append(Message("user", tuple(closed), self.turn))
        self.log.message("tool_results", appended.message, interrupted=True)
        for compaction in appended.compactions:
            self.log.compaction(compaction)

    def _record_metas(self) -> None:
        """Facts tools reported beside their output (exit code, line range), in the order a resume
        replays them: after the results they belong to are in the view."""
        metas, self.calls.metas = self.calls.metas, []
        for tool_use_id, meta in metas:
            self.engine.ledger.record_result(tool_use_id, meta)

    def _finish(self, emit: Emit, stop_reason: str, result: str, *, is_error: bool = False) -> TurnFinished:
        self.log.append("turn_end", stop_reason=stop_reason)
        # num_turns counts this run's model calls, as Claude Code's result does
        event = TurnFinished(stop_reason, result, self.requests_this_run, is_error)
        emit(ContextUpdate(self.engine.status()))
        emit(event)
        return event

    # -- one model call, with overflow recovery ---------------------------------------------------
    async def _request(self, step: int, emit: Emit) -> StreamDone | None:
        overflow_tries = 0
        truncated: Compaction | None = None  # a T5 whose real "after" the next response tells
        while True:
            request = self.engine.build_request(max_tokens=self.max_tokens)
            emit(RequestStarted(step))
            reader = ResponseReader(emit, self.log, self._streaming_status)
            try:
                done = await reader.read(self.provider.stream(request))
            except ContextOverflowError as exc:
                overflow_tries += 1
                self.log.append(
                    "error", kind=exc.kind, message=str(exc), tokens=exc.tokens, maximum=exc.maximum
                )
                if overflow_tries > self.engine.config.emergency_retries:
                    emit(ErrorEvent(exc.kind, str(exc), "the context could not be cut enough; try /clear"))
                    return None
                emit(
                    Notice(
                        f"prompt too long ({exc.tokens:,} > {exc.maximum:,} tokens): dropping the oldest turns "
                        f"(try {overflow_tries}/{self.engine.config.emergency_retries})",
                        "warning",
                    )
                )
                truncated = self.engine.emergency(exc)
                self._record(truncated, emit, applied=True)
                continue
            except asyncio.CancelledError:
                self._keep_partial(reader.partial)
                raise
            except ProviderError as exc:
                self.log.append("error", kind=exc.kind, message=str(exc), status=exc.status)
                emit(ErrorEvent(exc.kind, str(exc), reader.cut_off_hint(exc)))
                self._keep_partial(reader.partial)
                return None
            self._accept(request, done, emit)
            if truncated is not None and done.usage.total_input:
                self._measured(truncated, done.usage, emit)
            return done

    def _measured(self, compaction: Compaction, usage: Usage, emit: Emit) -> None:
        """The server's figures for a T5: tokens before from its error, after from this response."""
        event = CompactionMeasured(compaction.tier, compaction.before, usage.total_input, compaction.after)
        self.log.append(
            "compaction_measured",
            tier=event.tier,
            before=event.before,
            after=event.after,
            estimated_after=event.estimated_after,
            source="server",
        )
        emit(event)

    def _accept(self, request, done: StreamDone, emit: Emit) -> None:
        message = Message("assistant", done.message.blocks, self.turn)
        appended = self.engine.append(message)
        self.log.assistant(appended.message, done.usage, self.model.name, done.stop_reason)
        for miss in appended.misses:  # a cleared item the model came back for (context/ghosts.py)
            self.log.append("miss", **miss.to_json())
        for warning in self.engine.observe(request, done.usage):
            emit(Notice(warning, "warning"))
            self.log.append("warning", message=warning)
        self.totals.usage = self.totals.usage + done.usage
        self.totals.cost_usd += self.model.cost(done.usage)
        self.totals.requests += 1
        self.requests_this_run += 1
        emit(AssistantMessage(appended.message, done.usage, done.stop_reason, done.id, done.model))
        emit(UsageUpdate(done.usage, self.totals.usage, self.totals.cost_usd, self.totals.cache_hit_rate()))
        emit(ContextUpdate(self.engine.status()))
        self._check()

    def _keep_partial(self, text: str) -> None:
        """A response cut short still happened: keep its words, marked, so the next turn is valid."""
        if not text.strip():
            return
        meta = BlockMeta(Trust.ASSISTANT, "assistant", time.time())
        message = Message(
            "assistant", (Block.text_block(f"{text.rstrip()}\n\n{PARTIAL_MARK}", meta),), self.turn
        )
        appended = self.engine.append(message)
        self.log.assistant(appended.message, Usage(), self.model.name, "interrupted")

    def _streaming_status(self, usage: Usage):
        status = self.engine.status()
        if usage.total_input:
            status = replace(status, used=max(status.used, usage.total_input + usage.output_tokens))
        return status

    # -- tools -------------------------------------------------------------------------------------
    async def first_change(self, emit: Emit) -> None:
        """Before this prompt's first tool call that may change the workspace (a sub-agent's too)."""
        if not self._changed_this_run:
            self._changed_this_run = True
            if self.before_change is not None:
                await self.before_change(emit)


def compacted_event(compaction: Compaction) -> Compacted:
    return Compacted(
        compaction.tier,
        compaction.trigger,
        compaction.before,
        compaction.after,
        compaction.summary,
        compaction.refs,
    )
