"""The Anthropic provider: streaming Messages API through the official SDK, with our own retries.

- The SDK is imported lazily (it costs ~1.8 s): on first use, or ahead of time with `prepare()`.
- Retries are ours (llm/retry.py, shared with the OpenAI provider; the SDK gets `max_retries=0`):
  429, 529 / `overloaded_error` (also an SSE `error` event that arrives before any content),
  500/502/503/504 and connection errors, with exponential backoff + jitter (capped at `backoff_max`)
  or the server's `retry-after-ms` / `retry-after` (capped at 60 s), and a stream that gives nothing
  for `idle_timeout` seconds. A `StreamRetry` is yielded before each wait. An error after content
  was streamed is retried too (the `StreamRetry` says it `discards` what was streamed), unless a tool
  call of the response had started: then it is raised.
- Every failure leaves as a classified `ProviderError` (anthropic_errors.py).
- A model with preserved thinking (models.toml `thinking_binding`) gets back only the thinking blocks
  still bound to what precedes them (llm/thinking_binding.py): the context engine rewrites old
  messages, and such a model refuses a block whose prefix changed. Should it refuse one anyway, or
  refuse a model models.toml does not mark (newer than the table), the request is sent again asking
  the API to drop such blocks, and so is every later one; that model is guarded from then on.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from agent_cli.core.errors import ProviderError
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust, Usage
from agent_cli.llm import models
from agent_cli.llm.anthropic_errors import AUTH_HINT, classify_error
from agent_cli.llm.base import (
    Request,
    StreamDone,
    StreamEvent,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
    StreamUsage,
    collect,
)
from agent_cli.llm.retry import STALL_TIMEOUT, Backoff, stream_with_retries
from agent_cli.llm.thinking_binding import BETA, ThinkingBinding, asked_to_drop, refused_as_misbound

_CONTENT_EVENTS = (StreamText, StreamThinking, StreamToolStart, StreamToolInput)


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        timeout: float = 600,
        *,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
        auth_token: str | None = None,
        idle_timeout: float | None = STALL_TIMEOUT,
        registry: models.ModelRegistry | None = None,
    ) -> None:
        self.api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        # a bearer token (ANTHROPIC_AUTH_TOKEN, used by gateways) stands in for a key when there is none
        self.auth_token = (
            None if self.api_key else (auth_token or os.environ.get("ANTHROPIC_AUTH_TOKEN") or None)
        )
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.backoff = Backoff(
            max(0, max_retries), backoff_base, backoff_max, sleep, rng or random.Random()
        )  # one retry policy for every provider (llm/retry.py)
        self.timeout = timeout
        self.idle_timeout = idle_timeout  # a stream that gives nothing this long is retried (llm/retry.py)
        self._clock = clock
        self._client: Any = None
        self._lock = threading.Lock()
        self._registry = registry or models.builtin_registry()
        self.binding = ThinkingBinding()
        self._refused_models: set[str] = set()  # the API refused their thinking as misbound

    # -- client ---------------------------------------------------------------------------------
    @property
    def routes_any_model(self) -> bool:
        """Anthropic's own API serves Claude models only; another Messages-API server may route any."""
        return self.base_url is not None and "api.anthropic.com" not in self.base_url

    def prepare(self) -> None:
        """Import the SDK and build the client now. Blocking (~2 s): run it in a thread, e.g.
        `await asyncio.to_thread(provider.prepare)`, to warm the provider in the background."""
        with self._lock:
            import anthropic

            if self._client is None and self.has_credentials:
                self._client = anthropic.AsyncAnthropic(
                    api_key=self.api_key,
                    auth_token=self.auth_token,
                    base_url=self.base_url,
                    max_retries=0,
                    timeout=self.timeout,
                )

    @property
    def has_credentials(self) -> bool:
        return bool(self.api_key or self.auth_token)

    async def _ensure_client(self) -> Any:
        if not self.has_credentials:
            raise ProviderError("auth", "no Anthropic API key: ANTHROPIC_API_KEY is not set", hint=AUTH_HINT)
        if self._client is None:
            await asyncio.to_thread(self.prepare)
        return self._client

    # -- Provider -------------------------------------------------------------------------------
    def model_info(self, model: str) -> ModelInfo:
        return models.model_info(model)

    async def complete(self, request: Request) -> StreamDone:
        return await collect(self.stream(request))

    async def count_tokens(self, request: Request) -> int | None:
        """The API's count for `request`, or None (no key, network trouble, any failure)."""
        if not self.has_credentials:
            return None
        body = request.to_api()
        params = {k: body[k] for k in ("model", "messages", "system", "tools", "thinking") if k in body}
        try:
            client = await self._ensure_client()
            result = await client.messages.count_tokens(**params)
            return int(result.input_tokens)
        except Exception:
            return None

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        client = await self._ensure_client()
        body = request.to_api()
        # marked in models.toml, or the API said so (a model newer than our table, a table that is wrong)
        binds = self._registry.lookup(request.model).binds_thinking or request.model in self._refused_models
        if binds:  # only the thinking still bound to its prefix goes back (llm/thinking_binding.py)
            body, left_out = self.binding.outgoing(body)
            # noted even when empty: the engine then knows this model's thinking is guarded, and
            # stops counting what it leaves out (context/requests.py)
            request.metadata[Request.UNSENT] = tuple(left_out)
            if self.binding.drop_misbound:
                body = asked_to_drop(body)
        try:
            async for event in self._stream_body(client, body, binds):
                yield event
        except ProviderError as err:
            if request.model in self._refused_models or not refused_as_misbound(err):
                raise
            # a block was refused as bound to another prefix (one this guard let through, or any, for
            # a model not marked binding): from now on the API drops such blocks, and the guard
            # keeps this model's thinking to what is still bound
            self._refused_models.add(request.model)
            self.binding.drop_misbound = True
            async for event in self._stream_body(client, asked_to_drop(body), True):
                yield event

    async def _stream_body(
        self, client: Any, body: dict[str, Any], binds: bool
    ) -> AsyncIterator[StreamEvent]:
        attempts: list[_Attempt] = []

        def new_attempt() -> _Attempt:
            attempts.append(_Attempt(self._attempt, client, body, _Turn(self._clock)))
            return attempts[-1]

        async for event in stream_with_retries(new_attempt, self.backoff, idle_timeout=self.idle_timeout):
            yield event
        turn = attempts[-1].turn
        message = turn.message()
        if binds:
            self.binding.produced(body, message)
        yield StreamDone(message, turn.usage, turn.stop_reason, turn.id, turn.model)

    async def _attempt(self, client: Any, body: dict[str, Any], turn: _Turn) -> AsyncIterator[StreamEvent]:
        beta = {"extra_headers": {"anthropic-beta": BETA}} if _binding(body) else {}
        try:
            sse = await client.messages.create(**body, stream=True, **beta)
        except Exception as err:
            raise classify_error(err) from err
        try:
            async for raw in sse:
                for event in turn.feed(raw):
                    yield event
        except ProviderError:
            raise
        except Exception as err:
            raise classify_error(err) from err
        finally:
            await sse.close()


@dataclass
class _Attempt:
    """One try of a streamed request (llm/retry.py's Attempt): its events, then a check that the
    stream really ended with the message (a cut connection is a network error, retried)."""

    run: Callable[[Any, dict[str, Any], _Turn], AsyncIterator[StreamEvent]]
    client: Any
    body: dict[str, Any]
    turn: _Turn

    @property
    def content_started(self) -> bool:
        return self.turn.content_started

    async def events(self) -> AsyncIterator[StreamEvent]:
        async with aclosing(self.run(self.client, self.body, self.turn)) as events:
            async for event in events:
                yield event
        if not self.turn.finished:
            raise ProviderError("network", "the response stream ended before the message was complete")


# -- assembling a response from raw stream events --------------------------------------------------


@dataclass
class _Partial:
    type: str
    text: str = ""
    signature: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    json_parts: list[str] = field(default_factory=list)


class _Turn:
    """One attempt's state: translates raw SSE events into stream events and builds the message."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._blocks: dict[int, _Partial] = {}
        self.usage = Usage()
        self.stop_reason = ""
        self.finished = False
        self.content_started = False
        self.id = self.model = ""  # the message's, from message_start

    def feed(self, raw: Any) -> list[StreamEvent]:
        out = self._translate(raw)
        if any(isinstance(e, _CONTENT_EVENTS) for e in out):
            self.content_started = True
        return out

    def _translate(self, raw: Any) -> list[StreamEvent]:
        kind = getattr(raw, "type", "")
        if kind == "message_start":
            self.id = str(getattr(raw.message, "id", "") or "")
            self.model = str(getattr(raw.message, "model", "") or "")
            u = raw.message.usage
            split = getattr(u, "cache_creation", None)  # the writes by TTL (newer APIs)
            self.usage = Usage(
                int(u.input_tokens or 0),
                int(u.output_tokens or 0),
                int(u.cache_read_input_tokens or 0),
                int(u.cache_creation_input_tokens or 0),
                int(getattr(split, "ephemeral_1h_input_tokens", 0) or 0),
            )
            return [StreamUsage(self.usage)]
        if kind == "content_block_start":
            return self._start(raw.index, raw.content_block)
        if kind == "content_block_delta":
            return self._delta(raw.index, raw.delta)
        if kind == "message_delta":
            self.stop_reason = raw.delta.stop_reason or self.stop_reason
            self.usage = _merge_usage(self.usage, raw.usage)
            return [StreamUsage(self.usage)]
        if kind == "message_stop":
            self.finished = True
        return []

    def _start(self, index: int, block: Any) -> list[StreamEvent]:
        kind = block.type
        if kind == "text":
            self._blocks[index] = _Partial("text", text=block.text or "")
            return [StreamText(block.text)] if block.text else []
        if kind == "thinking":
            self._blocks[index] = _Partial(
                "thinking", text=block.thinking or "", signature=block.signature or ""
            )
            return [StreamThinking(block.thinking)] if block.thinking else []
        if kind == "redacted_thinking":
            self._blocks[index] = _Partial("redacted_thinking", signature=block.data or "")
            return []
        if kind == "tool_use":
            initial = block.input if isinstance(block.input, dict) else {}
            self._blocks[index] = _Partial("tool_use", id=block.id, name=block.name, input=dict(initial))
            return [StreamToolStart(block.id, block.name)]
        return []  # server tools, citations and other block types are not used by this agent

    def _delta(self, index: int, delta: Any) -> list[StreamEvent]:
        partial = self._blocks.get(index)
        if partial is None:
            return []
        kind = delta.type
        if kind == "text_delta":
            partial.text += delta.text
            return [StreamText(delta.text)] if delta.text else []
        if kind == "thinking_delta":
            partial.text += delta.thinking
            return [StreamThinking(delta.thinking)] if delta.thinking else []
        if kind == "signature_delta":
            partial.signature += delta.signature
        elif kind == "input_json_delta":
            partial.json_parts.append(delta.partial_json)
            if delta.partial_json:
                return [StreamToolInput(partial.id, delta.partial_json)]
        return []

    def message(self) -> Message:
        blocks: list[Block] = []
        now = self._clock()
        for index in sorted(self._blocks):
            p = self._blocks[index]
            meta = BlockMeta(trust=Trust.ASSISTANT, source="assistant", created_at=now)
            if p.type == "text" and p.text:
                blocks.append(Block.text_block(p.text, meta))
            elif p.type == "thinking":
                blocks.append(Block(type="thinking", text=p.text, signature=p.signature, meta=meta))
            elif p.type == "redacted_thinking":
                blocks.append(Block(type="thinking", text="", signature=p.signature, meta=meta))
            elif p.type == "tool_use":
                tool_meta = BlockMeta(
                    trust=Trust.ASSISTANT, source="assistant", created_at=now, tool_name=p.name
                )
                blocks.append(Block.tool_use(p.id, p.name, _tool_input(p), tool_meta))
        return Message(role="assistant", blocks=tuple(blocks))


def _binding(body: dict[str, Any]) -> bool:
    return "block_binding" in (body.get("thinking") or {})


def _tool_input(partial: _Partial) -> dict[str, Any]:
    """The tool input from the streamed JSON ("" -> the start block's input, usually {}).

    JSON that does not parse (a response cut off by max_tokens) is kept verbatim under
    `_invalid_json`, so nothing is lost and the tool's own validation reports it to the model."""
    raw = "".join(partial.json_parts)
    if not raw.strip():
        return partial.input
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return {"_invalid_json": raw}
    return parsed if isinstance(parsed, dict) else {"_invalid_json": raw}


def _merge_usage(usage: Usage, delta: Any) -> Usage:
    if delta is None:
        return usage

    def pick(name: str, current: int) -> int:
        value = getattr(delta, name, None)
        return current if value is None else int(value)

    return Usage(
        pick("input_tokens", usage.input_tokens),
        pick("output_tokens", usage.output_tokens),
        pick("cache_read_input_tokens", usage.cache_read_input_tokens),
        pick("cache_creation_input_tokens", usage.cache_creation_input_tokens),
        usage.cache_creation_1h_input_tokens,
    )
