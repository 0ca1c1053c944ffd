"""The engine's shared vocabulary: configuration, compactions, and the seams between tiers and policy.

A compaction is data: which spans of the view it replaces and with what. The session log stores it,
and `apply_compaction` replays it, so a resumed session rebuilds the exact view.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agent_cli.context.eviction import Bet
from agent_cli.core.types import Block, Message

if TYPE_CHECKING:
    from agent_cli.context.reuse import Predictor, ReuseStats

TierName = Literal["T0", "T1", "T2", "T3", "T4", "T5", "digest", "clear"]


MIN_BUDGET_TOKENS = 1_000  # a smaller budget leaves no room for even the system prompt


@dataclass(frozen=True)
class ContextConfig:
    """Every threshold of DESIGN §6, configurable ([context] in config.toml)."""

    budget_tokens: int = 200_000  # the budget is min(window, this) - reserved output
    reserved_output_cap: int = 20_000
    warn_fraction: float = 0.75
    auto_compact: bool = True
    auto_fraction: float = 0.835  # T4 (or T2 when the note is fresh)
    # T0
    offload_result_chars: int = 30_000
    offload_turn_chars: int = 200_000
    offload_paste_chars: int = 50_000
    preview_chars: int = 2_000
    output_ceiling_chars: int = 100_000_000  # a tool's output is stored in full up to this (then head+tail)
    # T1: every clear a priced bet (context/eviction.py); the constants below are chosen by
    # leave-one-out over real sessions (bench/loo.py, bench/RESULTS.md)
    # what acting without a cleared text costs beyond re-reading it, as a share of the usable budget:
    # putting a wrong act right reads the context again, and the context is as large as the budget
    # lets it grow (1/3: 60k tokens of the default 180k)
    miss_penalty_fraction: float = 1 / 3
    forecast_ratio: float = 0.15  # requests still to come = this × requests made so far (Lindy) ...
    forecast_cap: int = 0  # ... at most this many (0: no cap)
    micro_cap_tokens: int = 0  # T1 makes room past this many tokens as past the auto threshold (0: off)
    hits_prior_weight: float = 2.0  # hits the fitted prior counts as in a class's online factor (hits.py)
    micro_keep_recent: int = 3  # the "masking" policy's unpriced T1 keeps this many recent results
    micro_keep_chars: int = 120
    micro_collapse: bool = True  # old cleared pairs become digest lines (tiers/collapse.py)
    micro_coarse_calls: int = 40  # digest lines older than this many calls: one line per message (0: off)
    cache_ttl_seconds: float = 300.0  # 5 min; 3600 with cache_ttl = "1h"
    # T3
    region_fraction: float = 0.70
    region_target_fraction: float = 0.50
    region_ratio: float = 0.2
    # T4
    tail_fraction: float = 0.20  # of the auto threshold
    summarizer_input_tokens: int = 150_000  # larger middles are summarized in chunks
    prune_output_chars: int = 2_000  # T5 cuts a last huge result to about this (head+tail, recallable)
    # T5
    emergency_margin_tokens: int = 2_000
    emergency_target_fraction: float = 0.5  # T5 frees down to this share of the limit, in one step
    emergency_retries: int = 3
    # re-attach after T2/T4
    reattach_files: int = 5
    reattach_file_tokens: int = 5_000
    # session memory
    memory_first_tokens: int = 10_000
    memory_update_tokens: int = 5_000
    memory_update_tool_calls: int = 3
    memory_max_tokens: int = 12_000
    memory_max_share: float = 0.025  # of the session's weighted input, at most, for note updates
    tool_trace: Literal["keep", "digest"] = "keep"
    cache_ttl: Literal["5m", "1h"] = "5m"
    policy: str = "default"

    def budget(self, window: int, max_output: int) -> tuple[int, int]:
        """(usable budget, reserved output) for a model.

        DESIGN §6 reserves min(max_output, 20k); we also cap the reserve at a fifth of the budget, so a
        small budget (20k, to exercise the tiers) still leaves room for the conversation itself.
        """
        total = min(window, self.budget_tokens)
        reserved = min(max_output, self.reserved_output_cap, total // 5)
        return max(1, total - reserved), reserved


@dataclass(frozen=True)
class SpanReplacement:
    """Replace `messages[start:end]` (indices in the view before the compaction) with `messages`."""

    start: int
    end: int
    messages: tuple[Message, ...]

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "messages": [m.to_json() for m in self.messages]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpanReplacement:
        return cls(
            int(data["start"]), int(data["end"]), tuple(Message.from_json(m) for m in data["messages"])
        )


@dataclass(frozen=True)
class Compaction:
    tier: TierName
    trigger: str  # auto, manual, cache_cold, pressure, overflow, summarizer_failed, ingest, digest, ...
    replacements: tuple[SpanReplacement, ...]
    before: int = 0  # tokens in use before
    after: int = 0  # tokens in use after
    refs: tuple[str, ...] = ()  # every ref a recall can bring back
    summary: str = ""  # the summary text (T2/T4/T5), shown by the UI
    originals: dict[str, str] = field(default_factory=dict)  # ref -> original text, written to the store
    bet: Bet | None = None  # T1: the priced decision behind it (forecast, saving, risk, rewrite)

    @property
    def routine(self) -> bool:
        """Not worth a line in the transcript: T0's offloads (the UI shows them on their tool call),
        and a T1 clear under pressure that rewrote none of the cache (only an applied edit's old
        text the next request would have written: tiers/pricing.py:candidates_of)."""
        if self.tier == "T0":
            return True
        return (
            self.tier == "T1" and self.trigger == "pressure" and self.bet is not None and not self.bet.rewrite
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "trigger": self.trigger,
            "before": self.before,
            "after": self.after,
            "refs": list(self.refs),
            "summary": self.summary,
            "replacements": [r.to_json() for r in self.replacements],
            **({"bet": self.bet.to_json()} if self.bet is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Compaction:
        return cls(
            tier=data["tier"],
            trigger=data.get("trigger", ""),
            replacements=tuple(SpanReplacement.from_json(r) for r in data.get("replacements", [])),
            before=int(data.get("before", 0)),
            after=int(data.get("after", 0)),
            refs=tuple(data.get("refs", [])),
            summary=data.get("summary", ""),
            bet=Bet.from_json(data["bet"]) if isinstance(data.get("bet"), dict) else None,
        )


def apply_compaction(messages: Sequence[Message], compaction: Compaction) -> list[Message]:
    """The view after `compaction`. Spans must not overlap; they are applied from the end."""
    out = list(messages)
    spans = sorted(compaction.replacements, key=lambda r: r.start, reverse=True)
    previous_start = len(out) + 1
    for span in spans:
        if not (0 <= span.start <= span.end <= len(out)) or span.end > previous_start:
            raise ValueError(f"bad span {span.start}:{span.end} for a view of {len(out)} messages")
        out[span.start : span.end] = list(span.messages)
        previous_start = span.start
    return out


# -- the seams between the engine, the tiers and the policy ----------------------------------------

Summarizer = Callable[[str, str], Awaitable[str]]
"""summarize(system_prompt, user_content) -> text. Raises on failure (the caller falls back)."""


class TokenCount(Protocol):
    def message(self, message: Message) -> int: ...

    def text(self, text: str) -> int: ...


@dataclass
class TierContext:
    """Everything a tier may look at. Built by the engine for each decision."""

    config: ContextConfig
    counter: TokenCount
    used: int  # tokens in use now (estimate)
    budget: int  # usable budget
    now: float  # clock (seconds); replay passes recorded time
    last_request_at: float | None  # when the previous request was sent (cache TTL)
    summarizer: Summarizer | None = None
    memory_note: str = ""  # the session-memory note, "" when none
    memory_covers: int = 0  # the note covers view messages [0:memory_covers)
    ledger_text: str = ""  # the deterministic ledger, rendered
    focus: str = ""  # /compact focus
    tool_compactable: Callable[[str], bool] = lambda name: True
    prompts: Callable[[str], str] = lambda name: ""  # prompt template by name (prompts/<name>.md)
    reattach: Callable[[], list[Block]] = lambda: []  # pinned blocks to put back after T2/T4 (todo, files)
    reuse: ReuseStats | None = None  # what this session's misses taught (context/ghosts.py)
    cached: tuple[int, ...] | None = None  # view messages ending a prefix the API has cached (None: unknown)
    predictor: Predictor | None = None  # None: context/reuse.py's predict (replay's oracle knows the future)
    kept_before: frozenset[str] = frozenset()  # calls earlier decisions counted as worth keeping (policy.py)
    forced_before: bool = False  # the latest decision's T1 had to make room too (policy.py)
    fixed: int = 0  # the system prompt and tools: in every request, and no tier can take them


class Tier(Protocol):
    name: TierName

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        """A compaction of `view`, or None when this tier has nothing worth doing."""
        ...


def shift_index(compaction: Compaction, index: int) -> int:
    """Where view index `index` (a boundary, e.g. the memory note's coverage) lands after `compaction`.
    A boundary inside a replaced span moves to the span's start: it never claims more than it covered."""
    out = index
    for span in compaction.replacements:
        if span.end <= index:
            out += len(span.messages) - (span.end - span.start)
        elif span.start < index:
            out -= index - span.start
    return max(0, out)
