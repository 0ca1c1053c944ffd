"""The policy: the only place that decides which tier runs (DESIGN §6).

`decide` runs, in order, on the view after each previous compaction (ctx.used following each
`after`): digest (tool_trace = "digest", at a new person's message) · T1 when the cache is cold · T1
under pressure · T3 at >= region_fraction (when a summarizer exists) · at >= auto_fraction T2 when
the session-memory note is fresh, else T4. `auto_compact = False` turns T2–T4 off; T1 stays (it is
lossless by recall) and T5 always answers an overflow.

Anti-thrash: when two automatic T2/T4 compactions in a row leave usage above the auto threshold,
automatic T2–T4 stop and `halted_reason` says why; a manual compaction that gets below the threshold,
or `reset()`, resumes them.

Named policies (`make_policy`), so replay compares them on the same work:
- "default": all of the above;
- "default+subtask": also T3 at a sub-task boundary (a todo item just completed, usage >= half the
  auto threshold: tiers/subtask.py);
- "none": nothing but T5;
- "claude-code": only T4 at 83.5%, nothing earlier;
- "masking": every turn the last 10 tool results are kept and older ones cleared (T1, no conditions);
- "api-clear", "api-compact": what the Anthropic API's context editing and server-side compaction
  would do with their documented defaults (tiers/api_edits.py), so ours is compared with the free
  alternatives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_cli.context.model import Compaction, Tier, TierContext, apply_compaction, shift_index
from agent_cli.context.tiers import Digest, Emergency, FullCompact, MemoryCompact, MicroCompact, RegionCompact
from agent_cli.context.tiers.api_edits import ApiClear, ApiCompact
from agent_cli.context.tiers.micro import is_cache_cold
from agent_cli.context.tiers.pricing import auto_threshold, valued_tokens, worth_keeping
from agent_cli.context.tiers.selection import is_person_message
from agent_cli.context.tiers.subtask import SubtaskCompact
from agent_cli.core.types import Message

LOSSY = ("T2", "T3", "T4")


@dataclass(frozen=True)
class PolicySpec:
    name: str
    micro: bool = True  # T1 on a cold cache and under pressure
    masking_keep: int | None = None  # T1 every turn, keeping this many recent results
    region: bool = True  # T3
    memory: bool = True  # T2
    full: bool = True  # T4
    auto_fraction: float | None = None  # None: config.auto_fraction
    digest: bool = True  # honour config.tool_trace == "digest"
    subtask: bool = False  # T3 at a finished todo item, above half the auto threshold (tiers/subtask.py)
    api_clear: bool = False  # the API's context editing instead of our tiers (tiers/api_edits.py)
    api_compact: bool = False  # the API's server-side compaction instead of our tiers


POLICIES: dict[str, PolicySpec] = {
    "default": PolicySpec("default"),
    "default+subtask": PolicySpec("default+subtask", subtask=True),
    "none": PolicySpec("none", micro=False, region=False, memory=False, full=False, digest=False),
    "claude-code": PolicySpec(
        "claude-code", micro=False, region=False, memory=False, auto_fraction=0.835, digest=False
    ),
    "masking": PolicySpec(
        "masking", micro=False, masking_keep=10, region=False, memory=False, full=False, digest=False
    ),
    "api-clear": PolicySpec(
        "api-clear", micro=False, region=False, memory=False, full=False, digest=False, api_clear=True
    ),
    "api-compact": PolicySpec(
        "api-compact", micro=False, region=False, memory=False, full=False, digest=False, api_compact=True
    ),
}


class Policy:
    def __init__(self, spec: PolicySpec | None = None) -> None:
        self.spec = spec or POLICIES["default"]
        self.name = self.spec.name
        self.micro = MicroCompact()
        self.masking = MicroCompact(keep_recent=self.spec.masking_keep or 0, collapse=False)
        self.memory = MemoryCompact()
        self.region = RegionCompact()
        self.subtask = SubtaskCompact()
        self.full = FullCompact()
        self.emergency_tier = Emergency()
        self.digest = Digest()
        self.api_clear = ApiClear()
        self.api_compact = ApiCompact()
        self.halted_reason = ""
        self.warn = False
        self.strikes = 0
        self.threshold = 0.0  # where T2/T4 start, as the latest decision found it (the gauge shows it)
        self.kept: frozenset[str] = frozenset()  # calls counted as worth keeping (pricing.worth_keeping)
        self.forced = False  # the latest decision's T1 had to make room (eviction.Bet.forced)

    # -- state ---------------------------------------------------------------------------------
    def auto_threshold(self, ctx: TierContext, kept: int = 0) -> float:
        """Where T2/T4 start; `kept`: tokens worth keeping (the default policy counts them like a
        fixed cost, tiers/pricing.py:auto_threshold), 0 for a policy that prices nothing."""
        fraction = (
            self.spec.auto_fraction if self.spec.auto_fraction is not None else ctx.config.auto_fraction
        )
        return auto_threshold(fraction, ctx.budget, kept if self.spec.micro else 0)

    def reset(self) -> None:
        """Resume automatic compaction (after /clear, or when the person asks for it)."""
        self.halted_reason = ""
        self.strikes = 0
        self.threshold = 0.0  # the next decision finds it again
        self.kept = frozenset()
        self.forced = False

    def _record_auto(self, compaction: Compaction, ctx: TierContext, kept: int = 0) -> None:
        threshold = self.auto_threshold(ctx, kept)
        if compaction.after < threshold:
            self.strikes = 0
            return
        self.strikes += 1
        if self.strikes >= 2:
            self.halted_reason = (
                f"automatic compaction stopped: two compactions in a row left {compaction.after:,} tokens in "
                f"use, above the auto-compact threshold of {int(threshold):,}. Most of the context is in the "
                "recent turns or the first message; use /compact with a focus, /clear, or a larger budget."
            )

    # -- decisions -----------------------------------------------------------------------------
    async def decide(
        self, view: Sequence[Message], ctx: TierContext, trigger: str = "auto"
    ) -> list[Compaction]:
        out: list[Compaction] = []
        current = list(view)
        spec, config = self.spec, ctx.config
        if spec.micro:  # what earlier decisions counted as worth keeping still counts while whole
            ctx = replace(ctx, kept_before=self.kept, forced_before=self.forced)

        async def step(tier: Tier, tier_trigger: str) -> Compaction | None:
            nonlocal current, ctx
            compaction = await tier.propose(current, ctx, tier_trigger)
            if compaction is None or not compaction.replacements:
                return None
            current = apply_compaction(current, compaction)
            ctx = replace(
                ctx, used=compaction.after, memory_covers=shift_index(compaction, ctx.memory_covers)
            )
            out.append(compaction)
            return compaction

        if spec.digest and config.tool_trace == "digest" and current and is_person_message(current[-1]):
            await step(self.digest, "digest")
        if spec.masking_keep is not None:
            await step(self.masking, "masking")
        if spec.api_clear:
            await step(self.api_clear, "api_clear")
        if spec.api_compact:
            await step(self.api_compact, "api_compact")
        lossy_allowed = config.auto_compact and not self.halted_reason
        if spec.subtask and lossy_allowed and ctx.used >= self.auto_threshold(ctx) / 2:
            await step(self.subtask, "subtask")  # first: a finished item's traffic as one region
        if spec.micro:
            if is_cache_cold(ctx):
                await step(self.micro, "cache_cold")
            await step(self.micro, "pressure")
        keep = worth_keeping(current, ctx) if spec.micro else frozenset()
        kept = valued_tokens(current, ctx, keep) if spec.micro and lossy_allowed else 0
        if lossy_allowed and spec.region and ctx.summarizer is not None:
            if ctx.used >= auto_threshold(config.region_fraction, ctx.budget, kept):
                if await step(self.region, trigger) is not None:
                    keep = worth_keeping(current, ctx)
                    kept = valued_tokens(current, ctx, keep) if kept else 0
        if lossy_allowed and ctx.used >= self.auto_threshold(ctx, kept):
            done = None
            if spec.memory and self.memory.is_fresh(current, ctx):
                done = await step(self.memory, trigger)
            if done is None and spec.full:
                done = await step(self.full, trigger)
            if done is not None:
                self._record_auto(done, ctx, kept)
                keep = worth_keeping(current, ctx)
        self.kept = keep
        self.forced = any(c.tier == "T1" and c.bet is not None and c.bet.forced for c in out)
        self.threshold = self.auto_threshold(ctx, kept)
        if ctx.used < self.threshold:
            self.strikes = 0  # the streak is broken
        self.warn = ctx.used >= config.warn_fraction * ctx.budget
        return out

    def emergency(self, view: Sequence[Message], ctx: TierContext, tokens: int, maximum: int) -> Compaction:
        """T5 on "prompt is too long: N tokens > M maximum" (every policy, auto_compact or not)."""
        return self.emergency_tier.truncate(view, ctx, tokens, maximum, trigger="overflow")

    async def manual(self, view: Sequence[Message], ctx: TierContext) -> Compaction | None:
        """/compact [focus]: T4 with ctx.focus (the static ledger summary when the summarizer fails).
        None when there is nothing between the first message and the kept tail."""
        compaction = await self.full.propose(view, ctx, "manual")
        if compaction is not None and compaction.after < self.auto_threshold(ctx):
            self.reset()
        if compaction is not None:
            self.warn = compaction.after >= ctx.config.warn_fraction * ctx.budget
        return compaction


def make_policy(name: str = "default") -> Policy:
    key = (name or "default").strip().lower()
    if key not in POLICIES:
        raise ValueError(f"unknown compaction policy {name!r}: choose one of {', '.join(POLICIES)}")
    return Policy(POLICIES[key])


def default_policy() -> Policy:
    return make_policy("default")
