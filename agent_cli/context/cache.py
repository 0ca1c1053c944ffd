"""Prompt-cache anchors and cache health.

`choose_breakpoints` picks at most four `cache_control` positions by expected value (tokens covered x
chance the next request reuses them). `CacheMonitor` watches the usage of each response: hit rate,
counts, and cache thrash (three misses in a row where a stable prefix was expected), naming the cause.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agent_cli.core.types import Usage

MAX_BREAKPOINTS = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
THRASH_STREAK = 3

# chance that the next request reads a prefix ending here (the expected-value weights)
REUSE_SYSTEM = 0.95  # tools + system: every request of the session shares it
REUSE_SUMMARY = 0.9  # stable until the next compaction
REUSE_PREVIOUS = 0.9  # written by the previous request: read by this one
REUSE_LAST = 0.8  # read by the next request if the person goes on within the TTL
REUSE_STAIR = 0.5  # read only when a clear changes the view after it (see `stair_index`)
LOOKBACK = 20  # block boundaries the API checks before each breakpoint for a cached prefix


@dataclass(frozen=True)
class Candidate:
    """A possible breakpoint: `message` -1 is the system prompt, `block` the block index in it."""

    message: int
    block: int
    covers: int  # tokens of the prefix ending with this block
    reuse: float
    reason: Literal["system", "summary", "stair", "previous", "last"]

    @property
    def value(self) -> float:
        return self.covers * self.reuse

    @property
    def position(self) -> tuple[int, int]:
        return (self.message, self.block)


def choose_breakpoints(
    candidates: Iterable[Candidate], *, cache_min_tokens: int, limit: int = MAX_BREAKPOINTS
) -> list[Candidate]:
    """The best candidates by expected value, at most `limit`, deduplicated, in request order.

    Prefixes shorter than the model's cache minimum are never cached, so they are skipped.
    """
    best: dict[tuple[int, int], Candidate] = {}
    for candidate in candidates:
        if candidate.covers < cache_min_tokens or candidate.block < 0:
            continue
        known = best.get(candidate.position)
        if known is None or candidate.value > known.value:
            best[candidate.position] = candidate
    ranked = sorted(best.values(), key=lambda c: (-c.value, c.position))[
        : max(0, min(limit, MAX_BREAKPOINTS))
    ]
    return sorted(ranked, key=lambda c: c.position)


def stair_index(block_counts: Sequence[int], previous: int | None, ends: Sequence[int]) -> int | None:
    """The message that ends the "stair" prefix: the end of an earlier request (`ends`: its entry
    was written then) LOOKBACK to 2 × LOOKBACK blocks before the previous request's end, on a grid
    of LOOKBACK blocks so that consecutive requests mark the same message, which keeps its entry
    alive, until the grid moves on. A clear of anything after it then rewrites only what follows it,
    not the whole conversation (tiers/pricing.py prices that). Marking it costs nothing: it lies
    inside the prefix the request reads. None when there is no such request end."""
    if previous is None or not 1 <= previous < len(block_counts):
        return None
    running, cumulative = 0, []
    for count in block_counts[: previous + 1]:
        running += count
        cumulative.append(running)
    grid = (cumulative[previous] - LOOKBACK) // LOOKBACK * LOOKBACK
    found = [e for e in ends if 0 <= e < previous and cumulative[e] <= grid]
    return max(found) if grid > 0 and found else None


def request_ends(roles: Sequence[str]) -> list[int]:
    """Messages that ended a request: each one right before an assistant message."""
    return [i for i in range(len(roles) - 1) if roles[i] == "user" and roles[i + 1] == "assistant"]


def cache_control(ttl: str) -> dict[str, str]:
    if ttl == "1h":
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def can_anchor(block: dict[str, Any]) -> bool:
    """The API refuses cache_control on thinking blocks; an empty block is not worth one."""
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return False
    if kind == "text":
        return bool(str(block.get("text", "")).strip())
    return True


# -- monitoring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrefixKey:
    """What the stable prefix is made of: digests of the system prompt and of the tool list."""

    system: str
    tools: str

    @classmethod
    def of(cls, system: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> PrefixKey:
        strip = [{k: v for k, v in b.items() if k != "cache_control"} for b in system]
        return cls(
            _digest(strip), _digest([{k: v for k, v in t.items() if k != "cache_control"} for t in tools])
        )


class CacheMonitor:
    """Fed each response's usage; reports the hit rate and warns once per streak of cache thrash."""

    def __init__(self, *, ttl_seconds: float = 300.0, cache_min_tokens: int = 1024) -> None:
        self.ttl_seconds = ttl_seconds
        self.cache_min_tokens = cache_min_tokens
        self.requests = 0
        self.hits = 0
        self.misses = 0  # expected reads that did not happen
        self.cache_read = 0
        self.cache_write = 0
        self.uncached = 0
        self._previous: tuple[PrefixKey, float] | None = None
        self._streak: list[str] = []  # causes found for each miss of the current streak
        self._warned = False

    @property
    def hit_rate(self) -> float:
        total = self.cache_read + self.cache_write + self.uncached
        return self.cache_read / total if total else 0.0

    def reset(self) -> None:
        """The cache is cold for another reason (model switch): the next request expects nothing."""
        self._previous = None
        self._streak.clear()
        self._warned = False

    def observe(
        self, key: PrefixKey, usage: Usage, *, at: float = 0.0, stable_tokens: int | None = None
    ) -> str | None:
        """Record one response; a warning when this completes a streak of cache thrash."""
        self.requests += 1
        self.cache_read += usage.cache_read_input_tokens
        self.cache_write += usage.cache_creation_input_tokens
        self.uncached += usage.input_tokens
        previous, self._previous = self._previous, (key, at)
        stable = stable_tokens if stable_tokens is not None else usage.total_input
        if usage.cache_read_input_tokens > 0:
            self.hits += 1
            self._streak.clear()
            self._warned = False
            return None
        if previous is None or stable < self.cache_min_tokens:
            return None  # nothing could have been read
        self.misses += 1
        self._streak.append(self._cause(previous, key, at))
        if len(self._streak) < THRASH_STREAK or self._warned:
            return None
        self._warned = True
        return self._warning()

    def _cause(self, previous: tuple[PrefixKey, float], key: PrefixKey, at: float) -> str:
        old, then = previous
        causes = []
        if old.system != key.system:
            causes.append("the system prompt changed")
        if old.tools != key.tools:
            causes.append("the tool list changed")
        if at - then > self.ttl_seconds:
            causes.append("idle longer than the cache TTL")
        return ", ".join(causes)

    def _warning(self) -> str:
        found = sorted({c for cause in self._streak for c in cause.split(", ") if c})
        head = f"cache thrash: {len(self._streak)} requests in a row read nothing from the prompt cache"
        if found:
            hint = ""
            if found == ["idle longer than the cache TTL"] and self.ttl_seconds < TTL_SECONDS["1h"]:
                hint = ' (cache_ttl = "1h" keeps it longer)'
            return f"{head}: {'; '.join(found)}{hint}"
        return (
            f"{head}; no cause found (the provider may not support prompt caching, "
            "or the start of the conversation changes between requests)"
        )


def _digest(value: Any) -> str:
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
