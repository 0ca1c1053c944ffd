"""One model response as the loop reads it: the provider's stream turned into the person's events.

A retry that `discards` (llm/retry.py: the attempt had streamed text or thinking, then failed with an
error worth another try, before any tool call of it began) starts the answer again: the text read so
far is dropped from what the loop keeps, logged as the `retry` event's `discarded`, and the
`Retrying` event tells whoever shows the stream that what it showed of that attempt is not the answer.

When the stream fails for good, `partial` is the text of the last attempt: the loop keeps it in the
conversation, marked `[response interrupted]`, and `cut_off_hint` says so to the person.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_cli.core.errors import ProviderError
from agent_cli.core.events import ContextStatus, ContextUpdate, Event, Retrying, TextDelta, ThinkingDelta
from agent_cli.core.types import Usage
from agent_cli.llm.base import (
    StreamDone,
    StreamEvent,
    StreamRetry,
    StreamText,
    StreamThinking,
    StreamToolStart,
    StreamUsage,
)

if TYPE_CHECKING:
    from agent_cli.session.log import EventLog

PARTIAL_MARK = "[response interrupted]"


@dataclass
class ResponseReader:
    emit: Callable[[Event], None]
    log: EventLog
    status: Callable[[Usage], ContextStatus]  # the context gauge while the response streams
    partial: str = ""  # the text of the attempt streaming now
    tool_started: bool = False  # a tool call of that attempt began

    async def read(self, stream: AsyncIterator[StreamEvent]) -> StreamDone:
        done: StreamDone | None = None
        async for event in stream:
            if isinstance(event, StreamText):
                self.partial += event.text
                self.emit(TextDelta(event.text))
            elif isinstance(event, StreamThinking):
                self.emit(ThinkingDelta(event.text))
            elif isinstance(event, StreamToolStart):
                self.tool_started = True
            elif isinstance(event, StreamUsage):
                self.emit(ContextUpdate(self.status(event.usage)))
            elif isinstance(event, StreamRetry):
                self._retry(event)
            elif isinstance(event, StreamDone):
                done = event
        if done is None:
            raise ProviderError("network", "the response ended before it was complete")
        return done

    def _retry(self, event: StreamRetry) -> None:
        discarded = {"discarded": self.partial} if event.discards else {}
        self.log.append("retry", attempt=event.attempt, delay=event.delay, reason=event.reason, **discarded)
        if event.discards:
            self.partial, self.tool_started = "", False
        self.emit(Retrying(event.attempt, event.delay, event.reason, event.discards))

    def cut_off_hint(self, err: ProviderError) -> str:
        """What the person reads under a failed response: what became of the part they saw."""
        if not self.partial.strip():
            return err.hint or failure_hint(err)
        dropped = " (its unfinished tool call was dropped)" if self.tool_started else ""
        return (
            f"the partial answer is kept in the conversation, marked {PARTIAL_MARK}{dropped}; "
            "send the message again, or say 'continue' to have the model go on from it"
        )


def failure_hint(exc: ProviderError) -> str:
    return {
        "auth": "set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) or run `agent --demo`",
        "rate_limit": "the API is rate limiting; wait a little and send your message again",
        "overloaded": "the API is overloaded; wait a little and send your message again",
        "network": "check your connection (or ANTHROPIC_BASE_URL) and send your message again",
    }.get(exc.kind, "send your message again; /clear starts afresh if it keeps failing")
