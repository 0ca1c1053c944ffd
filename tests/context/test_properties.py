"""Property tests: random valid conversations through random sequences of tier operations.

Whatever the order — T1 (cold cache, pressure, masking), T2, T3, T4 (working or failing summarizer),
T5, digest — every view stays valid (§3 invariants), the token bookkeeping matches a recount,
a summary is never fed back to a summarizer as raw material, and after T4/T5 the view fits the budget.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field, replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_cli.context.invariants import check
from agent_cli.context.model import ContextConfig, apply_compaction
from agent_cli.context.tiers import Digest, Emergency, FullCompact, MemoryCompact, MicroCompact, RegionCompact
from agent_cli.core.types import Block, BlockMeta, Message, Trust
from tests.context.test_tiers import Counter, asst, make_ctx, person

TOOLS = ("read_file", "bash", "grep", "edit_file", "glob")
OPS = ("T1cold", "T1pressure", "T1mask", "T2", "T3", "T4", "T4", "T4fail", "T5", "T5", "digest")
CONFIG = ContextConfig(prune_output_chars=300, emergency_margin_tokens=100)


@dataclass
class Summarizer:
    """Tags what it writes so a later prompt can be searched for it; may fail."""

    fail: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)

    async def __call__(self, system: str, content: str) -> str:
        self.calls.append((system, content))
        if self.fail:
            raise RuntimeError("down")
        kind = "REGION" if "tool activity" in system else "SUMMARY"
        return f"{kind}#{len(self.calls)} files were read and edited"


def reminder(text: str, pinned: bool = False) -> Block:
    meta = BlockMeta(Trust.SYSTEM, "reminder", tag="system-reminder", pinned=pinned)
    return Block.text_block(f"<system-reminder>{text}</system-reminder>", meta)


@st.composite
def conversations(draw) -> list[Message]:
    ids = itertools.count()
    view: list[Message] = []
    turns = draw(st.integers(1, 6))
    for turn in range(1, turns + 1):
        words = draw(st.sampled_from(["fix the bug", "add a test", "why does it fail?", "refactor utils"]))
        message = person(f"{words} (turn {turn})", turn)
        if draw(st.booleans()):
            message = Message(
                "user", (reminder("todo: 1 open", pinned=draw(st.booleans())),) + message.blocks, turn
            )
        view.append(message)
        rounds = draw(st.integers(0, 5))
        for _ in range(rounds):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n = next(ids)
                tool = draw(st.sampled_from(TOOLS))
                calls.append(
                    (f"c{n}", tool, {"path": f"src/m{n}.py"} if tool != "bash" else {"command": f"run {n}"})
                )
            view.append(asst(draw(st.sampled_from(["", "Checking."])), *calls, turn=turn))
            blocks = [
                Block.tool_result(
                    cid,
                    f"output {cid} " * (draw(st.integers(0, 4_000)) // 10),
                    draw(st.booleans()),
                    BlockMeta(Trust.TOOL, "tool", tool_name=tool),
                )
                for cid, tool, _ in calls
            ]
            if draw(st.integers(0, 4)) == 0:
                blocks.append(reminder("the file changed on disk"))
            view.append(Message("user", tuple(blocks), turn))
        mid_run = turn == turns and rounds > 0 and draw(st.booleans())
        if not mid_run:
            view.append(asst(f"Step {turn} done.", turn=turn))
    if view[-1].role == "assistant" and draw(st.booleans()):
        view.append(person("and now the docs", turns + 1))  # compaction usually runs when one arrives
    return view


async def run_ops(view: list[Message], ops: list[str], budget: int) -> None:
    counter = Counter()
    summarizer = Summarizer()
    written: list[str] = []  # summaries and notes that must never come back as raw material
    for op in ops:
        used = counter.total(view)
        ctx = make_ctx(view, budget=budget, used=used, config=CONFIG, summarizer=summarizer)
        if op == "T5":
            tokens, maximum = max(used, budget) + 300, budget
            compaction = Emergency().truncate(view, ctx, tokens, maximum)
        else:
            tier, trigger = {
                "T1cold": (MicroCompact(), "cache_cold"),
                "T1pressure": (MicroCompact(), "pressure"),
                "T1mask": (MicroCompact(keep_recent=2), "masking"),
                "T2": (MemoryCompact(), "auto"),
                "T3": (RegionCompact(), "auto"),
                "T4": (FullCompact(), "auto"),
                "T4fail": (FullCompact(), "auto"),
                "digest": (Digest(), "digest"),
            }[op]
            if op == "T1cold":
                ctx = replace(ctx, last_request_at=0.0)
            if op == "T2":
                note = f"NOTE#{len(written)} goal: fix the bug"
                written.append(note)
                ctx = replace(ctx, memory_note=note, memory_covers=len(view))
            if op == "T4fail":
                ctx = replace(ctx, summarizer=Summarizer(fail=True))
            compaction = await tier.propose(view, ctx, trigger)
        if compaction is None:
            continue
        new = apply_compaction(view, compaction)
        assert check(new) == [], (op, check(new))
        for tag in ("summary", "ledger", "session-memory"):  # reference material is never duplicated
            assert sum(b.meta.tag == tag for m in new for b in m.blocks) <= 1, (op, tag)
        assert compaction.before - compaction.after == used - counter.total(new), op
        assert all(ref in compaction.refs for ref in compaction.originals)
        if op in ("T4", "T4fail", "T5"):
            assert counter.total(new) <= budget, (op, counter.total(new), budget)
        if compaction.tier == "T4":
            written.append(compaction.summary)
        view = new
    for _, content in summarizer.calls:
        for marker in ("<transcript>", "<new-turns>", "<tool-activity>"):
            if marker in content:
                raw = content.split(marker, 1)[1]
                assert not any(text in raw for text in written), "a summary was fed back as raw material"


def budget_for(view: list[Message], fill: float) -> int:
    """A budget the conversation fills to `fill` (over 1: already too large), never below 6,000."""
    return max(6_000, int(Counter().total(view) / fill))


@settings(
    max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    view=conversations(),
    ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=6),
    fill=st.floats(0.4, 1.6),
)
def test_random_tier_sequences_keep_the_view_valid(view, ops, fill):
    assert check(view) == []
    asyncio.run(run_ops(view, ops, budget_for(view, fill)))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(view=conversations(), fill=st.floats(0.4, 1.6))
def test_t4_then_t5_always_fit_the_budget(view, fill):
    asyncio.run(run_ops(view, ["T4", "T5", "T4", "T5"], budget_for(view, fill)))
