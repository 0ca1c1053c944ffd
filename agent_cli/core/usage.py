"""What requests cost: a response's token usage (`Usage`, ours or the API's shape) and what a
session has spent so far (`Totals`). Re-exported by core/types.py, where every layer finds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0  # of the cache writes, those kept an hour (priced higher)

    @property
    def total_input(self) -> int:
        """Everything the model read: uncached + cache write + cache read."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    @property
    def writes_by_ttl(self) -> tuple[int, int]:
        """(cache writes kept 5 minutes, those kept an hour): each is priced differently."""
        hour = min(self.cache_creation_1h_input_tokens, self.cache_creation_input_tokens)
        return self.cache_creation_input_tokens - hour, hour

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_creation_1h_input_tokens + other.cache_creation_1h_input_tokens,
        )

    def to_json(self) -> dict[str, int]:
        out = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }
        if self.cache_creation_1h_input_tokens:
            out["cache_creation_1h_input_tokens"] = self.cache_creation_1h_input_tokens
        return out

    @classmethod
    def from_json(cls, data: Any) -> Usage:
        """Ours, or the API's (`cache_creation` splits writes by TTL); what is not a count counts 0."""
        data = data if isinstance(data, dict) else {}
        hour = data.get("cache_creation_1h_input_tokens")
        if hour is None and isinstance(split := data.get("cache_creation"), dict):
            hour = split.get("ephemeral_1h_input_tokens")
        keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        return cls(*(_count(data.get(key)) for key in keys), _count(hour))


def _count(value: Any) -> int:
    return int(value) if type(value) in (int, float) and 0 <= value < 1e15 else 0  # not bool, NaN, inf


@dataclass
class Totals:
    """What the session has spent so far."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    requests: int = 0  # the conversation's own requests
    side_requests: int = 0  # summaries and session-memory notes (agent/side_requests.py)
    subagent_requests: int = 0  # every request of the sub-agents it started

    @property
    def all_requests(self) -> int:
        return self.requests + self.side_requests + self.subagent_requests

    def request_counts(self) -> dict[str, int]:
        """`requests`: every one sent; then by kind."""
        return {
            "requests": self.all_requests,
            "conversation_requests": self.requests,
            "side_requests": self.side_requests,
            "subagent_requests": self.subagent_requests,
        }

    def cache_hit_rate(self) -> float:
        total = self.usage.total_input
        return self.usage.cache_read_input_tokens / total if total else 0.0
