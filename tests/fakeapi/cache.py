"""A prompt-cache simulation, close enough to the real one for cache metrics to be testable.

The prompt is read in the API's cache order — tools, then system, then messages — as a list of
blocks. Each block's tokens are estimated as chars/4 of its canonical JSON (sorted keys, no
`cache_control`); the whole request's tokens are chars/4 of the request body, so the three usage
numbers add up to that estimate. An image counts as the API counts it — width x height / 750 tokens,
after scaling to a 1568 px edge and ~1.15 MP (its size read with Pillow) — not as its base64.

- A breakpoint is a block with `cache_control` (one inside a tool_result counts for that block).
- After a request, the prefix up to every breakpoint is written to the cache for its ttl (5m, or 1h).
- A request reads the longest cached prefix that ends at one of its breakpoints or up to 20 blocks
  before one (the API's lookback); a hit refreshes that entry's ttl.
- usage: cache_read_input_tokens = the cached prefix; cache_creation_input_tokens = from there to the
  last breakpoint; input_tokens = the rest.
- Prefixes are keyed by the model, each block's position (message index and role) and content, so
  changing the tools or the system prompt invalidates everything after it, as on the real API.
- `min_tokens`: prefixes shorter than this are never written (the real minimum is 1024+; default 0).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cache_creation_1h_input_tokens: int = 0  # what a breakpoint with "ttl": "1h" ends


@dataclass(frozen=True)
class _Segment:
    key: str  # the running hash of the prefix that ends with this block
    tokens: int  # cumulative tokens up to and including this block
    ttl: float | None  # set when this block is a breakpoint


class PromptCache:
    def __init__(self, clock: Callable[[], float], min_tokens: int = 0) -> None:
        self._clock = clock
        self._min_tokens = min_tokens
        self._entries: dict[str, tuple[float, float]] = {}  # prefix key -> (expires_at, ttl)

    def clear(self) -> None:
        self._entries.clear()

    def account(self, body: dict[str, Any], total_tokens: int) -> CacheUsage:
        """Usage for this request, and remember its breakpoints' prefixes."""
        now = self._clock()
        self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
        segments = list(_segments(body))
        breakpoints = [i for i, s in enumerate(segments) if s.ttl is not None]
        read_at = -1
        for bp in breakpoints:
            for p in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                if segments[p].key in self._entries:
                    read_at = max(read_at, p)
                    break
        read = segments[read_at].tokens if read_at >= 0 else 0
        if read_at >= 0:
            _, ttl = self._entries[segments[read_at].key]
            self._entries[segments[read_at].key] = (now + ttl, ttl)
        created = hour = 0
        start = read
        for bp in breakpoints:
            segment = segments[bp]
            if segment.ttl is None or segment.tokens < self._min_tokens:
                continue
            self._entries[segment.key] = (now + segment.ttl, segment.ttl)
            if bp > read_at:
                created = segment.tokens - read
                if segment.ttl >= 3600:  # the span this breakpoint ends is kept an hour
                    hour += segment.tokens - start
                start = segment.tokens
        total = max(total_tokens, segments[-1].tokens if segments else 0)
        return CacheUsage(max(0, total - read - created), read, created, min(hour, created))


def estimate_tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def request_tokens(raw_chars: int, body: Any) -> int:
    """chars/4 of a request body of `raw_chars`, its images counted as the API counts them."""
    return estimate_tokens(raw_chars + sum(_image_chars(data) - len(data) for data in _image_data(body)))


def _image_data(value: Any) -> Iterator[str]:
    """The base64 data of every image block in `value` (a body, a block, a list)."""
    if isinstance(value, dict):
        source = value.get("source")
        if value.get("type") == "image" and isinstance(source, dict) and isinstance(source.get("data"), str):
            yield source["data"]
            return
        for item in value.values():
            yield from _image_data(item)
    elif isinstance(value, list):
        for item in value:
            yield from _image_data(item)


def _image_chars(data: str) -> int:
    """An image as the chars whose chars/4 is what the API bills for it."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(base64.b64decode(data))) as image:
            width, height = image.size
    except Exception:  # noqa: BLE001 - not an image the API would take: the usual ceiling
        return 4 * 1_600
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return 4 * math.ceil(width * scale * height * scale / 750)


def _segments(body: dict[str, Any]) -> Iterator[_Segment]:
    running = hashlib.sha256(str(body.get("model", "")).encode())
    chars = 0
    for tag, block in _blocks(body):
        ttl = _breakpoint_ttl(block)
        text = json.dumps(
            without_cache_control(block), sort_keys=True, ensure_ascii=False, separators=(",", ":")
        )
        chars += len(text) + sum(_image_chars(data) - len(data) for data in _image_data(block))
        running.update(f"\x00{tag}\x00{text}".encode())
        yield _Segment(running.copy().hexdigest(), estimate_tokens(chars), ttl)


def _blocks(body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for tool in body.get("tools") or []:
        yield "tool", tool
    system = body.get("system")
    if isinstance(system, str):
        yield "system", {"type": "text", "text": system}
    elif isinstance(system, list):
        for block in system:
            yield "system", block
    for m, message in enumerate(body.get("messages") or []):
        role = message.get("role", "")
        content = message.get("content")
        if isinstance(content, str):
            yield f"{m}:{role}", {"type": "text", "text": content}
            continue
        for block in content or []:
            yield f"{m}:{role}", block


def _breakpoint_ttl(block: Any) -> float | None:
    if not isinstance(block, dict):
        return None
    controls = [block.get("cache_control")]
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        controls += [sub.get("cache_control") for sub in block["content"] if isinstance(sub, dict)]
    for control in controls:
        if isinstance(control, dict):
            return TTL_SECONDS.get(str(control.get("ttl", "5m")), TTL_SECONDS["5m"])
    return None


def without_cache_control(block: Any) -> Any:
    """`block` (any JSON value) with every `cache_control` marker left out: what the API compares."""
    if isinstance(block, dict):
        return {k: without_cache_control(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [without_cache_control(v) for v in block]
    return block
