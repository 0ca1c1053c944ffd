"""Any OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp server, OpenAI itself).

Optional: needs the `[openai]` extra (`pip install 'agent-cli[openai]'`); without it, building the
client raises a ConfigError that says so. The SDK is imported lazily.

A `Request` (Messages-API shape) is translated to chat completions: system blocks become one system
message, tool_use blocks become `tool_calls`, tool_result blocks become `tool` messages (sent before
the user's words of the same turn), tools become functions; cache_control and thinking blocks are
dropped. The stream is translated back into our stream events and one StreamDone. Retries are the
SDK's own (one place): `max_retries` is handed to it.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.core.errors import ConfigError, ContextOverflowError, ProviderError
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust, Usage, content_to_text
from agent_cli.llm import models
from agent_cli.llm.anthropic_errors import classify_status
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

MISSING_EXTRA = "the openai provider needs the optional extra: pip install 'agent-cli[openai]'"
_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}
_OVERFLOW = re.compile(
    r"maximum context length is\s*([\d,]+)\s*tokens.*?(?:requested|resulted in)\s*([\d,]+)\s*tokens",
    re.IGNORECASE | re.DOTALL,
)


class OpenAICompatProvider:
    name = "openai"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout: float = 600,
        *,
        window: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # local servers take any key; the SDK insists on one
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.max_retries = max_retries
        self.timeout = timeout
        self.window = window
        self._clock = clock
        self._client: Any = None

    def prepare(self) -> None:
        """Import the SDK and build the client (raises ConfigError without the extra)."""
        if self._client is not None:
            return
        try:
            import openai
        except ImportError as err:
            raise ConfigError(MISSING_EXTRA) from err
        self._client = openai.AsyncOpenAI(
            api_key=self.api_key, base_url=self.base_url, max_retries=self.max_retries, timeout=self.timeout
        )

    def model_info(self, model: str) -> ModelInfo:
        return models.model_info(model, self.window)

    async def complete(self, request: Request) -> StreamDone:
        return await collect(self.stream(request))

    async def count_tokens(self, request: Request) -> int | None:
        return None  # chat completions has no counting endpoint

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.prepare()
        params = to_chat_params(request)
        turn = ChatTurn(self._clock)
        try:
            chunks = await self._client.chat.completions.create(**params)
            async for chunk in chunks:
                for event in turn.feed(chunk.model_dump()):
                    yield event
        except ProviderError:
            raise
        except Exception as err:
            raise classify_openai_error(err, turn.content_started) from err
        yield StreamDone(turn.message(), turn.usage, turn.stop_reason or "end_turn")


# -- request translation --------------------------------------------------------------------------


def to_chat_params(request: Request) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    system = "\n\n".join(b.get("text", "") for b in request.system if b.get("text"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        messages.extend(_translate_message(message))
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
                },
            }
            for tool in request.tools
        ]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    return params


def _translate_message(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    if message.get("role") == "assistant":
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [
            {
                "id": b["id"],
                "type": "function",
                "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
            }
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    results = [
        {
            "role": "tool",
            "tool_call_id": b["tool_use_id"],
            "content": ("ERROR: " if b.get("is_error") else "") + content_to_text(b.get("content")),
        }
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text" and b.get("text"):
            parts.append({"type": "text", "text": b["text"]})
        elif b.get("type") == "image":
            source = b.get("source") or {}
            url = f"data:{source.get('media_type', '')};base64,{source.get('data', '')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    if not parts:
        return results
    if all(p["type"] == "text" for p in parts):
        return [*results, {"role": "user", "content": "\n\n".join(p["text"] for p in parts)}]
    return [*results, {"role": "user", "content": parts}]


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
        self.calls: dict[int, _Call] = {}
        self.usage = Usage()
        self.stop_reason = ""
        self.content_started = False

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
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
                self.stop_reason = _FINISH.get(choice["finish_reason"], choice["finish_reason"])
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
            out.append(StreamUsage(self.usage))
        if any(not isinstance(e, StreamUsage) for e in out):
            self.content_started = True
        return out

    def _call_delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        call = self.calls.setdefault(int(delta.get("index") or 0), _Call())
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
    prompt = int(data.get("prompt_tokens") or 0)
    cached = int((data.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    return Usage(prompt - cached, int(data.get("completion_tokens") or 0), cached, 0)


def classify_openai_error(err: BaseException, content_started: bool = False) -> ProviderError:
    import openai

    if isinstance(err, openai.APIStatusError):
        body = err.body if isinstance(err.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        message = str(error.get("message") or err.message)
        match = _OVERFLOW.search(message)
        if match:
            maximum, tokens = (int(g.replace(",", "")) for g in match.groups())
            return ContextOverflowError(
                "context_overflow",
                message,
                err.status_code,
                None,
                "/compact frees room",
                tokens=tokens,
                maximum=maximum,
            )
        classified = classify_status(err.status_code, str(error.get("type") or ""), message)
        if classified.kind == "auth":
            classified.hint = "set OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)"
    elif isinstance(err, openai.APIConnectionError):
        classified = ProviderError(
            "network",
            f"cannot reach {err.request.url}: {err}",
            hint="check OPENAI_BASE_URL and that the server runs",
        )
    else:
        classified = ProviderError("other", f"{type(err).__name__}: {err}")
    if content_started:
        classified.message = f"the response was cut off: {classified.message}"
    return classified
