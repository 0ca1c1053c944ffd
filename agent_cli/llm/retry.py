"""One retry policy for a provider's streamed request (the SDK's own retries are turned off).

`stream_with_retries` runs attempts: an attempt that fails with a retryable `ProviderError` is tried
again after a `StreamRetry` and a wait (the server's retry-after, capped, or exponential backoff with
jitter), also when it had streamed text or thinking already: that `StreamRetry` says `discards=True`,
and whoever shows the stream drops what it got of that attempt (the next one starts the answer again).
An attempt that fails once a tool call of it has started, or with an error that is not retryable, or
past `max_retries`, is raised with a message saying so (provider_errors.final_error).

A stream that gives nothing for `idle_timeout` seconds (no answer, or an answer that stopped; 90 s
unless the person configured `stream_idle_timeout`) is abandoned as `StreamStalled`, a network error:
retried like one, its `StreamRetry` saying "no data from the API for 90 s".
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_cli.core.errors import ProviderError
from agent_cli.llm.base import StreamEvent, StreamRetry, StreamToolStart
from agent_cli.llm.provider_errors import final_error, retry_reason, should_retry

RETRY_AFTER_CAP = 60.0  # the longest server-requested wait we honour
STALL_TIMEOUT = 90.0  # seconds a stream may give nothing before it is abandoned (0 or None: never)


class StreamStalled(ProviderError):
    """The stream gave nothing for `idle_timeout` seconds."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            "network",
            f"no data from the API for {seconds:g} s",
            hint="the API or the connection stalled; send the message again",
        )


@dataclass
class Backoff:
    max_retries: int = 4
    base: float = 1.0
    cap: float = 30.0
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds before attempt `attempt + 1`: the server's wish (capped) or backoff with jitter."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, RETRY_AFTER_CAP)
        ceiling = min(self.cap, self.base * 2 ** (attempt - 1))
        return ceiling * (0.5 + 0.5 * self.rng.random())


class Attempt(Protocol):
    """One try: its events, and whether content (text, thinking, a tool call) was streamed."""

    content_started: bool

    def events(self) -> AsyncIterator[StreamEvent]: ...


async def stream_with_retries(
    new_attempt: Callable[[], Attempt], backoff: Backoff, *, idle_timeout: float | None = None
) -> AsyncIterator[StreamEvent]:
    """Yield the events of the first attempt that succeeds, with a StreamRetry before each wait."""
    tries = 0
    while True:
        attempt = new_attempt()
        tool_started = False  # a tool call of this attempt began: it is not tried again
        try:
            async with aclosing(attempt.events()) as events:
                async for event in _watched(events, idle_timeout):
                    tool_started = tool_started or isinstance(event, StreamToolStart)
                    yield event
            return
        except ProviderError as err:
            if tool_started or not should_retry(err) or tries >= backoff.max_retries:
                final = final_error(err, tries, attempt.content_started)
                if final is err:
                    raise
                raise final from err
            tries += 1
            delay = backoff.delay(tries, err.retry_after)
            reason = err.message if isinstance(err, StreamStalled) else retry_reason(err)
            yield StreamRetry(tries, delay, reason, discards=attempt.content_started)
            await backoff.sleep(delay)


async def _watched(events: AsyncIterator[StreamEvent], idle: float | None) -> AsyncIterator[StreamEvent]:
    """`events`, raising StreamStalled when the next one takes longer than `idle` seconds (the time
    the consumer spends between two events does not count)."""
    if not idle or idle <= 0:
        async for event in events:
            yield event
        return
    while True:
        try:
            async with asyncio.timeout(idle):
                event = await anext(events)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise StreamStalled(idle) from None
        yield event
