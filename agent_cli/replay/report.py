"""The replay's result: a JSON shape for programs and a rich table for people."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_cli.core.types import Usage
from agent_cli.replay.claude_code import Transcript
from agent_cli.replay.fidelity import Fidelity

WEIGHTS = {"uncached": 100, "write": 125, "write_1h": 200, "read": 10}  # per 100 input tokens


def weighted_input(uncached: int, cache_write: int, cache_read: int, cache_write_1h: int = 0) -> int:
    """Input cost in uncached-token units (a write 1.25x, or 2x for the part of `cache_write` kept an
    hour, `cache_write_1h`; a read 0.1x), rounded down (exact integers)."""
    hour = min(cache_write_1h, cache_write)
    total = (
        uncached * WEIGHTS["uncached"]
        + (cache_write - hour) * WEIGHTS["write"]
        + hour * WEIGHTS["write_1h"]
        + cache_read * WEIGHTS["read"]
    )
    return total // 100


@dataclass(frozen=True)
class CompactionRecord:
    tier: str
    trigger: str
    before: int
    after: int

    def to_json(self) -> dict[str, Any]:
        return {"tier": self.tier, "trigger": self.trigger, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class TokenTotals:
    uncached_input: int = 0
    cache_write: int = 0
    cache_read: int = 0
    output: int = 0
    cache_write_1h: int = 0  # of `cache_write`, the part kept an hour

    @property
    def weighted_input(self) -> int:
        return weighted_input(self.uncached_input, self.cache_write, self.cache_read, self.cache_write_1h)

    @property
    def total_input(self) -> int:
        return self.uncached_input + self.cache_write + self.cache_read

    def plus(self, usage: Usage) -> TokenTotals:
        return TokenTotals(
            uncached_input=self.uncached_input + usage.input_tokens,
            cache_write=self.cache_write + usage.cache_creation_input_tokens,
            cache_read=self.cache_read + usage.cache_read_input_tokens,
            output=self.output + usage.output_tokens,
            cache_write_1h=self.cache_write_1h + usage.cache_creation_1h_input_tokens,
        )

    def to_json(self) -> dict[str, int]:
        out = {
            "uncached_input": self.uncached_input,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
            "output": self.output,
        }
        if self.cache_write_1h:
            out["cache_write_1h"] = self.cache_write_1h
        return out


@dataclass(frozen=True)
class Integrity:
    orphan_tool_uses: int = 0
    orphan_tool_results: int = 0
    over_budget_requests: int = 0

    @property
    def ok(self) -> bool:
        return not (self.orphan_tool_uses or self.orphan_tool_results or self.over_budget_requests)

    def to_json(self) -> dict[str, int]:
        return {
            "orphan_tool_uses": self.orphan_tool_uses,
            "orphan_tool_results": self.orphan_tool_results,
            "over_budget_requests": self.over_budget_requests,
        }


def api_orphans(messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(tool_uses never answered in the next user message, tool_results without their tool_use)."""
    orphan_uses = orphan_results = 0
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "assistant":
            uses = {b.get("id") for b in content if b.get("type") == "tool_use"}
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered: set[Any] = set()
            if following is not None and isinstance(following.get("content"), list):
                answered = {
                    b.get("tool_use_id") for b in following["content"] if b.get("type") == "tool_result"
                }
            if following is not None:  # a trailing call is answered by the response being requested
                orphan_uses += len(uses - answered)
        else:
            previous = messages[index - 1] if index else None
            calls: set[Any] = set()
            if (
                previous is not None
                and previous.get("role") == "assistant"
                and isinstance(previous.get("content"), list)
            ):
                calls = {b.get("id") for b in previous["content"] if b.get("type") == "tool_use"}
            orphan_results += sum(
                1 for b in content if b.get("type") == "tool_result" and b.get("tool_use_id") not in calls
            )
    return orphan_uses, orphan_results


@dataclass(frozen=True)
class Reference:
    """What the recorded agent really spent, from the recorded usage (one count per response)."""

    weighted_input: int
    cache_read: int
    cache_write: int
    peak_context_tokens: int
    requests: int
    cache_write_1h: int = 0  # of `cache_write`, the part kept an hour (Claude Code's `1h` cache)

    def to_json(self) -> dict[str, int]:
        out = {
            "weighted_input": self.weighted_input,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "peak_context_tokens": self.peak_context_tokens,
            "requests": self.requests,
        }
        if self.cache_write_1h:
            out["cache_write_1h"] = self.cache_write_1h
        return out


def reference(transcript: Transcript) -> Reference | None:
    """What the recorded agent spent, from its usage (one count per response); None without usage."""
    known = [r.usage for r in transcript.requests if r.usage is not None]
    if not known:
        return None
    uncached = sum(u.input_tokens for u in known)
    write = sum(u.cache_creation_input_tokens for u in known)
    hour = sum(u.cache_creation_1h_input_tokens for u in known)
    read = sum(u.cache_read_input_tokens for u in known)
    return Reference(
        weighted_input=weighted_input(uncached, write, read, hour),
        cache_read=read,
        cache_write=write,
        peak_context_tokens=max(u.total_input for u in known),
        requests=len(known),
        cache_write_1h=hour,
    )


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-fraction * len(ordered) // 1))))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Misses:
    """Cleared items the session came back for (context/ghosts.py): recalls of a cleared ref and, in
    a recorded session, reads and edits of a file whose earlier read the policy had cleared."""

    count: int = 0
    cost: int = 0  # weighted tokens: each one's extra request reading the context, the item written again
    clears: int = 0  # items cleared (T1)
    restored: int = 0  # of `count`: edits of a cleared file, which brought its read back (restore.py)

    def to_json(self) -> dict[str, int]:
        return {"count": self.count, "cost": self.cost, "clears": self.clears, "restored": self.restored}


@dataclass(frozen=True)
class ReplayResult:
    file: str
    policy: str
    requests: int
    peak_context_tokens: int
    mean_context_tokens: int
    compactions: tuple[CompactionRecord, ...]
    tokens: TokenTotals
    integrity: Integrity
    compacted_items: int
    recoverable_items: int
    median_abs_error_pct: float | None = None
    p95_abs_error_pct: float | None = None
    reference: Reference | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    context_tokens: tuple[int, ...] = ()  # per request (not in the JSON)
    calibration_factor: float = 1.0  # our counter's factor for this session (not in the JSON)
    fidelity: Fidelity = Fidelity(0, 0, 0, 0)  # recorded edits whose text the policy hid (fidelity.py)
    misses: Misses = Misses()

    @property
    def weighted_input(self) -> int:
        return self.tokens.weighted_input

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "policy": self.policy,
            "requests": self.requests,
            "peak_context_tokens": self.peak_context_tokens,
            "mean_context_tokens": self.mean_context_tokens,
            "compactions": [c.to_json() for c in self.compactions],
            "tokens": self.tokens.to_json(),
            "weighted_input": self.weighted_input,
            "integrity": self.integrity.to_json(),
            "recall": {"compacted_items": self.compacted_items, "recoverable_items": self.recoverable_items},
            "estimator": {
                "median_abs_error_pct": self.median_abs_error_pct,
                "p95_abs_error_pct": self.p95_abs_error_pct,
            },
            "fidelity": self.fidelity.to_json(),
            "misses": self.misses.to_json(),
            "warnings": list(self.warnings),
        }
        if self.reference is not None:
            out["reference"] = self.reference.to_json()
        return out


def _ratio(ours: int, theirs: int | None) -> str:
    if not theirs:
        return ""
    return f"{ours / theirs:.2f}x"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def render_table(result: ReplayResult, console: Console) -> None:
    """Print the result for people: our numbers next to the recorded agent's, with ratios."""
    ref = result.reference
    table = Table(title=f"replay {result.file} · policy {result.policy}", title_justify="left")
    table.add_column("metric")
    table.add_column("replayed", justify="right")
    if ref is not None:
        table.add_column("recorded (Claude Code)", justify="right")
        table.add_column("ratio", justify="right")

    def row(name: str, ours: int | str, theirs: int | None = None) -> None:
        shown = f"{ours:,}" if isinstance(ours, int) else ours
        if ref is None:
            table.add_row(name, shown)
        else:
            recorded = "" if theirs is None else f"{theirs:,}"
            ratio = _ratio(ours, theirs) if isinstance(ours, int) else ""
            table.add_row(name, shown, recorded, ratio)

    row("requests", result.requests, ref.requests if ref else None)
    row("weighted input", result.weighted_input, ref.weighted_input if ref else None)
    row("peak context", result.peak_context_tokens, ref.peak_context_tokens if ref else None)
    row("mean context", result.mean_context_tokens)
    row("cache read", result.tokens.cache_read, ref.cache_read if ref else None)
    row("cache write", result.tokens.cache_write, ref.cache_write if ref else None)
    row("uncached input", result.tokens.uncached_input)
    row("output (recorded)", result.tokens.output)
    tiers: dict[str, int] = {}
    for record in result.compactions:
        tiers[record.tier] = tiers.get(record.tier, 0) + 1
    row("compactions", ", ".join(f"{t} x{n}" for t, n in sorted(tiers.items())) or "none")
    integrity = result.integrity
    row(
        "integrity (orphan uses / results / over budget)",
        f"{integrity.orphan_tool_uses} / {integrity.orphan_tool_results} / {integrity.over_budget_requests}",
    )
    row("recall (recoverable / compacted)", f"{result.recoverable_items} / {result.compacted_items}")
    fid = result.fidelity
    row("edits (blind / visible unmanaged / all)", f"{fid.blind} / {fid.visible_unmanaged} / {fid.edits}")
    row("adjusted weighted input", fid.adjusted_weighted_input, ref.weighted_input if ref else None)
    row(
        "misses (count / cost / clears)",
        f"{result.misses.count} / {result.misses.cost:,} / {result.misses.clears}",
    )
    row(
        "estimator error (median / p95)",
        f"{_pct(result.median_abs_error_pct)} / {_pct(result.p95_abs_error_pct)}",
    )
    console.print(table)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
