"""The engine's requests: built from the view, stamped with the figures their usage is read back against
(calibration, the billed count of the view, cache health); and the side request on the cached prefix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from agent_cli.context.accounting import ViewAccounting
from agent_cli.context.assemble import Assembler
from agent_cli.context.cache import CacheMonitor, PrefixKey
from agent_cli.context.offload import merge_same_role
from agent_cli.context.tokens import thinking_signature
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Request, Trust, Usage


@dataclass(frozen=True)
class _Bill:
    """The last request billed, to tell whether the next one only added to it (tokens.py: growth)."""

    model: str
    epoch: object  # ViewAccounting.epoch when it was built
    length: int  # view messages it held
    raw: int  # our raw count of it
    billed: int

    def grown_into(self, model: str, epoch: object, length: object) -> tuple[int, int] | None:
        """(raw, billed) of this bill when a request of `model` built at (`epoch`, `length`) holds
        its messages unchanged and more (else None)."""
        same = (model, epoch) == (self.model, self.epoch)
        return (self.raw, self.billed) if same and isinstance(length, int) and length > self.length else None


class Requests:
    """Requests for the engine's view (counted by `tokens`), and what their responses' usage teaches."""

    def __init__(
        self,
        assembler: Assembler,
        tokens: ViewAccounting,
        cache: CacheMonitor,
        ttl: str,
        clock: Callable[[], float],
    ) -> None:
        self.assembler = assembler
        self.tokens = tokens
        self.cache = cache
        self.ttl = ttl
        self.clock = clock
        self.cached: dict[int, float] = {}  # view message index -> when a prefix ending there was cached
        self.binding = False  # the provider guards the model's thinking (it notes Request.UNSENT)
        self.billed: _Bill | None = None

    def turn(self, view: list[Message], model: ModelInfo, max_tokens: int) -> Request:
        """The next request; its metadata holds what `read_usage` reads the response against."""
        counts = self.tokens.scaled()
        previous = previous_request_end(view)
        request = self._assemble(view, model, counts, max_tokens, previous)
        now = self.clock()
        stable = self.tokens.stable(counts, previous)
        request.metadata.update(
            view_length=len(view),
            raw_estimate=self.tokens.raw_base + self.tokens.raw_total,
            epoch=self.tokens.epoch,
            sent_at=now,
            stable_tokens=stable if request.metadata.get("breakpoints") else 0,
        )
        self.tokens.built_length = len(view)
        for point in request.metadata.get("breakpoints", ()):
            reason, _, where = str(point).partition("@")
            message = int(where.split(".")[0])
            if message >= 0 and (reason != "stair" or message in self.cached):
                self.cached[message] = now  # a stair only refreshes an entry an earlier request wrote
        return request

    def changed_from(self, index: int, view: Sequence[Message] = ()) -> None:
        """The view changed from message `index` on: prefixes ending there or later are no longer
        what the next request sends (its cached entries cannot be read). On a model that binds its
        thinking, the thinking of the later messages will not be sent again either."""
        self.cached = {m: t for m, t in self.cached.items() if m < index}
        if self.binding:
            later = {b.signature for m in view[index + 1 :] for b in m.blocks if b.type == "thinking"}
            self._not_counted(later - {""}, view)

    def cached_ends(self, now: float, ttl: float) -> tuple[int, ...]:
        """Message indices where the API still holds a prefix of this view (within the cache TTL)."""
        return tuple(sorted(m for m, t in self.cached.items() if now - t <= ttl))

    def side(self, view: list[Message], model: ModelInfo, ask: Message, max_tokens: int) -> Request:
        """`view` exactly as the next request would send it (its cached prefix is read), `ask` last."""
        counter = self.tokens.counter
        previous = previous_request_end(view)
        view = list(view)
        counts = self.tokens.scaled()
        if view[-1].role == "user":
            view[-1] = merge_same_role(view[-1], ask)
            counts[-1] = counter.scale(counter.raw_message(view[-1]))
        else:
            view.append(ask)
            counts.append(counter.scale(counter.raw_message(ask)))
        return self._assemble(view, model, counts, max_tokens, previous)

    def prefix(
        self, view: list[Message], model: ModelInfo, instruction: str, max_tokens: int, now: float
    ) -> Request:
        """A side request that reuses the conversation's cached prefix (the session-memory update):
        `view` as the next request would send it, `instruction` as a last user text, the tools kept
        (they are part of the prefix) but not to be called."""
        meta = BlockMeta(Trust.SYSTEM, "memory", now, tag="session-memory-request")
        ask = Message("user", (Block.text_block(instruction, meta),), view[-1].turn)
        request = self.side(view, model, ask, max_tokens)
        request.metadata.update(purpose="memory", sent_at=now)
        return replace(request, tool_choice={"type": "none"})

    def of(self, view: list[Message], model: ModelInfo, max_tokens: int) -> Request:
        """A request for a view that is not the engine's, assembled like the engine's own (replay's
        `--policy recorded` sends a recorded agent's own contexts through it); the engine learns
        nothing from it."""
        counter = self.tokens.counter
        counts = [counter.scale(counter.raw_message(m)) for m in view]
        return self._assemble(list(view), model, counts, max_tokens, previous_request_end(view))

    def probe(self, model: ModelInfo, stand_in: Message) -> Request:
        """System and tools with `stand_in` as the only message: for a provider to count the prefix."""
        counter = self.tokens.counter
        return self._assemble([stand_in], model, [counter.scale(counter.raw_message(stand_in))], 1, None)

    def read_usage(
        self, request: Request, usage: Usage, model: ModelInfo, view: Sequence[Message]
    ) -> str | None:
        """Learn from a response's usage: calibration, the billed count of the view, cache health (a
        warning, or None)."""
        meta = request.metadata
        billed = usage.total_input
        counter = self.tokens.counter
        # thinking the provider left out of the wire (no longer bound to its prefix:
        # llm/thinking_binding.py) is never sent again: from now on it counts as nothing
        unsent = [b for b in meta.get(Request.UNSENT, ()) if thinking_signature(b) not in counter.unsent]
        if billed > 0 and request.model == model.name:
            raw = int(meta.get("raw_estimate") or counter.raw_request(request))
            raw -= sum(counter.raw_api_block(b) for b in unsent)  # counted when built, not billed
            epoch, length = meta.get("epoch"), meta.get("view_length")
            since = self.billed.grown_into(model.name, epoch, length) if self.billed else None
            counter.calibrate(raw, billed, since)
            self.billed = _Bill(model.name, epoch, length if isinstance(length, int) else 0, raw, billed)
            self.tokens.observe(billed, meta.get("epoch"), meta.get("view_length"), len(view))
        self.binding = Request.UNSENT in meta  # the provider guards this model's thinking (or not)
        if unsent:
            self._not_counted({thinking_signature(b) for b in unsent} - {""}, view, billed=False)
        return self.cache.observe(
            PrefixKey.of(request.system, request.tools),
            usage,
            at=float(meta.get("sent_at", self.clock())),
            stable_tokens=int(meta.get("stable_tokens", 0)),
        )

    def _not_counted(self, signatures: set[str], view: Sequence[Message], *, billed: bool = True) -> None:
        """Thinking blocks (by signature) that will not be sent again: counted as nothing, in the view
        too (`billed=False`: the last bill already went without them)."""
        signatures -= self.tokens.counter.unsent
        if not signatures:
            return
        self.tokens.counter.unsent |= signatures
        for index, message in enumerate(view):
            if any(b.type == "thinking" and b.signature in signatures for b in message.blocks):
                self.tokens.count(index, message, billed=billed)

    def _assemble(
        self, view: list[Message], model: ModelInfo, counts: list[int], max_tokens: int, previous: int | None
    ) -> Request:
        return self.assembler.build(
            view,
            model=model.name,
            max_tokens=max_tokens,
            ttl=self.ttl,
            previous_last_index=previous,
            cache_min_tokens=model.cache_min_tokens,
            message_tokens=counts,
        )


def previous_request_end(view: list[Message]) -> int | None:
    """Where the previous request ended: the message before the latest assistant message. Derived
    from the view, not from history, so a resumed session anchors the very same block."""
    for index in range(len(view) - 1, 0, -1):
        if view[index].role == "assistant":
            return index - 1
    return None
