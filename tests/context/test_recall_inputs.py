"""Nothing lost, inputs too: every tool-call input string a tier takes out of the view (a sub-agent's
prompt, a Write's content, an Edit's new text) comes back byte-identical from the compaction's refs."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from agent_cli.context.model import Compaction, ContextConfig, apply_compaction
from agent_cli.context.tiers import Digest, Emergency, FullCompact, MemoryCompact, MicroCompact, RegionCompact
from agent_cli.core.types import Message
from agent_cli.replay.recoverable import RecoverableCheck
from tests.context.test_tiers import FakeSummarizer, asst, forgetful, make_ctx, person, results

PROMPT = (
    'Find every caller of parse():\n  - list "file:line"\n  - note the ones that pass `strict=True`\n' * 12
)
CONTENT = "def parse(text, strict=False):\n    '''Parse it.'''\n    return text.split(\"\\n\")\n" * 20
NEW = "def parse(text, *, strict: bool = False) -> list[str]:\n    return text.splitlines()\n" * 6


def session() -> list[Message]:
    view = [person("Refactor parse() and update its callers.", 1)]
    calls = [
        ("k1", "Task", {"description": "find callers", "prompt": PROMPT, "subagent_type": "explore"}),
        ("w1", "write_file", {"path": "parse.py", "content": CONTENT}),
        ("e1", "edit_file", {"path": "parse.py", "old_string": CONTENT[:120], "new_string": NEW}),
    ]
    for n in range(3):
        for tid, name, tool_input in calls:
            tid = f"{tid}-{n}"
            view += [
                asst(f"Step {tid}.", (tid, name, tool_input)),
                results((tid, name, f"{name} done " * 60)),
            ]
    view += [asst("Done."), person("Thanks; now the docs.", 2)]
    return view


def inputs_gone(view: Sequence[Message], compaction: Compaction) -> list[str]:
    """Input strings of at least 40 chars that were in `view` and are no longer in the new view."""
    new = apply_compaction(view, compaction)
    left = json.dumps([b.input for m in new for b in m.blocks if b.type == "tool_use"], ensure_ascii=False)
    left += "\n".join(b.text for m in new for b in m.blocks)
    return [
        v
        for m in view
        for b in m.blocks
        if b.type == "tool_use"
        for v in b.input.values()
        if isinstance(v, str) and len(v) >= 40 and v not in left and json.dumps(v)[1:-1] not in left
    ]


TIERS = [
    ("T1", MicroCompact(), "cache_cold"),
    ("T2", MemoryCompact(), "auto"),
    ("T3", RegionCompact(), "auto"),
    ("T4", FullCompact(), "auto"),
    ("T5-static", FullCompact(), "auto"),  # no summarizer: T5's static summary stands in
    ("digest", Digest(), "digest"),
]


@pytest.mark.parametrize(("name", "tier", "trigger"), TIERS, ids=[t[0] for t in TIERS])
async def test_every_input_a_tier_removes_comes_back_byte_identical(name, tier, trigger):
    view = session()
    summarizer = None if name == "T5-static" else FakeSummarizer()
    ctx = forgetful(
        make_ctx(
            view,
            budget=6_000,
            summarizer=summarizer,
            memory_note="# note\n## Current Goal\n- parse",
            memory_covers=len(view) - 1,
            last_request_at=0.0,
            config=ContextConfig(tool_trace="digest", tail_fraction=0.02, forecast_ratio=20.0),
        )
    )
    compaction = await tier.propose(view, ctx, trigger)
    assert compaction is not None
    gone = inputs_gone(view, compaction)
    if name == "T3":  # a region summary keeps every tool_use block (pairs stay whole): nothing to lose
        assert not gone and compaction.tier == "T3"
        return
    assert gone, "the tier removed no input: the test would prove nothing"
    check = RecoverableCheck()
    check.observe(view, compaction)
    store = {ref: text for ref, text in compaction.originals.items()}
    missing = [
        text[:60]
        for text in gone
        if not any(
            text in store.get(r, "") or json.dumps(text)[1:-1] in store.get(r, "") for r in compaction.refs
        )
    ]
    assert missing == [], f"{name} lost {len(missing)} input strings"


async def test_t5_truncation_keeps_the_inputs_of_what_it_drops():
    view = session()
    ctx = make_ctx(view, budget=6_000)
    compaction = Emergency().truncate(view, ctx, ctx.used + 4_000, ctx.used - 2_000, trigger="overflow")
    gone = inputs_gone(view, compaction)
    assert gone
    for text in gone:
        assert any(
            text in compaction.originals.get(r, "")
            or json.dumps(text)[1:-1] in compaction.originals.get(r, "")
            for r in compaction.refs
        ), text[:60]
