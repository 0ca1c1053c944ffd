"""The provider seam: one small Protocol plus the request and stream-event types.

A `Request` is already in Messages-API shape (assembly in context/ builds it, cache_control
included), so the Anthropic provider passes it through and other providers translate it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from agent_cli.core.types import Message, ModelInfo, Request, Usage  # noqa: F401 - Request re-exported

# -- stream events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamText:
    text: str


@dataclass(frozen=True)
class StreamThinking:
    text: str


@dataclass(frozen=True)
class StreamToolStart:
    id: str
    name: str


@dataclass(frozen=True)
class StreamToolInput:
    id: str
    partial_json: str


@dataclass(frozen=True)
class StreamUsage:
    """Usage as it is known so far (input at message_start, output at message_delta)."""

    usage: Usage


@dataclass(frozen=True)
class StreamRetry:
    """The provider is waiting before another attempt (429, 529, overloaded, network). `discards`:
    the failed attempt had streamed text or thinking, which the next attempt replaces (no tool call
    of it had started): what was shown of it is not part of the answer."""

    attempt: int
    delay: float
    reason: str
    discards: bool = False


@dataclass(frozen=True)
class StreamDone:
    """The last event of a stream: the complete assistant message."""

    message: Message
    usage: Usage
    stop_reason: str
    id: str = ""  # the API's id of the message, when it gave one
    model: str = ""  # the model that answered, as the API named it


StreamEvent = (
    StreamText | StreamThinking | StreamToolStart | StreamToolInput | StreamUsage | StreamRetry | StreamDone
)


@runtime_checkable
class Provider(Protocol):
    """What the loop needs from a model: stream a response, complete one (summarizer), count."""

    name: str
    # True when the endpoint may serve models the registry gives to another provider (a gateway
    # such as LiteLLM or OpenRouter, a local server); False for the provider's own API
    routes_any_model: bool

    def model_info(self, model: str) -> ModelInfo: ...

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Yield deltas, then exactly one StreamDone. Raises ProviderError (classified)."""
        ...

    async def complete(self, request: Request) -> StreamDone: ...

    async def count_tokens(self, request: Request) -> int | None: ...


async def collect(stream: AsyncIterator[StreamEvent]) -> StreamDone:
    """Drain a stream and return its StreamDone (used by `complete` implementations)."""
    done: StreamDone | None = None
    async for event in stream:
        if isinstance(event, StreamDone):
            done = event
    if done is None:
        raise RuntimeError("stream ended without a final message")
    return done
