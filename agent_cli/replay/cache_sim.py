"""A prompt-cache simulator that follows the Anthropic API's rules.

A request is a sequence of blocks (tools, system, then message content blocks, in order). A block
marked with `cache_control` is a breakpoint (at most 4 per request): the prefix up to and
including it is written to the cache. A later request reads the longest cached prefix it shares,
checking the boundary at each of its own breakpoints and up to `lookback` (20) earlier block
boundaries before each (the API's automatic look-back). An entry lives `ttl` seconds (5 min, or
1 h for `"ttl": "1h"`) after its last use; a read refreshes it. A prefix shorter than the model's
cache minimum is never written.

Per request: `cache_read` = tokens of the matched prefix; `cache_write` = tokens from the match to
the last cacheable breakpoint (`cache_write_1h` of them: the spans a `"ttl": "1h"` breakpoint ends,
priced 2x rather than 1.25x); `uncached` = the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.core.types import Usage
from agent_cli.llm.base import Request
from agent_cli.llm.thinking_binding import THINKING_TYPES

TTL_5M = 300.0
TTL_1H = 3600.0
LOOKBACK = 20
MAX_BREAKPOINTS = 4


@dataclass(frozen=True)
class Segment:
    """One block of a request: a digest of its content, its tokens, whether it is a breakpoint."""

    key: bytes
    tokens: int
    breakpoint: bool = False
    ttl: float = TTL_5M


@dataclass(frozen=True)
class CacheResult:
    cache_read: int
    cache_write: int
    uncached: int
    breakpoints: int = 0
    matched_blocks: int = 0  # blocks covered by the read (0 on a miss)
    cache_write_1h: int = 0  # of `cache_write`, what a breakpoint marked `"ttl": "1h"` ends

    @property
    def total(self) -> int:
        return self.cache_read + self.cache_write + self.uncached

    def usage(self, output_tokens: int = 0) -> Usage:
        return Usage(
            input_tokens=self.uncached,
            output_tokens=output_tokens,
            cache_read_input_tokens=self.cache_read,
            cache_creation_input_tokens=self.cache_write,
            cache_creation_1h_input_tokens=self.cache_write_1h,
        )


@dataclass
class _Entry:
    ttl: float
    last_used: float

    def alive(self, now: float) -> bool:
        return now - self.last_used <= self.ttl


class CacheSimulator:
    """Feed requests in time order with `request(segments, now)`; it returns what each one costs."""

    def __init__(self, *, lookback: int = LOOKBACK, min_tokens: int = 0) -> None:
        self.lookback = lookback
        self.min_tokens = min_tokens
        self._entries: dict[bytes, _Entry] = {}
        self.too_many_breakpoints = 0  # requests the API would refuse (> 4 cache_control blocks)

    def warm(self, segments: Sequence[Segment], upto: int, now: float, ttl: float = TTL_5M) -> None:
        """The prefix of blocks 0..upto is in the cache at `now` (written by an earlier session)."""
        if 0 <= upto < len(segments):
            self._entries[prefix_keys(segments[: upto + 1])[upto]] = _Entry(ttl, now)

    def request(self, segments: Sequence[Segment], now: float) -> CacheResult:
        prefixes = prefix_keys(segments)
        cumulative: list[int] = []
        running = 0
        for segment in segments:
            running += segment.tokens
            cumulative.append(running)
        total = running
        breakpoints = [i for i, s in enumerate(segments) if s.breakpoint]
        if len(breakpoints) > MAX_BREAKPOINTS:
            self.too_many_breakpoints += 1

        hit = -1
        for point in breakpoints:
            for j in range(point, max(point - self.lookback, 0) - 1, -1):
                if j <= hit:
                    break
                entry = self._entries.get(prefixes[j])
                if entry is None:
                    continue
                if not entry.alive(now):
                    del self._entries[prefixes[j]]
                    continue
                hit = j
                break
        read = cumulative[hit] if hit >= 0 else 0
        if hit >= 0:
            self._entries[prefixes[hit]].last_used = now

        cacheable = [p for p in breakpoints if cumulative[p] >= self.min_tokens]
        last = cacheable[-1] if cacheable else -1
        write = cumulative[last] - read if last > hit else 0
        hour, start = 0, read  # each written span is kept as long as the breakpoint that ends it says
        for point in cacheable:
            if point > hit:
                if segments[point].ttl >= TTL_1H:
                    hour += cumulative[point] - start
                start = cumulative[point]
        for point in cacheable:
            entry = self._entries.get(prefixes[point])
            if entry is not None and entry.alive(now):
                entry.last_used = now
            elif point > hit:
                self._entries[prefixes[point]] = _Entry(segments[point].ttl, now)
        return CacheResult(
            cache_read=read,
            cache_write=write,
            uncached=total - read - write,
            breakpoints=len(breakpoints),
            matched_blocks=hit + 1,
            cache_write_1h=hour,
        )


def prefix_keys(segments: Sequence[Segment]) -> list[bytes]:
    """The rolling digest of blocks 0..i for each i (a block with no key is not part of it)."""
    out: list[bytes] = []
    running = b""
    for segment in segments:
        if segment.key:
            running = hashlib.blake2b(running + segment.key, digest_size=16).digest()
        out.append(running)
    return out


def block_key(kind: str, block: dict[str, Any]) -> bytes:
    """A digest of a block's content (its cache_control marker excluded) and where it sits."""
    body = {k: v for k, v in block.items() if k != "cache_control"}
    raw = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(f"{kind}\x00{raw}".encode(), digest_size=16).digest()


def _marker(block: dict[str, Any]) -> tuple[bool, float]:
    control = block.get("cache_control")
    if not isinstance(control, dict):
        return False, TTL_5M
    return True, TTL_1H if control.get("ttl") == "1h" else TTL_5M


class RawCounter(Protocol):
    """The raw (uncalibrated) counts `request_segments` needs (context.tokens.TokenCounter has them)."""

    def raw_request(self, request: Any) -> int: ...

    def raw_tools(self, tools: Any) -> int: ...

    def raw_system(self, system: Any) -> int: ...

    def raw_api_message(self, message: Any) -> int: ...

    def raw_api_block(self, block: Any) -> int: ...

    def scale(self, raw: int) -> int: ...


class SegmentMemo:
    """Per-replay memo of (raw tokens, digest) per block payload, so each block is counted and
    hashed once rather than in every request that carries it. Keyed by the identity of the block's
    payload object (the text string or input dict a frozen Block shares with every request built
    from it); the memo holds a reference, so an id is never reused while it is remembered."""

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], tuple[Any, int, bytes]] = {}

    def get(self, kind: str, block: dict[str, Any], counter: RawCounter) -> tuple[int, bytes]:
        payload = _payload(block)
        if payload is None:
            return counter.raw_api_block(block), block_key(kind, block)
        key = (
            kind,
            block.get("type"),
            id(payload),
            block.get("id"),
            block.get("name"),
            block.get("tool_use_id"),
            block.get("is_error"),
            block.get("signature") and id(block.get("signature")),
        )
        found = self._items.get(key)
        if found is None:
            found = (payload, counter.raw_api_block(block), block_key(kind, block))
            self._items[key] = found
        return found[1], found[2]


def _payload(block: dict[str, Any]) -> Any:
    kind = block.get("type")
    if kind == "text":
        return block.get("text")
    if kind == "thinking":
        return block.get("thinking")
    if kind == "tool_use":
        return block.get("input")
    if kind == "tool_result" and isinstance(block.get("content"), str):
        return block.get("content")
    return None


def request_segments(
    request: Request, counter: RawCounter, memo: SegmentMemo | None = None, *, thinking_keyed: bool = True
) -> list[Segment]:
    """The request's blocks in cache order (tools, system, messages) as segments.

    Tokens follow the counter exactly: the raw count of each block (a message's own overhead on its
    first block, the request's on the first segment), calibrated on the running total, so the
    segments sum to `counter.request(request)`. `thinking_keyed` False: thinking blocks are counted
    but not part of the cache key (a model whose API leaves older turns' thinking out still reads
    the prefix it cached with them: replay/thinking_turns.py).
    """
    entries: list[tuple[bool, float, bytes, int]] = []  # (breakpoint, ttl, key, raw tokens)
    previous = 0
    for i, tool in enumerate(request.tools):
        running = counter.raw_tools(request.tools[: i + 1])
        entries.append((*_marker(tool), block_key("tool", tool), running - previous))
        previous = running
    for block in request.system:
        entries.append((*_marker(block), block_key("system", block), counter.raw_system([block])))
    message_overhead = counter.raw_api_message({"role": "user", "content": []})
    for message in request.messages:
        role = str(message.get("role", ""))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        keyed = 0  # blocks of the message in the key so far (where a block sits is part of it)
        for index, block in enumerate(content):
            unkeyed = not thinking_keyed and block.get("type") in THINKING_TYPES
            kind = role if keyed == 0 else f"{role}+"
            if memo is not None:
                raw, key = memo.get(kind, block, counter)
            else:
                raw, key = counter.raw_api_block(block), block_key(kind, block)
            keyed += not unkeyed
            entries.append(
                (*_marker(block), b"" if unkeyed else key, raw + (message_overhead if index == 0 else 0))
            )
    if entries:
        mark, ttl, key, raw = entries[0]
        entries[0] = (mark, ttl, key, raw + counter.raw_request({"messages": []}))  # the request's overhead
    out: list[Segment] = []
    running_raw = scaled_before = 0
    for mark, ttl, key, raw in entries:
        running_raw += raw
        scaled = counter.scale(running_raw)
        out.append(Segment(key, scaled - scaled_before, mark, ttl))
        scaled_before = scaled
    return out
