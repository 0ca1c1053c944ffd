"""Errors every layer may raise or classify. Provider errors carry a `kind` the loop acts on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ErrorKind = Literal[
    "context_overflow", "rate_limit", "overloaded", "auth", "network", "bad_request", "server", "other"
]


class AgentError(Exception):
    """Base of our own errors; `hint` tells the person what to do next."""

    hint: str = ""


class ConfigError(AgentError):
    pass


class SessionError(AgentError):
    pass


@dataclass
class ProviderError(AgentError):
    kind: ErrorKind
    message: str
    status: int | None = None
    retry_after: float | None = None
    hint: str = ""

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limit", "overloaded", "network", "server")


@dataclass
class ContextOverflowError(ProviderError):
    """The API's "prompt is too long: N tokens > M maximum"; `tokens` is N, `maximum` is M."""

    tokens: int = 0
    maximum: int = 0


class ToolError(AgentError):
    """A tool's failure that the model should read (missing file, no unique match, ...)."""


class Interrupted(AgentError):
    """The person stopped the running turn."""


class NothingToGain(AgentError):
    """A manual compaction would not make the context smaller; it was not applied."""

    def __init__(self, before: int, after: int) -> None:
        super().__init__(f"compacting would not shrink the context ({before:,} → {after:,} tokens)")
        self.before, self.after = before, after
