"""Every clear a priced bet: cost-aware eviction for T1 (GreedyDual-Size's shape, priced in cache tokens).

Keeping an item of `s` tokens costs its holding: every later request reads it from the cache,
`0.1 × s` each. Clearing it saves that and risks a miss: with probability `p` (context/reuse.py) the
model needs it again, and getting it back costs a request that reads the context from the cache
(`0.1 × C`), the item written again (`1.25 × s`) and `penalty` — what acting without the text costs
beyond its tokens (an edit tried from memory, a wrong guess; chosen by leave-one-out over the shared
sessions, bench/RESULTS.md). An item needed again at some later request would only have been held
until then, so a needed item's saving counts its expected wait (about its age again: Lindy), not the
whole forecast:

    gain = 0.1 × s × ((1 - p) × R + p × min(age + 1, R)) - p × (0.1 × C + 1.25 × s + penalty)

`R` is the forecast of the requests still to come (`forecast`: a share of those the session has made,
clamped). A clear also rewrites the prompt cache: the next request cannot read what follows the
changed message, and writes it again at 1.25× instead of reading it at 0.1× (`rewrite(start,
freed)`, priced by the caller from where the cache can still be read — tiers/pricing.py). So the plan
tries each start: every item after it with a positive gain, less the rewrite it causes, and takes the
best start, or nothing when no start pays. When the view, less what the plan clears, is still above
`capacity`, more items go in ascending value per token (`p × miss cost / s`, GreedyDual-Size's
priority) down to `target`: space, not price, then decides (the next tier would be lossy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

CACHE_READ = 0.1
CACHE_WRITE = 1.25
REWRITE = CACHE_WRITE - CACHE_READ  # a token written again instead of read
MIN_FORECAST = 3


@dataclass(frozen=True)
class Candidate:
    """One clearable item: a tool result or the large strings of a tool call's input."""

    key: str  # tool_use id (+ "-in"/"-old" for an input)
    message: int  # view index of the message holding it
    tokens: int  # what clearing it frees
    p: float  # probability it is needed again
    age: int  # calls since it (or its file) was last touched
    cls: str = ""
    path: str = ""  # the file it shows ("" for other output)
    decay: float = 1.0  # what is left of `p` one call later (1.0: the need may come any time)


@dataclass(frozen=True)
class Bet:
    """The arithmetic of one T1 decision, logged with it (the T1 event shows the forecast)."""

    forecast: int  # requests still expected
    saving: float  # weighted tokens the clears save over the forecast
    risk: float  # expected cost of the misses they cause
    rewrite: float  # weighted cost of rewriting the cache
    cleared: int  # items cleared
    kept: int  # clearable items kept because they are worth more than they cost
    forced: bool = False  # space required more than paid (the view was above the next tier's threshold)
    expected: tuple[tuple[str, float], ...] = ()  # (group, misses expected within SOON calls of the clear)

    @property
    def net(self) -> float:
        return self.saving - self.risk - self.rewrite

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "forecast": self.forecast,
            "saving": round(self.saving),
            "risk": round(self.risk),
            "rewrite": round(self.rewrite),
            "cleared": self.cleared,
            "kept": self.kept,
        }
        if self.forced:
            out["forced"] = True
        if self.expected:
            out["expected_misses"] = {group: round(value, 4) for group, value in self.expected}
        return out

    @classmethod
    def from_json(cls, data: dict) -> Bet:
        return cls(
            int(data.get("forecast", 0)),
            float(data.get("saving", 0)),
            float(data.get("risk", 0)),
            float(data.get("rewrite", 0)),
            int(data.get("cleared", 0)),
            int(data.get("kept", 0)),
            bool(data.get("forced", False)),
            tuple((str(g), float(v)) for g, v in (data.get("expected_misses") or {}).items()),
        )


def forecast(made: int, ratio: float, cap: int) -> int:
    """Requests still to come: `ratio` × those made so far (a session that has run N requests is
    about as likely to run on for a like share of N as to stop: Lindy), at least MIN_FORECAST, at
    most `cap` (0: no cap)."""
    out = max(MIN_FORECAST, round(made * ratio))
    return min(out, cap) if cap > 0 else out


def miss_cost(c: Candidate, context: int, penalty: float) -> float:
    return CACHE_READ * context + CACHE_WRITE * c.tokens + penalty


def needed_within(c: Candidate, horizon: int) -> float:
    """The chance the need comes within the next `horizon` calls (a flat `p` falls inside)."""
    if c.decay >= 1.0:
        return c.p
    return c.p * (1 - c.decay**horizon)


def held_without(c: Candidate, horizon: int) -> float:
    """Requests the item is expected not to be carried if cleared now: until its need comes (it is
    read again then, and carried on), or the whole horizon when it does not come. That is
    `E[min(t, H)]` with `P(t > k) = 1 - (p(age) - p(age + k))`; a flat `p` comes uniformly."""
    if c.decay >= 1.0:
        return horizon * (1 - c.p) + c.p * horizon / 2
    still = c.p * (1 - c.decay**horizon) / (1 - c.decay)  # the sum of p(age + k) for k < H
    return horizon * (1 - c.p) + still


def holding(c: Candidate, requests: int) -> float:
    """Expected weighted tokens saved by not carrying `c` over the forecast."""
    return CACHE_READ * c.tokens * held_without(c, requests)


def risk(c: Candidate, context: int, penalty: float, requests: int | None = None) -> float:
    """Expected cost of the miss a clear causes (within `requests`, or ever)."""
    chance = c.p if requests is None else needed_within(c, requests)
    return chance * miss_cost(c, context, penalty)


SOON = 10  # calls an item stays cheap to clear after this request (the stair window: pricing.py)


def gain(c: Candidate, requests: int, context: int, penalty: float) -> float:
    """Clearing now against carrying it over the forecast; never positive while the chance of a
    need within the next SOON calls, times a miss, outweighs carrying it that long (it can still
    be cleared cheaply then)."""
    value = holding(c, requests) - risk(c, context, penalty, requests)
    soon = min(SOON, requests)
    if c.p > 0 and needed_within(c, soon) * miss_cost(c, context, penalty) > CACHE_READ * c.tokens * soon:
        return min(value, 0.0)
    return value


Rewrite = Callable[[int, int], float]
"""rewrite(first changed message, tokens freed) -> weighted cost of the cache rewrite it causes."""


@dataclass(frozen=True)
class Plan:
    chosen: tuple[Candidate, ...]
    bet: Bet


@dataclass(frozen=True)
class Market:
    """What every bet of one decision is priced with."""

    requests: int  # the forecast
    context: int  # tokens in use (what a miss's extra request reads)
    penalty: float
    rewrite: Rewrite


def plan(
    candidates: Sequence[Candidate],
    market: Market,
    *,
    excess: int = 0,
    target_excess: int = 0,
    room: bool = False,
) -> Plan:
    """Which candidates to clear (see the module doc). `excess`: tokens above capacity; when > 0,
    items go until it is freed whatever they cost, and on to `target_excess` (room for one more
    message) only where that pays as a bet (`_room`), or regardless when `room` (the view grew past
    capacity again right after a forced clear)."""
    gains = {c.key: gain(c, market.requests, market.context, market.penalty) for c in candidates}
    worth = sorted((c for c in candidates if gains[c.key] > 0), key=lambda c: c.message)
    best: list[Candidate] = []
    best_net = 0.0
    for index, c in enumerate(worth):
        if index and worth[index - 1].message == c.message:
            continue
        group = worth[index:]
        net = sum(gains[x.key] for x in group) - market.rewrite(c.message, sum(x.tokens for x in group))
        if net > best_net:
            best, best_net = group, net
    chosen = list(best)
    forced = False
    if excess > 0 and sum(c.tokens for c in chosen) < excess:
        forced = True
        if room:
            chosen += _make_room(candidates, chosen, max(excess, target_excess), market)
        else:
            chosen += _make_room(candidates, chosen, excess, market)
            chosen += _room(candidates, chosen, target_excess, market)
    return Plan(tuple(chosen), bet_of(chosen, candidates, market, forced=forced))


def _room(
    candidates: Sequence[Candidate], chosen: Sequence[Candidate], need: int, market: Market
) -> list[Candidate]:
    """Room beyond the excess, for a next message like the last: from the rewrite the excess already
    pays on (the room is a guess: it buys no rewrite of its own), an item goes only when its clear
    now risks less than clearing it when that message comes would rewrite (as likely as not to
    come: a miss is for good)."""
    if need <= sum(c.tokens for c in chosen) or not chosen:
        return []
    start = min(c.message for c in chosen)
    more = _make_room([c for c in candidates if c.message >= start], chosen, need, market)
    return [
        c
        for c in more
        if risk(c, market.context, market.penalty) - holding(c, market.requests)
        < market.rewrite(c.message, c.tokens)
    ]


def _make_room(
    candidates: Sequence[Candidate], chosen: Sequence[Candidate], need: int, market: Market
) -> list[Candidate]:
    """More items to clear until `need` tokens are freed in all, at the least cost: for each place
    the rewrite could start, the items after it in ascending value per token (GreedyDual-Size's
    priority) until enough is freed, then every other item whose clear pays once that rewrite is
    paid (a priced gain, plus what it is spared of the rewrite; one before the start only if that
    pays for moving the start); the start whose rewrite plus risks less savings is smallest wins
    (when no start frees enough, everything by value per token)."""
    taken = {c.key for c in chosen}
    need -= sum(c.tokens for c in chosen)
    start = min((c.message for c in chosen), default=None)

    def density(c: Candidate) -> tuple[float, int]:  # a forced clear is for good: any later need counts
        return (risk(c, market.context, market.penalty) / max(1, c.tokens), -c.tokens)

    free = sorted((c for c in candidates if c.key not in taken), key=density)
    gains = {c.key: gain(c, market.requests, market.context, market.penalty) for c in free}
    net_risk = {c.key: risk(c, market.context, market.penalty) - holding(c, market.requests) for c in free}
    best: tuple[float, list[Candidate]] | None = None
    for first in sorted({c.message for c in free}):
        pool, left = [], need
        for c in free:
            if c.message >= first and left > 0:
                pool.append(c)
                left -= c.tokens
        if left > 0:
            continue
        origin = first if start is None else min(first, start)
        freed = sum(c.tokens for c in [*chosen, *pool])
        pooled = {c.key for c in pool}
        paid = market.rewrite(origin, freed)
        for c in free:  # once that rewrite is paid, what else pays its way as a priced clear
            # does, plus what it changes in the rewrite (less to write again; an earlier start)
            if c.key in pooled or gains[c.key] + paid <= 0:  # (it cannot spare more than all of it)
                continue
            after = market.rewrite(min(origin, c.message), freed + c.tokens)
            if gains[c.key] + paid - after > 0:
                pool.append(c)
                freed += c.tokens
                origin = min(origin, c.message)
                paid = after
        cost = paid + sum(net_risk[c.key] for c in pool)
        if best is None or cost < best[0]:
            best = (cost, pool)
    if best is not None:
        return best[1]
    out, left = [], need
    for c in free:
        if left <= 0:
            break
        out.append(c)
        left -= c.tokens
    return out


def bet_of(
    chosen: Sequence[Candidate],
    candidates: Sequence[Candidate],
    market: Market,
    *,
    freed: int | None = None,
    start: int | None = None,
    forced: bool = False,
) -> Bet:
    """The bet of clearing `chosen`, freeing `freed` tokens in all (folding may free more) from view
    message `start` on (the first message the step changes)."""
    items = sum(c.tokens for c in chosen)
    freed = items if freed is None else freed
    if start is None:
        start = min((c.message for c in chosen), default=-1)
    extra = max(0, freed - items)  # folded away beyond the items themselves: no risk
    expected: dict[str, float] = {}
    for c in chosen:
        group = "file" if c.path else "output"
        expected[group] = expected.get(group, 0.0) + needed_within(c, min(SOON, market.requests))
    return Bet(
        forecast=market.requests,
        saving=sum(holding(c, market.requests) for c in chosen) + CACHE_READ * extra * market.requests,
        risk=sum(risk(c, market.context, market.penalty, market.requests) for c in chosen),
        rewrite=market.rewrite(start, freed) if start >= 0 else 0.0,
        cleared=len(chosen),
        kept=len(candidates) - len(chosen),
        forced=forced,
        expected=tuple(sorted(expected.items())),
    )
