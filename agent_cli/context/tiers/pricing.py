"""T1's choice: which tool results and inputs of the view to clear, priced item by item.

Builds eviction.Candidates from the view (the tier context's predictor gives each call's probability
of being needed again), prices the cache rewrite a clear causes (`RewriteModel`), lets
eviction.plan choose, and says which calls stay whole (their digest lines stay too). `valued` is
the same judgement for T3 and digest: the calls worth more kept than cleared. Kept separate from
micro.py, which applies the choice.

The rewrite: the API reads the longest cached prefix it can reach. The entries that exist are the
ends of earlier requests (each request writes one at its end), the system prompt and the latest
summary; a request can reach an entry at most LOOKBACK blocks before one of its own breakpoints
(the previous request's end, its own end). A clear changes the view from its first changed message
on, so the next request reads up to the last reachable entry before that message and writes the
rest again: what it would have read (up to the previous request's end) costs 1.25× instead of
0.1×. A clear among the last few messages costs little; one further back reaches no entry but the
system prompt's, and rewrites every message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.cache import LOOKBACK, request_ends, stair_index
from agent_cli.context.eviction import REWRITE, Candidate, Market, Plan, forecast, gain, plan
from agent_cli.context.model import TierContext
from agent_cli.context.reuse import Reuse, predict
from agent_cli.context.tiers.coarsen import calls_in
from agent_cli.context.tiers.markers import CLEARED_PREFIX
from agent_cli.context.tiers.selection import (
    is_compacted_result,
    is_summary_block,
    result_tool_name,
    tool_uses_by_id,
)
from agent_cli.context.working_set import SUPERSEDED_KEYS, WorkingSet, replaced_lists
from agent_cli.core.types import Message

STALE = Reuse(0.0, "stale", 0)


def large_keys(tool_input: dict, limit: int) -> list[str]:
    """The input's values longer than `limit` characters (a list or an object by its JSON)."""
    return [k for k, v in tool_input.items() if len(input_text(v)) > limit and not is_placeholder(v)]


def is_placeholder(value: object) -> bool:
    """An input value T1 has already cleared (its placeholder)."""
    return isinstance(value, str) and value.startswith(CLEARED_PREFIX)


def input_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def requests_made(view: Sequence[Message]) -> int:
    """Requests the view shows were made: one per assistant message, plus one per call a folded
    digest line stands for."""
    return sum(1 + calls_in(m, uses=False) for m in view if m.role == "assistant")


class RewriteModel:
    """What clearing from view message `start` on costs in cache rewrites (see the module doc).
    `cached`: the messages that end a prefix the API holds (the engine's record of its requests'
    breakpoints); None: assume every earlier request's end does."""

    def __init__(
        self, view: Sequence[Message], tokens: Sequence[int], *, cold: bool, cached: Sequence[int] | None
    ) -> None:
        self.cold = cold
        self.tokens = list(tokens)
        ends = request_ends([m.role for m in view])
        self.previous_end = ends[-1] if ends else -1
        self.ends = sorted(set(ends if cached is None else cached))
        blocks = [max(1, len(m.blocks)) for m in view]
        self.after = [0] * (len(view) + 1)  # blocks after message i up to the previous end
        for i in range(self.previous_end - 1, -1, -1):
            self.after[i] = self.after[i + 1] + blocks[i + 1]
        summaries = [i for i, m in enumerate(view) if any(is_summary_block(b) for b in m.blocks)]
        self.summary = summaries[-1] if summaries else -1
        stair = stair_index(blocks, self.previous_end, ends) if self.summary < 0 else None
        self.stair = stair if stair is not None and stair in self.ends else -1  # marked again next time
        self.written = [0] * (len(self.tokens) + 1)  # tokens from message i up to the previous end
        for i in range(min(self.previous_end, len(self.tokens) - 1), -1, -1):
            self.written[i] = self.written[i + 1] + self.tokens[i]
        self._starts: dict[int, int] = {}  # first -> start (a plan asks about the same few often)

    def start(self, first: int) -> int:
        """The first message the next request must write again when `first` changes."""
        if first not in self._starts:
            reachable = [
                e for e in self.ends if e < first and (self.after[max(0, e)] < LOOKBACK or e == self.stair)
            ]
            if reachable:
                self._starts[first] = max(reachable) + 1
            else:
                self._starts[first] = self.summary + 1 if 0 <= self.summary < first else 0
        return self._starts[first]

    def __call__(self, first: int, freed: int) -> float:
        if self.cold or first > self.previous_end:
            return 0.0  # nothing cached to lose (or only what is written anyway)
        return REWRITE * max(0, self.written[self.start(first)] - freed)


@dataclass(frozen=True)
class Choice:
    results: frozenset[tuple[int, int]]  # (message, block) of tool_results to clear
    inputs: dict[tuple[int, int], tuple[str, ...]]  # (message, block) of tool_uses -> input keys to clear
    keep: frozenset[str]  # tool_use ids whose calls stay whole (not folded into digests)
    files: tuple[str, ...]  # files whose pictures stay: their digest lines are not coarsened
    plan: Plan
    market: Market
    candidates: tuple[Candidate, ...]
    rewrites: RewriteModel


def predicted(view: Sequence[Message], ctx: TierContext) -> dict[str, Reuse]:
    if ctx.predictor is not None:
        return ctx.predictor(view, ctx.reuse)
    return predict(view, ctx.reuse)


def market_for(view: Sequence[Message], ctx: TierContext, tokens: Sequence[int], cold: bool) -> Market:
    config = ctx.config
    requests = forecast(requests_made(view), config.forecast_ratio, config.forecast_cap)
    rewrite = RewriteModel(view, tokens, cold=cold, cached=ctx.cached)
    return Market(requests, ctx.used, config.miss_penalty_fraction * ctx.budget, rewrite)


def candidates_of(
    view: Sequence[Message], ctx: TierContext, guesses: dict[str, Reuse]
) -> tuple[list[Candidate], dict[str, tuple[int, int, tuple[str, ...], str]]]:
    """Every clearable item, and where it is: key -> (message, block, input keys or (), call id).
    What the model has not seen yet (the last message and the calls it answers) is never one, but
    for an applied edit's old text in those calls: the model wrote it, the file no longer holds it,
    and clearing it before any request has cached it rewrites nothing."""
    uses = tool_uses_by_id(view)
    limit = ctx.config.micro_keep_chars
    seen_upto = max(0, len(view) - 2)  # the last user message and the calls it answers are new
    replaced = replaced_lists(view)  # a todo list is kept whole while it is the plan, not once replaced
    applied = {b.tool_use_id for b in view[-1].tool_results() if not b.is_error} if view else set()
    out: list[Candidate] = []
    where: dict[str, tuple[int, int, tuple[str, ...], str]] = {}
    for i, message in enumerate(view[: seen_upto + 1]):
        fresh = i == seen_upto  # the calls the last message answers: only their applied old text
        for j, block in enumerate(message.blocks):
            if block.meta.pinned or (fresh and (block.type != "tool_use" or block.id not in applied)):
                continue
            if message.role == "user" and block.type == "tool_result":
                if block.meta.source == "compactor" or not (
                    ctx.tool_compactable(result_tool_name(block, uses)) or block.tool_use_id in replaced
                ):
                    continue
                if (len(block.text) <= limit and not block.data) or is_compacted_result(block):
                    continue  # (`data`: an image, cleared like any result)
                guess = guesses.get(block.tool_use_id, STALE)
                key = block.tool_use_id
                tokens = (
                    ctx.counter.message(Message("user", (block,)))
                    if block.data
                    else ctx.counter.text(block.text)
                )
                out.append(Candidate(key, i, tokens, guess.p, guess.age, guess.cls, guess.path, guess.decay))
                where[key] = (i, j, (), key)
            elif (
                message.role == "assistant"
                and block.type == "tool_use"
                and (ctx.tool_compactable(block.name) or block.id in replaced)
            ):
                keys = large_keys(block.input, limit)
                guess = guesses.get(block.id, STALE)
                old = tuple(k for k in keys if k in SUPERSEDED_KEYS)  # an applied edit's old text
                rest = () if fresh else tuple(k for k in keys if k not in SUPERSEDED_KEYS)
                for suffix, group, p in (("-old", old, 0.0), ("-in", rest, guess.p)):
                    if group:
                        tokens = sum(ctx.counter.text(input_text(block.input[k])) for k in group)
                        key = block.id + suffix
                        cls, decay = (guess.cls, guess.decay) if p else ("stale", 1.0)
                        out.append(Candidate(key, i, tokens, p, guess.age, cls, guess.path, decay))
                        where[key] = (i, j, group, block.id)
    return out, where


MAX_RECKONINGS = 4  # times the excess is reckoned again against the threshold a clear lowers


def choose(
    view: Sequence[Message],
    ctx: TierContext,
    *,
    cold: bool,
    capacity: float | None,
    keep: frozenset[str] = frozenset(),
    after: Callable[[int], float] | None = None,
) -> Choice:
    """What T1 clears. Over `capacity`: down to it, less room for one more message like the last
    (eviction.plan); `after(lost)` is the capacity once `lost` tokens of the calls in `keep` (those
    the threshold counts, `worth_keeping`) are cleared: clearing them lowers it, so the excess is
    reckoned against that."""
    guesses = predicted(view, ctx)
    tokens = [ctx.counter.message(m) for m in view]
    market = market_for(view, ctx, tokens, cold)
    candidates, where = candidates_of(view, ctx, guesses)
    excess = max(0, int(ctx.used - capacity)) if capacity is not None else 0
    room = ctx.counter.message(view[-1]) if excess and view else 0
    chosen = plan(candidates, market, excess=excess, target_excess=excess + room, room=ctx.forced_before)
    for _ in range(MAX_RECKONINGS if excess and keep and after is not None else 0):
        freed = sum(c.tokens for c in chosen.chosen)
        lost = sum(c.tokens for c in chosen.chosen if where[c.key][3] in keep)
        short = int(ctx.used - freed - after(lost))
        if short <= 0:
            break
        excess = freed + short  # more than this plan frees
        chosen = plan(candidates, market, excess=excess, target_excess=excess + room, room=ctx.forced_before)
    picked = {c.key for c in chosen.chosen}
    clear_results = frozenset(where[k][:2] for k in picked if not where[k][2])
    clear_inputs: dict[tuple[int, int], tuple[str, ...]] = {}
    for key in sorted(picked):
        i, j, group, _ = where[key]
        if group:
            clear_inputs[(i, j)] = clear_inputs.get((i, j), ()) + group
    keep = frozenset(where[c.key][3] for c in candidates if c.key not in picked)  # still worth their place
    files = tuple(
        dict.fromkeys(guesses[call].path for call in keep if call in guesses and guesses[call].path)
    )
    return Choice(
        clear_results,
        clear_inputs,
        keep,
        files,
        chosen,
        market,
        tuple(candidates),
        market.rewrite,  # type: ignore[arg-type]
    )


def valued(view: Sequence[Message], ctx: TierContext) -> WorkingSet:
    """The calls worth more kept than cleared (their clear would not pay even with no rewrite), for
    T3 and digest to leave whole; stale outputs may go anywhere."""
    guesses = predicted(view, ctx)
    tokens = [ctx.counter.message(m) for m in view]
    market = market_for(view, ctx, tokens, cold=True)
    candidates, where = candidates_of(view, ctx, guesses)
    keep = {
        where[c.key][3] for c in candidates if gain(c, market.requests, market.context, market.penalty) <= 0
    }
    keep |= {call for call, g in guesses.items() if g.path and g.p > 0 and call not in where}
    stale = frozenset(call for call, g in guesses.items() if g.cls == "stale")
    files = tuple(dict.fromkeys(guesses[c].path for c in keep if c in guesses and guesses[c].path))
    return WorkingSet(frozenset(keep) - stale, stale, files)


def worth_keeping(view: Sequence[Message], ctx: TierContext) -> frozenset[str]:
    """The calls whose tokens raise the auto threshold: those worth more kept than cleared now
    (`valued`), and those an earlier decision counted so (`ctx.kept_before`) while they are still whole
    in the view. A call keeps its place once counted: being used (a read then edited) lowers what it is
    worth, not the threshold, so no lossy tier becomes due and no clear is forced because the model
    used what it read; it leaves the count when it leaves the view (a clear that pays, or space)."""
    keep = valued(view, ctx).keep
    if not ctx.kept_before:
        return keep
    return keep | (ctx.kept_before & _whole_calls(view))


def _whole_calls(view: Sequence[Message]) -> set[str]:
    """Calls in the view that no tier has cut (no result cleared or compacted, no input cleared)."""
    present: set[str] = set()
    cut: set[str] = set()
    for message in view:
        for block in message.blocks:
            if block.type == "tool_result":
                (cut if is_compacted_result(block) else present).add(block.tool_use_id)
            elif block.type == "tool_use":
                cleared = any(is_placeholder(v) for v in block.input.values())
                (cut if cleared else present).add(block.id)
    return present - cut


def valued_tokens(view: Sequence[Message], ctx: TierContext, keep: frozenset[str] | None = None) -> int:
    """Tokens no lossy tier should take: the results and inputs worth keeping (`worth_keeping`, or
    `keep`), which it could only take by destroying value, and what the request holds beyond its
    messages (the system prompt, the tools), which no tier can take at all."""
    keep = worth_keeping(view, ctx) if keep is None else keep
    total = ctx.fixed
    for message in view:
        for block in message.blocks:
            if block.type == "tool_result" and block.tool_use_id in keep:
                total += ctx.counter.text(block.text)
            elif block.type == "tool_use" and block.id in keep:
                total += sum(ctx.counter.text(input_text(v)) for v in block.input.values())
    return total


def auto_threshold(fraction: float, budget: int, kept: int) -> float:
    """The auto-compaction threshold with `kept` tokens worth keeping: `fraction` of the room the
    rest may use, on top of them (all of the budget when everything is worth keeping)."""
    return fraction * budget + (1 - fraction) * min(kept, budget)
