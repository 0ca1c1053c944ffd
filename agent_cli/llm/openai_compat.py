"""Any OpenAI-compatible chat-completions endpoint (OpenAI, LiteLLM, vLLM, Ollama, llama.cpp server).

The `openai` SDK is imported lazily (on first use, or ahead of time with `prepare()`).

A `Request` (Messages-API shape) is translated to chat completions by openai_request.py (with
cache_control kept when the registry says the model is a Claude model, i.e. the endpoint is a gateway
such as LiteLLM in front of the Messages API). The stream (with `stream_options.include_usage`) is
translated back into our stream events and one StreamDone; several tool calls interleaved by `index`
come out as separate tool_use blocks.
Retries are ours (llm/retry.py; the SDK gets `max_retries=0`; a stream that gives nothing for
`idle_timeout` seconds is retried too), errors are classified in
openai_errors.py (context-length errors become ContextOverflowError, so T5 runs).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.core.errors import ConfigError, ProviderError
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust, Usage
from agent_cli.llm import models
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
from agent_cli.llm.openai_errors import KEY_HINT, classify_openai_error
from agent_cli.llm.openai_request import to_chat_params
from agent_cli.llm.retry import STALL_TIMEOUT, Backoff, stream_with_retries

MISSING_SDK = "the openai provider needs the `openai` package: pip install openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


@dataclass(frozen=True)
class OpenAISettings:
    """Where the endpoint is and which environment variable holds its key ("" = OPENAI_BASE_URL)."""

    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"


class OpenAICompatProvider:
    name = "openai"

    def __init__(
        self,
        settings: OpenAISettings | None = None,
        *,
        backoff: Backoff | None = None,
        timeout: float = 600,
        window: int | None = None,
        clock: Callable[[], float] = time.time,
        env: dict[str, str] | None = None,
        registry: models.ModelRegistry | None = None,
        idle_timeout: float | None = STALL_TIMEOUT,
    ) -> None:
        settings = settings or OpenAISettings()
        env = dict(os.environ) if env is None else env
        self.key_env = settings.api_key_env or "OPENAI_API_KEY"
        self.api_key = env.get(self.key_env) or None
        self.base_url = settings.base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.backoff = backoff or Backoff()
        self.timeout = timeout
        self.idle_timeout = idle_timeout  # a stream that gives nothing this long is retried (llm/retry.py)
        self.window = window
        self.registry = registry or models.builtin_registry()
        self._clock = clock
        self._client: Any = None
        self._lock = threading.Lock()

    @property
    def routes_any_model(self) -> bool:
        """OpenAI's own API serves its models only; a gateway or local server may serve any name."""
        return self.base_url.rstrip("/") != DEFAULT_BASE_URL

    def prepare(self) -> None:
        """Import the SDK and build the client now. Blocking: run it in a thread to warm it up."""
        with self._lock:
            if self._client is not None:
                return
            try:
                import openai
            except ImportError as err:
                raise ConfigError(MISSING_SDK) from err
            # a local server takes any key, but the SDK insists on one
            self._client = openai.AsyncOpenAI(
                api_key=self.api_key or "not-needed",
                base_url=self.base_url,
                max_retries=0,
                timeout=self.timeout,
            )

    def _check_key(self) -> None:
        if self.api_key is None and self.base_url.rstrip("/") == DEFAULT_BASE_URL:
            raise ProviderError(
                "auth", f"no API key for {self.base_url}: {self.key_env} is not set", hint=KEY_HINT
            )

    def model_info(self, model: str) -> ModelInfo:
        return self.registry.info(model, self.window)

    async def complete(self, request: Request) -> StreamDone:
        return await collect(self.stream(request))

    async def count_tokens(self, request: Request) -> int | None:
        return None  # chat completions has no counting endpoint

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self._check_key()
        if self._client is None:
            import asyncio

            await asyncio.to_thread(self.prepare)
        # a Claude model (by the registry) behind this endpoint is a gateway to the Messages API: it
        # passes cache_control on, so the prompt cache works through it
        keep_cache = self.registry.lookup(request.model).provider == "anthropic"
        params = to_chat_params(request, keep_cache=keep_cache)
        final: list[ChatTurn] = []

        def new_attempt() -> _Attempt:
            turn = ChatTurn(self._clock)
            final[:] = [turn]
            return _Attempt(self._client, params, turn)

        async for event in stream_with_retries(new_attempt, self.backoff, idle_timeout=self.idle_timeout):
            yield event
        turn = final[0]
        yield StreamDone(turn.message(), turn.usage, turn.stop_reason or "end_turn", turn.id, turn.model)


class _Attempt:
    """One request: the chunks of its stream as our events; raises a classified ProviderError."""

    def __init__(self, client: Any, params: dict[str, Any], turn: ChatTurn) -> None:
        self._client = client
        self._params = params
        self.turn = turn

    @property
    def content_started(self) -> bool:
        return self.turn.content_started

    async def events(self) -> AsyncIterator[StreamEvent]:
        try:
            chunks = await self._client.chat.completions.create(**self._params)
        except Exception as err:
            raise classify_openai_error(err) from err
        try:
            async for chunk in chunks:
                for event in self.turn.feed(chunk.model_dump()):
                    yield event
        except ProviderError:
            raise
        except Exception as err:
            raise classify_openai_error(err) from err
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                await close()
        if not self.turn.finished:
            raise ProviderError("network", "the response stream ended before the message was complete")


# -- response translation -------------------------------------------------------------------------


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    started: bool = False


class ChatTurn:
    """Translates chat-completion chunks (as dicts) into stream events and the final message."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.text = ""
        self.thinking = ""
        self.calls: dict[int, _Call] = {}  # by slot, in the order the calls began
        self._slots: dict[int, int] = {}  # the stream's `index` -> the slot of the call it continues
        self.usage = Usage()
        self.stop_reason = ""
        self.finished = False  # a finish_reason arrived
        self.content_started = False
        self.id = self.model = ""  # the completion's, from its chunks

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        self.id = self.id or str(chunk.get("id") or "")
        self.model = self.model or str(chunk.get("model") or "")
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.thinking += reasoning
                out.append(StreamThinking(reasoning))
            if delta.get("content"):
                self.text += delta["content"]
                out.append(StreamText(delta["content"]))
            for call in delta.get("tool_calls") or []:
                out.extend(self._call_delta(call))
            if choice.get("finish_reason"):
                self.finished = True
                self.stop_reason = _FINISH.get(choice["finish_reason"], choice["finish_reason"])
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
            out.append(StreamUsage(self.usage))
        if any(not isinstance(e, StreamUsage) for e in out):
            self.content_started = True
        return out

    def _slot(self, delta: dict[str, Any]) -> int:
        """Which call a delta continues: by `index`; a new id under a used index (or no index at all,
        as some servers send whole calls) starts a new call."""
        new_id = delta.get("id") or ""
        index = delta.get("index")
        if index is None:
            if not self.calls or (new_id and new_id != self.calls[max(self.calls)].id):
                return len(self.calls)
            return max(self.calls)
        slot = self._slots.get(int(index))
        if slot is None or (new_id and self.calls[slot].id and new_id != self.calls[slot].id):
            slot = len(self.calls)
            self._slots[int(index)] = slot
        return slot

    def _call_delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        call = self.calls.setdefault(self._slot(delta), _Call())
        function = delta.get("function") or {}
        call.id = call.id or delta.get("id") or ""
        call.name = call.name or function.get("name") or ""
        out: list[StreamEvent] = []
        if not call.started and call.name:
            call.id = call.id or f"call_{len(self.calls)}_{int(self._clock() * 1000)}"
            call.started = True
            out.append(StreamToolStart(call.id, call.name))
        if function.get("arguments"):
            call.arguments.append(function["arguments"])
            if call.started:
                out.append(StreamToolInput(call.id, function["arguments"]))
        return out

    def message(self) -> Message:
        now = self._clock()
        meta = BlockMeta(trust=Trust.ASSISTANT, source="assistant", created_at=now)
        blocks: list[Block] = []
        if self.thinking:
            blocks.append(Block(type="thinking", text=self.thinking, meta=meta))
        if self.text:
            blocks.append(Block.text_block(self.text, meta))
        for index in sorted(self.calls):
            call = self.calls[index]
            raw = "".join(call.arguments)
            try:
                args = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError:
                args = {"_invalid_json": raw}
            if not isinstance(args, dict):
                args = {"_invalid_json": raw}
            tool_meta = BlockMeta(
                trust=Trust.ASSISTANT, source="assistant", created_at=now, tool_name=call.name
            )
            blocks.append(Block.tool_use(call.id, call.name, args, tool_meta))
        if self.calls and self.stop_reason in ("", "end_turn"):
            self.stop_reason = "tool_use"  # some servers say "stop" after tool calls
        return Message(role="assistant", blocks=tuple(blocks))


def _usage(data: dict[str, Any]) -> Usage:
    """prompt_tokens counts everything read: cache reads (`cached_tokens`) and, from gateways in front
    of the Messages API (LiteLLM: `cache_creation_tokens` / `cache_write_tokens`), cache writes."""
    details = data.get("prompt_tokens_details") or {}
    prompt = int(data.get("prompt_tokens") or 0)
    cached = int(details.get("cached_tokens") or 0)
    written = int(
        details.get("cache_creation_tokens")
        or details.get("cache_write_tokens")
        or data.get("cache_creation_input_tokens")
        or 0
    )
    output = int(data.get("completion_tokens") or 0)
    return Usage(max(0, prompt - cached - written), output, cached, written)
