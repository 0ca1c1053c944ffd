"""What the loop emits. The TUI and headless output consume these and nothing else.

Each event is a frozen dataclass with a `kind` for serialization (`stream-json`). A permission
request carries an asyncio Future that the front end resolves with a `PermissionDecision`.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from agent_cli.core.types import Message, ToolCall, Usage

PermissionDecision = Literal["allow_once", "allow_always", "deny"]


@dataclass(frozen=True)
class ContextStatus:
    """How full the context is, in the numbers the gauge shows."""

    used: int = 0
    budget: int = 180_000  # usable tokens: min(window, budget_tokens) - reserved output (200k - 20k)
    window: int = 200_000
    reserved: int = 20_000
    warn_fraction: float = 0.75
    auto_fraction: float = 0.835  # as configured: PreCompact hooks run from here (extensions/hooks)
    auto_compact: bool = True
    auto_at: float = 0.0  # where the latest decision put T2/T4, raised by what is worth keeping

    @property
    def fraction(self) -> float:
        return self.used / self.budget if self.budget else 0.0

    @property
    def auto_mark(self) -> float:
        """Where auto-compaction starts as the gauge shows it: the latest decision's threshold, never
        below the configured fraction."""
        return max(self.auto_fraction, self.auto_at)

    def budget_explained(self) -> str:
        """Why the budget is what it is: 200,000 configured shows as 180,000 (20,000 kept for output)."""
        whole = self.budget + self.reserved
        return (
            f"The budget is {self.budget:,} tokens: {whole:,} (budget_tokens, or the model's window when "
            f"smaller) less {self.reserved:,} kept free for the model's answer."
        )


@dataclass(frozen=True)
class EvictionReport:
    """What T1's priced clears have done so far (context/ghosts.py): how many items left and how
    many of them the model came back for (misses), with what that cost in weighted tokens, and the
    arithmetic of the latest decision."""

    clears: int = 0
    cleared_tokens: int = 0
    misses: int = 0
    miss_cost: int = 0
    restored: int = 0  # misses that were edits: the read came back with the edit's result
    forecast: int = 0  # the latest T1 decision: requests it expected still to come ...
    saving: int = 0  # ... the weighted tokens its clears save over them ...
    risk: int = 0  # ... the expected cost of the misses they cause ...
    rewrite: int = 0  # ... and the cache rewrite it paid

    def summary(self) -> str:
        """One line for /context."""
        if not (self.clears or self.misses or self.forecast):
            return "T1 has cleared nothing yet (it clears what is worth less than it costs to keep)"
        line = (
            f"T1 cleared {self.clears} item{'' if self.clears == 1 else 's'} "
            f"({self.cleared_tokens:,} tokens); {self.misses} came back "
            f"(misses, {self.miss_cost:,} weighted tokens"
            + (f"; {self.restored} brought back with an edit" if self.restored else "")
            + ")"
        )
        if self.forecast:
            line += (
                f"; last decision: forecast {self.forecast} requests, saving {self.saving:,}, "
                f"risk {self.risk:,}, rewrite {self.rewrite:,}"
            )
        return line


@dataclass(frozen=True)
class Event:
    kind: str = field(default="event", init=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        for f in fields(self):
            if f.name == "kind" or f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            if isinstance(value, asyncio.Future):
                continue
            if hasattr(value, "to_json"):
                value = value.to_json()
            elif hasattr(value, "__dataclass_fields__"):
                value = asdict(value)
            out[f.name] = value
        return out


@dataclass(frozen=True)
class TurnStarted(Event):
    kind: str = field(default="turn_started", init=False)
    prompt: str = ""


@dataclass(frozen=True)
class RequestStarted(Event):
    """A request is about to be sent (one per model call)."""

    kind: str = field(default="request_started", init=False)
    step: int = 0


@dataclass(frozen=True)
class TextDelta(Event):
    kind: str = field(default="text_delta", init=False)
    text: str = ""


@dataclass(frozen=True)
class ThinkingDelta(Event):
    kind: str = field(default="thinking_delta", init=False)
    text: str = ""


@dataclass(frozen=True)
class AssistantMessage(Event):
    """A complete response, as it was appended to the conversation."""

    kind: str = field(default="assistant", init=False)
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    message_id: str = ""  # the API's id of the response, when it gave one
    model: str = ""  # the model that answered, as the API named it


@dataclass(frozen=True)
class ToolStarted(Event):
    kind: str = field(default="tool_started", init=False)
    call: ToolCall | None = None
    target: str = ""


@dataclass(frozen=True)
class ToolFinished(Event):
    kind: str = field(default="tool_finished", init=False)
    call: ToolCall | None = None
    target: str = ""
    output: str = ""  # what the model sees (possibly a <persisted-output> preview)
    is_error: bool = False
    duration: float = 0.0
    display: str = ""  # extra for people: a diff for edits


@dataclass(frozen=True)
class SubagentProgress(Event):
    """A sub-agent (the `task` tool) moved on: the parent's task line shows it, live.

    `call_id` is the parent's `task` tool_use id; `step` what the child does now (a tool and its
    target, or "answering"); `steps` every step so far, for the expanded line."""

    kind: str = field(default="subagent", init=False)
    call_id: str = ""
    agent: str = ""
    description: str = ""
    step: str = ""
    steps: tuple[str, ...] = ()
    turns: int = 0  # model calls so far
    tokens: int = 0  # the child's context in use
    done: bool = False


@dataclass(frozen=True)
class PermissionRequest(Event):
    kind: str = field(default="permission_request", init=False)
    call: ToolCall | None = None
    target: str = ""
    reason: str = ""  # why it asks
    rule: str = ""  # what "always allow" would save, in words
    detail: str = ""  # the full command (bash) or the diff (edit/write) the person judges
    detail_kind: str = ""  # "command" | "diff" | ""
    cwd: str = ""  # where a command runs
    future: asyncio.Future[PermissionDecision] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class PermissionDenied(Event):
    kind: str = field(default="permission_denied", init=False)
    call: ToolCall | None = None
    target: str = ""
    reason: str = ""


@dataclass(frozen=True)
class UsageUpdate(Event):
    kind: str = field(default="usage", init=False)
    usage: Usage = field(default_factory=Usage)  # this response
    total: Usage = field(default_factory=Usage)  # the session so far
    cost_usd: float = 0.0  # the session so far
    cache_hit_rate: float = 0.0


@dataclass(frozen=True)
class ContextUpdate(Event):
    kind: str = field(default="context", init=False)
    status: ContextStatus = field(default_factory=ContextStatus)


@dataclass(frozen=True)
class Compacted(Event):
    kind: str = field(default="compaction", init=False)
    tier: str = ""
    trigger: str = ""
    before: int = 0
    after: int = 0
    summary: str = ""
    refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompactionMeasured(Event):
    """The server's own figures for the last compaction of `tier`, from the response after it: the
    prompt's tokens before (the server's count in its "prompt is too long" error) and after (the
    next response's input usage). `estimated_after` is what the engine had estimated."""

    kind: str = field(default="compaction_measured", init=False)
    tier: str = ""
    before: int = 0
    after: int = 0
    estimated_after: int = 0


@dataclass(frozen=True)
class Retrying(Event):
    kind: str = field(default="retrying", init=False)
    attempt: int = 0
    delay: float = 0.0
    reason: str = ""
    discarded: bool = False  # the text and thinking streamed since the last retry are not the answer


@dataclass(frozen=True)
class Notice(Event):
    kind: str = field(default="notice", init=False)
    text: str = ""
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class ErrorEvent(Event):
    kind: str = field(default="error", init=False)
    error_kind: str = ""
    message: str = ""
    hint: str = ""


@dataclass(frozen=True)
class TurnFinished(Event):
    kind: str = field(default="turn_finished", init=False)
    stop_reason: str = ""  # end_turn, max_turns, interrupted, error, command
    result: str = ""
    num_turns: int = 0
    is_error: bool = False


@dataclass(frozen=True)
class CommandResult(Event):
    """The outcome of a slash command: `text` for people, `data` for programs (/context, /cost)."""

    kind: str = field(default="command", init=False)
    name: str = ""
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False


@dataclass(frozen=True)
class ShellInfo:
    """A background shell (`bash` with `run_in_background`), as the front ends list it."""

    id: str
    command: str
    description: str = ""
    status: Literal["running", "exited", "killed"] = "running"
    exit_code: int | None = None
    output_chars: int = 0  # everything it printed so far
    dropped_chars: int = 0  # past the storage ceiling (the store keeps the head and the tail)
    started_at: float = 0.0

    @property
    def running(self) -> bool:
        return self.status == "running"

    def status_text(self) -> str:
        if self.status == "exited":
            return f"exited {self.exit_code}" if self.exit_code is not None else "exited"
        return self.status


@dataclass(frozen=True)
class ShellsChanged(Event):
    """A background shell started, ended or was killed; `shells` is every one this session has."""

    kind: str = field(default="shells", init=False)
    shells: tuple[ShellInfo, ...] = ()

    @property
    def running(self) -> int:
        return sum(1 for shell in self.shells if shell.running)
