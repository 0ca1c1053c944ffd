"""The context engine's facade: the one object the loop and replay talk to.

It owns the view (the messages that are sent), appends to it with ingest rules (injections merged,
user context on the first message, T0 offload), applies what the policy decides, assembles requests,
learns from usage (token calibration, cache health). Token accounting of the view is
context/accounting.py: one raw count per view message, so appending costs the new message and a
compaction only its spans. Requests are built, and their usage read back, in context/requests.py; an
injection's wrapping, paste-N refs and what an append returns are context/intake.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agent_cli.context.accounting import ViewAccounting
from agent_cli.context.assemble import Assembler
from agent_cli.context.cache import TTL_SECONDS, CacheMonitor
from agent_cli.context.ghosts import Ghosts
from agent_cli.context.hits import Hits
from agent_cli.context.intake import Appended, PasteNumbers, as_injection, source_injections, words_as_kept
from agent_cli.context.invariants import assert_valid
from agent_cli.context.ledger import Ledger
from agent_cli.context.model import (
    Compaction,
    ContextConfig,
    SpanReplacement,
    Summarizer,
    TierContext,
    apply_compaction,
    shift_index,
)
from agent_cli.context.offload import (
    clean_message,
    context_blocks,
    fits_in,
    merge_injections,
    merge_same_role,
    neutral_compaction,
    neutral_results,
    offload_results,
)
from agent_cli.context.prompts import load_prompt
from agent_cli.context.reattach import reattachments
from agent_cli.context.requests import Requests
from agent_cli.context.restore import bring_back
from agent_cli.context.reuse import Memo
from agent_cli.context.store import MemoryStore, OffloadStore
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.errors import ContextOverflowError, NothingToGain
from agent_cli.core.events import ContextStatus
from agent_cli.core.types import Block, Message, ModelInfo, Request, Usage

if TYPE_CHECKING:
    from agent_cli.context.intake import AttachmentSource
    from agent_cli.context.policy import Policy
    from agent_cli.context.reuse import Predictor

LEDGER_RENDER_CHARS = 24_000  # the ledger as the tiers see it (oldest messages shortened beyond this)


class ContextEngine:
    def __init__(
        self,
        *,
        config: ContextConfig,
        model: ModelInfo,
        system_prompt: str,
        tools: list[dict[str, Any]],
        user_context: str = "",
        store: OffloadStore | None = None,
        summarizer: Summarizer | None = None,
        policy: Policy | None = None,
        clock: Callable[[], float] = time.time,
        tool_compactable: Callable[[str], bool] = lambda n: True,
        counter: TokenCounter | None = None,
        environment: str = "",
        debug: bool = False,
        file_reader: Callable[[str], str | None] | None = None,
        on_compaction: Callable[[list[Message], Compaction], None] | None = None,
        predictor: Predictor | None = None,
        skills: str = "",
        name_files: Callable[[Message], Message] = lambda m: m,
    ) -> None:
        if config.cache_ttl == "1h" and config.cache_ttl_seconds < TTL_SECONDS["1h"]:
            config = replace(config, cache_ttl_seconds=TTL_SECONDS["1h"])
        self.config = config
        self.model = model
        self._server_ceiling: int | None = None  # the server's own limit, learnt from "prompt is too long"
        self.file_reader = file_reader  # path -> current text (None: gone/binary); for re-attachment
        self.on_compaction = on_compaction  # sees (view before, compaction) of each one applied (replay)
        self.predictor = Memo(predictor)  # context/reuse.py's predict unless given (replay's oracle)
        self.hits = Hits(config.hits_prior_weight)  # how often this session re-uses each class (hits.py)
        self.counter = counter or TokenCounter(model.name)
        self.assembler = Assembler(system_prompt, tools, user_context, counter=self.counter, skills=skills)
        self.user_context = user_context
        self.environment = environment
        self.store: OffloadStore = store if store is not None else MemoryStore()
        self.summarizer = summarizer
        self.policy = policy if policy is not None else _default_policy(config)
        self.clock = clock
        self.tool_compactable, self.debug = tool_compactable, debug
        self.name_files = name_files  # stamps each call's file as the workspace names it (BlockMeta.file)
        self.ledger = Ledger()
        self.memory_note, self.memory_covers = "", 0
        self.cache = CacheMonitor(
            ttl_seconds=config.cache_ttl_seconds, cache_min_tokens=model.cache_min_tokens
        )
        self._view: list[Message] = []
        self.tokens = ViewAccounting(self.counter, self.assembler.raw_base())
        self.requests = Requests(self.assembler, self.tokens, self.cache, config.cache_ttl, clock)
        self._pending: list[Block] = []
        self.sources: list[AttachmentSource] = []  # asked at each user message (intake.py)
        self._last_request_at: float | None = None
        self._pastes = PasteNumbers()
        self._usage, self._cost = Usage(), 0.0
        self._compactions = self._offloads = 0
        self.ghosts = Ghosts()  # what T1 cleared, and the misses when the model came back for it

    # -- the view ------------------------------------------------------------------------------------
    @property
    def messages(self) -> list[Message]:
        """The view (a copy: change it through append/apply only)."""
        return list(self._view)

    @property
    def pending(self) -> list[Block]:
        return list(self._pending)

    def append(self, message: Message, *, ingest: bool = True) -> Appended:
        """Add a message. With `ingest` (a live turn; not when replaying the log) a user message gets
        the pending injections, the first one the user context, then T0 offloads what is too large."""
        message = clean_message(message)
        if ingest:
            message = self.name_files(message)
        if not self._view and message.role != "user":
            raise ValueError("the first message of the conversation must be from the user")
        unseen = self._learn(message) if message.role == "assistant" else frozenset()
        if message.role == "user" and ingest:
            said = source_injections(self.sources, self._compactions, self.clock())
            pending, self._pending = self._pending + said, []
            context = [] if self._view else context_blocks(self.user_context, self.environment, self.clock())
            message = merge_injections(message, context, pending)
        raw, message = message, neutral_results(message)  # nothing from outside forges our tags
        found = self.ghosts.take_restores([b.tool_use_id for b in message.tool_results()])
        message = bring_back(message, found, self.store.get, self.config) if ingest else message
        if self._view and self._view[-1].role == message.role:
            index = len(self._view) - 1
            self.tokens.invalidate_from(index)
            self._set(index, merge_same_role(self._view[index], message))
        else:
            index = len(self._view)
            self._view.append(message)
            self.tokens.count(index, message)
        merged = index != len(self._view) - 1 or self._view[index] is not message
        compactions: list[Compaction] = []
        if message.role == "user" and ingest:
            before = self._used()
            _, offload = offload_results(
                self._view[index],
                self.config,
                self.store,
                index=index,
                paste_ref=self._next_paste_ref,
                raw={b.tool_use_id: b.text for b in raw.tool_results()},  # the store keeps these bytes
                fits=fits_in(self._budget()[0] // 2, self.counter.text),  # by tokens too: half the room
            )
            if offload is not None:
                self._apply(offload, store_originals=False)
                compactions.append(replace(offload, before=before, after=self._used()))
                self._offloads += 1
        logged = message if merged else words_as_kept(message, self._view[index])
        self._observe(logged)
        self._check()
        misses = self.ghosts.observe(message, self._used(), unseen)
        return Appended(message, compactions, logged, misses)

    def _observe(self, message: Message) -> None:
        for ref, text in self.ledger.observe(message).items():
            try:
                self.store.put(ref, text)
            except OSError as exc:  # the message is in the view and the log: report, do not fail
                self.ledger.record_error(f"could not keep {ref} for recall: {exc}")

    def _learn(self, message: Message) -> frozenset[str]:
        """What this response's calls used of the view (hits.py), before it joins the view; its
        edits made from memory."""
        guesses = self.predictor(self._view, self.ghosts.stats(self.hits.factors()))
        return self.hits.observe(self._view, message, guesses, lambda: self.ghosts.texts(self.store))

    def inject(self, block: Block) -> None:
        """A pending attachment, merged (wrapped in its tag) into the next user message."""
        self._pending.append(as_injection(block))

    def apply(self, compaction: Compaction) -> None:
        """Apply a compaction (from the policy, or from the log on resume); its originals are stored."""
        self._apply(compaction, store_originals=True)

    def clear(self) -> Compaction:
        """/clear: an empty view (the log and the store keep everything)."""
        compaction = Compaction("clear", "manual", (SpanReplacement(0, len(self._view), ()),))
        return self._apply(compaction, store_originals=True)

    # -- requests and usage ------------------------------------------------------------------------------
    def build_request(self, *, max_tokens: int | None = None) -> Request:
        self._check(sending=True)
        _, reserved = self._budget()
        request = self.requests.turn(self._view, self.model, max_tokens or reserved)
        self._last_request_at = request.metadata["sent_at"]
        return request

    def prefix_request(self, instruction: str, *, max_tokens: int) -> Request:
        """The session-memory update's request (requests.py `prefix`); the engine's state is not changed."""
        self._check(sending=True)
        return self.requests.prefix(self._view, self.model, instruction, max_tokens, self.clock())

    def observe(self, request: Request, usage: Usage) -> list[str]:
        """Learn from a response's usage: calibration, `used`, cache health. Returns warnings."""
        self._usage = self._usage + usage
        self._cost += self.model.cost(usage)
        warning = self.requests.read_usage(request, usage, self.model, self._view)
        return [warning] if warning else []

    def prefix_probe(self) -> Request:
        """Before the first message: a request of the system prompt and tools (one stand-in message)
        for the provider to count, so the gauge uses the provider's count from the start."""
        return self.requests.probe(self.model, Message("user", (Block.text_block("."),), 0))

    def prefix_counted(self, counted: int) -> None:
        """The provider counted `prefix_probe`: the gauge counts from that (what will be billed), not
        from our own estimate, and the estimate learns its factor from it."""
        if counted > 0 and not self._view:
            self.tokens.resume(counted, 0)

    def resume_usage(self, billed: int) -> None:
        """A resumed view whose last request (all but its final answer) was billed `billed` input
        tokens: learn the factor from it and count from it, as `observe` would have."""
        if billed <= 0 or not self._view or self._view[-1].role != "assistant":
            return
        self.tokens.resume(billed, len(self._view) - 1)

    def status(self) -> ContextStatus:
        budget, reserved = self._budget()
        return ContextStatus(
            used=self._used(),
            budget=budget,
            window=self.model.context_window,
            reserved=reserved,
            warn_fraction=self.config.warn_fraction,
            auto_fraction=self.config.auto_fraction,
            auto_compact=self.config.auto_compact and not getattr(self.policy, "halted_reason", ""),
            auto_at=getattr(self.policy, "threshold", 0) / budget,
        )

    def estimate(self) -> int:
        """The whole next request by our own count (no billed usage in it)."""
        return self.tokens.estimate()

    # -- compaction ------------------------------------------------------------------------------------
    async def maybe_compact(self, *, trigger: str = "auto") -> list[Compaction]:
        """Ask the policy; apply what it returns, in order. Nothing changes if this is cancelled."""
        proposed = await self._require_policy().decide(self.messages, self.tier_context(), trigger)
        return [self._apply(c, store_originals=True) for c in proposed or []]

    async def compact(self, focus: str = "") -> Compaction | None:
        """/compact [focus]: the policy's manual compaction (T4, or T5's static summary as a fallback)."""
        compaction = await self._require_policy().manual(self.messages, self.tier_context(focus=focus))
        if compaction is None:
            return None
        before, growth = self._used(), self.tokens.predicted_growth(compaction.replacements)
        if growth >= 0:  # a summary no shorter than what it replaces: keep the context as it is
            raise NothingToGain(before, before + growth)
        return self._apply(compaction, store_originals=True)

    def emergency(self, error: ContextOverflowError) -> Compaction:
        """The API said the prompt is too long: T5 via the policy, applied."""
        budget, reserved = self._budget()
        tokens = error.tokens or max(self._used(), self.estimate())
        maximum = error.maximum or min(self.model.context_window, budget + reserved)
        if error.maximum:
            self._server_ceiling = min(error.maximum, self._server_ceiling or error.maximum)
        compaction = self._require_policy().emergency(self.messages, self.tier_context(), tokens, maximum)
        applied = self._apply(compaction, store_originals=True)
        # "before" is the server's own count when it gave one; "after" is an estimate until the next
        # response reports the real figure (the loop logs that as a `compaction_measured` event)
        return replace(applied, before=error.tokens) if error.tokens else applied

    def tier_context(self, *, focus: str = "") -> TierContext:
        budget, _ = self._budget()
        return TierContext(
            config=self.config,
            counter=self.counter,
            used=self._used(),
            budget=budget,
            fixed=self.counter.scale(self.tokens.raw_base),
            now=self.clock(),
            last_request_at=self._last_request_at,
            summarizer=self.summarizer,
            memory_note=self.memory_note,
            memory_covers=self.memory_covers,
            ledger_text=self.ledger.render(LEDGER_RENDER_CHARS),
            focus=focus,
            tool_compactable=self.tool_compactable,
            prompts=load_prompt,
            reattach=self.reattachments,
            reuse=self.ghosts.stats(self.hits.factors()),
            cached=self.requests.cached_ends(self.clock(), self.config.cache_ttl_seconds),
            predictor=self.predictor,
        )

    def reattachments(self) -> list[Block]:
        """What T2/T4 put back as pinned attachments (context/reattach.py)."""
        now = self.clock()
        return reattachments(self.ledger, self.config, self.counter, self.file_reader, now, self.sources)

    def breakdown(self) -> dict[str, int]:
        """Tokens by category; with free and reserved they sum to the usable window (budget + reserved)."""
        budget, reserved = self._budget()
        tools = self.counter.raw_tools(self.assembler.tools)
        return self.tokens.breakdown(self._view, tools, budget, reserved, self.assembler.raw_skills())

    def metrics(self) -> dict[str, float | int]:
        return {
            "cache_hit_rate": self.cache.hit_rate,
            "compactions": self._compactions,
            "offloads": self._offloads,
            "requests": self.cache.requests,
            "tokens_in": self._usage.total_input,
            "tokens_out": self._usage.output_tokens,
            "cache_read": self._usage.cache_read_input_tokens,
            "cache_write": self._usage.cache_creation_input_tokens,
            "cost": self._cost,
            "calibration": self.counter.factor,
        }

    def set_model(self, model: ModelInfo) -> None:
        """Another model: other tokenizer (factor), other window, a cold cache."""
        self.model = model
        self.counter.set_model(model.name)
        self.cache.cache_min_tokens = model.cache_min_tokens
        self.cache.reset()
        self.requests.changed_from(0)
        self.tokens.prefix_changed()

    def set_tools(self, tools: list[dict[str, Any]]) -> None:
        """Another tool list (an MCP server connected, a deferred schema was loaded): the next
        request's prefix differs, so the last billed count no longer describes it."""
        self.assembler.set_tools(tools)
        self.tokens.prefix_changed(self.assembler.raw_base())

    # -- internals -------------------------------------------------------------------------------------
    def _apply(self, compaction: Compaction, *, store_originals: bool) -> Compaction:
        before = self._used()
        compaction = neutral_compaction(compaction)  # a log written before results were escaped
        view = apply_compaction(self._view, compaction)  # validates the spans first
        if self.on_compaction is not None:
            self.on_compaction(list(self._view), compaction)
        self.ghosts.cleared(self._view, compaction, self.counter.text, self.config.micro_keep_chars)
        if store_originals:
            for ref, text in compaction.originals.items():
                self.store.put(ref, text)
        spans = sorted(compaction.replacements, key=lambda s: s.start)
        self.memory_covers = min(shift_index(compaction, self.memory_covers), len(view))  # follows the view
        self.tokens.replace(spans)
        self._view = view
        if spans:
            self.requests.changed_from(spans[0].start, view)
        self._pastes.saw(compaction.refs)
        if compaction.tier == "clear":
            self.ledger = Ledger()
            self.memory_note, self.memory_covers = "", 0
            getattr(self.policy, "reset", lambda: None)()
        if compaction.tier != "T0":
            self._compactions += 1
        self._check()
        return replace(compaction, before=before, after=self._used())

    def _set(self, index: int, message: Message) -> None:
        self.tokens.count(index, message)
        self._view[index] = message

    def _used(self) -> int:
        return self.tokens.used()

    def _next_paste_ref(self) -> str:
        return self._pastes.next(self.store.refs())

    def _budget(self) -> tuple[int, int]:
        budget, reserved = self.config.budget(self.model.context_window, self.model.max_output_tokens)
        if self._server_ceiling:  # the server told us its limit ("prompt is too long"): plan below it
            budget = max(1, min(budget, int(self._server_ceiling * SERVER_CEILING_SHARE)))
        return budget, reserved

    def _require_policy(self) -> Policy:
        if self.policy is None:
            raise RuntimeError("no compaction policy: agent_cli.context.policy could not be imported")
        return self.policy

    def _check(self, *, sending: bool = False) -> None:
        if sending and not self._view:
            raise ValueError("there is nothing to send: the conversation is empty")
        if self.debug:
            assert_valid(self._view)


SERVER_CEILING_SHARE = 0.9  # our estimate and the server's count differ: keep a margin below its limit


def _default_policy(config: ContextConfig) -> Policy | None:
    try:
        from agent_cli.context.policy import make_policy
    except ImportError:
        return None
    return make_policy(config.policy)
