"""Recoverable means identical: for every tier, what a ref gives back through the recall tool is, byte
for byte, the text the tier removed — a large body, checked whole and at a line from its middle."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_cli.context.engine import ContextEngine
from agent_cli.context.model import ContextConfig, apply_compaction
from agent_cli.context.store import MemoryStore
from agent_cli.context.tiers import Digest, Emergency, FullCompact, MicroCompact, RegionCompact
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust
from agent_cli.tools.base import ToolContext
from agent_cli.tools.recall import RecallTool
from tests.context.test_tiers import FakeSummarizer, asst, make_ctx, person, results

LINES = 600


def body(tag: str) -> str:
    """~24k chars of distinct numbered lines (a tool output worth keeping whole)."""
    return "".join(f"{tag} row {k:05d}: value={k * 7919 % 10007:05d} ok\n" for k in range(LINES))


def middle_line(tag: str) -> str:
    k = LINES // 2
    return f"{tag} row {k:05d}: value={k * 7919 % 10007:05d} ok"


def session(n: int) -> list[Message]:
    view = [person("Look through the logs; keep the report format.", 1)]
    for i in range(n):
        # command outputs, not file reads: no working-set rule keeps them from being cleared
        view += [asst(f"Running part {i}.", (f"t{i}", "bash", {"command": f"./report --part {i}"}))]
        view += [results((f"t{i}", "bash", body(f"t{i}")))]
    view += [asst("All logs read."), person("Now write the report.", 2)]
    return view


async def recall_all(store: MemoryStore, ref: str) -> str:
    """The whole original under `ref`, paged through the recall tool as a model would."""
    ctx = ToolContext(workspace=Path("."), store=store)
    parts, offset = [], 0
    while True:
        result = await RecallTool().run({"ref": ref, "offset": offset, "limit": 7_000}, ctx)
        assert not result.is_error, result.output
        header, _, rest = result.output.partition("\n")
        found = re.match(r"\[.+: chars (\d+)–(\d+) of (\d+)\]$", header)
        assert found, header
        end, total = int(found.group(2)), int(found.group(3))
        parts.append(rest[: end - offset])
        offset = end
        if end >= total:
            return "".join(parts)


async def assert_recalled(store: MemoryStore, ref: str, tag: str, *, exact: bool) -> None:
    original = body(tag)
    recalled = await recall_all(store, ref)
    assert recalled == original if exact else original in recalled
    ctx = ToolContext(workspace=Path("."), store=store)
    hit = await RecallTool().run({"ref": ref, "pattern": re.escape(middle_line(tag))}, ctx)
    line = recalled[: recalled.index(middle_line(tag))].count("\n") + 1
    assert f"\n{line}: {middle_line(tag)}" in hit.output


def removed(view: list[Message], new: list[Message]) -> list[str]:
    """Ids of the tool results whose body no longer appears whole in the new view."""
    kept = "\n".join(b.text for m in new for b in m.blocks)
    return [b.tool_use_id for m in view for b in m.tool_results() if b.text not in kept]


def stored(compaction) -> MemoryStore:
    store = MemoryStore()
    for ref, text in compaction.originals.items():
        store.put(ref, text)
    return store


def ref_for(new: list[Message], tool_use_id: str) -> str:
    block = next(b for m in new for b in m.tool_results() if b.tool_use_id == tool_use_id)
    return block.meta.ref


async def test_t0_offload_recalls_the_whole_output():
    store = MemoryStore()
    model = ModelInfo(name="m", context_window=200_000, max_output_tokens=8_000)
    engine = ContextEngine(
        config=ContextConfig(offload_result_chars=10_000),
        model=model,
        system_prompt="s",
        tools=[],
        store=store,
    )
    engine.append(person("read it"))
    engine.append(asst("", ("t0", "read_file", {"path": "log0.txt"})))
    appended = engine.append(results(("t0", "read_file", body("t0"))))
    (compaction,) = appended.compactions
    assert compaction.tier == "T0" and middle_line("t0") not in str(engine.messages[-1])
    await assert_recalled(store, compaction.refs[0], "t0", exact=True)


async def test_t1_cleared_results_recall_whole():
    view = session(6)
    compaction = await MicroCompact().propose(view, make_ctx(view, last_request_at=0.0), "cache_cold")
    new = apply_compaction(view, compaction)
    gone = removed(view, new)
    assert gone == [f"t{i}" for i in range(6)]  # command outputs the model has seen are worth nothing
    store = stored(compaction)
    for tool_use_id in gone:
        ref = next(r for r in compaction.refs if compaction.originals.get(r) == body(tool_use_id))
        await assert_recalled(store, ref, tool_use_id, exact=True)


@pytest.mark.parametrize(
    "tier, ref_of",
    [
        (
            RegionCompact,
            lambda compaction, new, tool_use_id: ref_for(new, tool_use_id),
        ),  # T3: its region's ref
        (FullCompact, lambda compaction, new, tool_use_id: compaction.refs[0]),  # T4: the middle's one ref
    ],
    ids=["t3-region-ref-holds-every-summarized-output", "t4-span-ref-holds-the-whole-middle"],
)
async def test_t3_and_t4_refs_hold_every_output_they_summarized(tier, ref_of):
    view = session(6)
    ctx = make_ctx(view, budget=30_000, summarizer=FakeSummarizer())
    compaction = await tier().propose(view, ctx, "auto")
    new = apply_compaction(view, compaction)
    gone = removed(view, new)
    assert len(gone) >= 3
    store = stored(compaction)
    for tool_use_id in gone:
        await assert_recalled(store, ref_of(compaction, new, tool_use_id), tool_use_id, exact=False)


async def test_t5_span_and_cut_refs_give_back_what_they_removed():
    view = session(6)
    ctx = make_ctx(view, budget=30_000)
    compaction = Emergency().truncate(view, ctx, tokens=ctx.used, maximum=ctx.used - 4_000)
    new = apply_compaction(view, compaction)
    gone = removed(view, new)
    assert len(gone) >= 3
    store = stored(compaction)
    for tool_use_id in gone:
        await assert_recalled(store, compaction.refs[0], tool_use_id, exact=False)
    # nothing but the last group fits: the last result is cut to head + tail, its ref holds it whole
    last = [
        person("go"),
        asst("", ("t9", "read_file", {"path": "log9.txt"})),
        results(("t9", "read_file", body("t9"))),
    ]
    ctx = make_ctx(last, budget=3_000)
    cut = Emergency().truncate(last, ctx, tokens=ctx.used, maximum=2_000)
    after = apply_compaction(last, cut)
    assert middle_line("t9") not in after[-1].blocks[0].text
    await assert_recalled(stored(cut), ref_for(after, "t9"), "t9", exact=True)


async def test_digest_refs_recall_each_output_whole():
    view = session(4)
    compaction = await Digest().propose(view, make_ctx(view), "digest")
    new = apply_compaction(view, compaction)
    gone = removed(view, new)
    assert gone == ["t0", "t1", "t2", "t3"]
    store = stored(compaction)
    for tool_use_id in gone:
        await assert_recalled(store, tool_use_id, tool_use_id, exact=True)


async def test_t3_keeps_the_persons_words_that_share_a_message_with_tool_results():
    words = "Also: do not touch the public API, and keep the report in Markdown."
    view = session(6)
    # the person typed while a tool ran: their words arrived in the message with its result
    said = Block.text_block(words, BlockMeta(Trust.USER, "user"))
    view[4] = Message("user", view[4].blocks + (said,), view[4].turn)
    ctx = make_ctx(view, budget=30_000, summarizer=FakeSummarizer())
    compaction = await RegionCompact().propose(view, ctx, "auto")
    assert compaction is not None
    new = apply_compaction(view, compaction)
    assert sum(b.text == words for m in new for b in m.blocks) == 1
    assert len(removed(view, new)) >= 3  # T3 did compact around it
