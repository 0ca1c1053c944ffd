"""Incremental token accounting of the view (DESIGN §5): one raw count per view message, so appending
costs the new message and a compaction only its spans; the context in use is the last request's
billed input plus our estimate of what changed since: what was added, and what a compaction or a
recount changed of the messages that request held (only the change is estimated, never the whole).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.context.model import SpanReplacement
from agent_cli.context.offload import category
from agent_cli.context.tokens import BLOCK_OVERHEAD, MESSAGE_OVERHEAD, TokenCounter
from agent_cli.core.images import base64_tokens
from agent_cli.core.types import Block, Message

BREAKDOWN = (
    "system",
    "skills",
    "tools",
    "user_context",
    "messages",
    "tool_results",
    "summaries",
    "attachments",
    "images",
)


class ViewAccounting:
    """Token counts of a view the engine owns; it reports every change of the view here."""

    def __init__(self, counter: TokenCounter, raw_base: int) -> None:
        self.counter = counter
        self.raw: list[int] = []  # raw token count of each view message
        self.raw_total = 0
        self.raw_base = raw_base  # system prompt and tools
        self.billed: tuple[int, int] | None = None  # (billed input, view length of that request)
        self.epoch = 0  # bumped when the messages a built request holds change
        self.built_length = 0  # view length of the last request built

    # -- changes of the view -----------------------------------------------------------------------
    def count(self, index: int, message: Message, *, billed: bool = True) -> None:
        """The view's message at `index` is now `message` (index == len: a new last message).
        `billed=False`: the last bill already counted it as it is now (thinking the wire left out)."""
        if index == len(self.raw):
            self.raw.append(0)
        count = self.counter.raw_message(message)
        if billed:
            self._rebill(index, index + 1, count - self.raw[index], 0)
        self.raw_total += count - self.raw[index]
        self.raw[index] = count

    def replace(self, spans: Sequence[SpanReplacement]) -> None:
        """A compaction's spans (sorted by start) replaced their messages. The last bill stays the
        anchor: what the spans changed of the messages it held moves it (a span reaching past them
        leaves no anchor)."""
        for span in reversed(spans):
            counts = [self.counter.raw_message(m) for m in span.messages]
            delta = sum(counts) - sum(self.raw[span.start : span.end])
            self._rebill(span.start, span.end, delta, len(counts) - (span.end - span.start))
            self.raw_total += delta
            self.raw[span.start : span.end] = counts
        if spans:
            self._rebuilt(min(span.start for span in spans))

    def _rebill(self, start: int, end: int, delta: int, shift: int) -> None:
        """Messages `start:end` changed by `delta` raw tokens and `shift` messages."""
        if self.billed is None or start >= self.billed[1] or not (delta or shift):
            return
        billed, length = self.billed
        if end > length:
            self.billed = None
            return
        change = self.counter.scale(abs(delta))
        self.billed = (max(0, billed + (change if delta > 0 else -change)), length + shift)

    def _rebuilt(self, start: int) -> None:
        if start < self.built_length:
            self.epoch += 1
            self.built_length = min(self.built_length, start)

    def invalidate_from(self, start: int) -> None:
        """Messages from `start` on changed: billed usage before it stays valid."""
        if self.billed is not None and start < self.billed[1]:
            self.billed = None
        self._rebuilt(start)

    def prefix_changed(self, raw_base: int | None = None) -> None:
        """Another model or tool list: the last billed count no longer describes the next request."""
        if raw_base is not None:
            self.raw_base = raw_base
        self.billed = None
        self.epoch += 1

    # -- what was billed -----------------------------------------------------------------------------
    def observe(self, billed: int, epoch: object, length: object, view_length: int) -> None:
        """A response to a request built at (`epoch`, `length`) was billed `billed` input tokens."""
        if epoch == self.epoch and isinstance(length, int) and length <= view_length:
            self.billed = (billed, length)

    def resume(self, billed: int, length: int) -> None:
        """The view's first `length` messages were billed `billed` (a resumed session's last request)."""
        self.counter.calibrate(self.raw_base + sum(self.raw[:length]), billed)
        self.billed = (billed, length)

    # -- figures -------------------------------------------------------------------------------------
    def scaled(self) -> list[int]:
        """Each view message's tokens, calibrated."""
        return [self.counter.scale(r) for r in self.raw]

    def stable(self, counts: Sequence[int], previous: int | None) -> int:
        """Tokens of the prefix the last request already sent (system, tools, messages to `previous`)."""
        return self.counter.scale(self.raw_base) + (
            sum(counts[: previous + 1]) if previous is not None else 0
        )

    def estimate(self) -> int:
        """The whole next request by our own count (no billed usage in it)."""
        return self.counter.scale(self.raw_base + self.raw_total)

    def used(self) -> int:
        if self.billed is not None:
            billed, length = self.billed
            return billed + self.counter.scale(sum(self.raw[length:]))
        return self.estimate()

    def predicted_after(self, spans: Sequence[SpanReplacement]) -> int:
        """The size the context would have with `spans` replaced, by our own count."""
        delta = sum(
            sum(self.counter.raw_message(m) for m in span.messages) - sum(self.raw[span.start : span.end])
            for span in spans
        )
        return self.counter.scale(self.raw_base + self.raw_total + delta)

    def predicted_growth(self, spans: Sequence[SpanReplacement]) -> int:
        """How much `spans` would add (negative: save), by our own count on both sides; `used()` may
        be the API's count, which `predicted_after` cannot be compared with."""
        return self.predicted_after(spans) - self.predicted_after(())

    def breakdown(
        self, view: Sequence[Message], tools_raw: int, budget: int, reserved: int, skills_raw: int = 0
    ) -> dict[str, int]:
        """Tokens by category; with free and reserved they sum to the usable window (budget + reserved).
        `skills_raw`: the skill listing's share of the system prompt, shown on its own."""
        raw = dict.fromkeys(BREAKDOWN, 0)
        raw["tools"] = tools_raw
        raw["skills"] = skills_raw
        raw["system"] = self.raw_base - tools_raw - skills_raw
        for message in view:
            raw["messages"] += MESSAGE_OVERHEAD
            for block in message.blocks:
                image = _image_raw(block)  # an image block, or the image a tool result carries
                raw["images"] += image
                raw[category(block)] += self.counter.raw_block(block) - image
        used = self.used()
        total = sum(raw.values()) or 1
        parts = {k: round(v * used / total) for k, v in raw.items()}
        biggest = max(parts, key=lambda k: parts[k])
        parts[biggest] += used - sum(parts.values())
        parts["free"] = max(0, budget - used)
        parts["reserved"] = reserved
        return parts


def _image_raw(block: Block) -> int:
    if block.type == "image" or (block.type == "tool_result" and block.data):
        return BLOCK_OVERHEAD + base64_tokens(block.data)
    return 0
