"""T0 at ingest: large results and pastes go to the store; the context keeps a preview and the ref."""

from __future__ import annotations

import re

from agent_cli.context.model import ContextConfig, apply_compaction
from agent_cli.context.offload import (
    clean_message,
    merge_injections,
    merge_same_role,
    offload_results,
    preview,
)
from agent_cli.context.store import DirStore, MemoryStore
from agent_cli.core.types import Block, BlockMeta, Message, Trust

CONFIG = ContextConfig()
REMINDER = BlockMeta(Trust.SYSTEM, "reminder", tag="system-reminder")


def numbered(lines: int, width: int = 60, name: str = "line") -> str:
    return "".join(f"{name} {i:06d} " + "x" * (width - 13) + "\n" for i in range(1, lines + 1))


def results(*blocks: Block) -> Message:
    return Message("user", blocks, 3)


def test_small_results_stay_as_they_are():
    message = results(Block.tool_result("t1", "short"), Block.tool_result("t2", numbered(100)))
    same, compaction = offload_results(message, CONFIG, MemoryStore())
    assert same is message
    assert compaction is None


def test_a_large_result_is_offloaded_with_a_head_and_tail_preview(tmp_path):
    store = DirStore(tmp_path)
    full = numbered(1_000)  # 60,000 chars
    message = results(Block.tool_result("toolu_1", full), Block.tool_result("toolu_2", "small"))
    new, compaction = offload_results(message, CONFIG, store, index=4)

    block = new.blocks[0]
    assert block.meta.ref == "toolu_1"
    assert block.tool_use_id == "toolu_1"
    path = tmp_path / "tool-results" / "toolu_1.txt"
    assert block.text.startswith(
        f'<persisted-output ref="toolu_1" path="{path}" chars="60000" lines="1000">\n'
    )
    assert "line 000001" in block.text and "line 001000" in block.text  # head and tail
    assert "line 000500" not in block.text
    assert re.search(r"… [\d,]+ chars omitted …", block.text)
    assert 'recall tool with ref "toolu_1"' in block.text
    assert len(block.text) < CONFIG.preview_chars + 600
    assert new.blocks[1] == message.blocks[1]  # the small one is untouched
    assert store.get("toolu_1") == full  # the store holds every char

    assert compaction.tier == "T0" and compaction.trigger == "ingest"
    [span] = compaction.replacements
    assert (span.start, span.end, span.messages) == (4, 5, (new,))
    assert compaction.refs == ("toolu_1",)
    assert compaction.originals == {"toolu_1": full}


def test_the_preview_cuts_at_line_ends():
    full = numbered(1_000)
    shown = preview(full, 2_000)
    kept = [line for line in shown.splitlines() if "omitted" not in line]
    assert kept and all(line + "\n" in full for line in kept)  # only whole lines
    assert len(shown) <= 2_100
    assert preview("short", 2_000) == "short"
    one_line = "y" * 10_000
    assert len(preview(one_line, 2_000)) < 2_100  # no line ends: a hard cut


def test_a_turn_over_the_limit_offloads_the_largest_first():
    sizes = [29_000, 20_000, 28_000, 25_000, 27_000, 26_000, 24_000, 23_000, 5_000]  # 207k, none > 30k
    blocks = [Block.tool_result(f"t{i}", numbered(n // 60)) for i, n in enumerate(sizes)]
    store = MemoryStore()
    new, compaction = offload_results(results(*blocks), CONFIG, store)
    assert compaction is not None
    assert compaction.refs == ("t0",)  # the largest alone brings the turn under 200k
    assert sum(len(b.text) for b in new.blocks) <= CONFIG.offload_turn_chars
    many = [Block.tool_result(f"t{i}", numbered(n // 60)) for i, n in enumerate(sizes * 2)]
    new, compaction = offload_results(results(*many), CONFIG, store)
    order = [int(r[1:]) % len(sizes) for r in compaction.refs]
    assert [sizes[i] for i in order] == sorted((sizes[i] for i in order), reverse=True)
    assert sum(len(b.text) for b in new.blocks) <= CONFIG.offload_turn_chars
    for ref in compaction.refs:
        assert store.get(ref) == compaction.originals[ref]


def test_a_persisted_result_is_not_offloaded_again():
    store = MemoryStore()
    once, _ = offload_results(results(Block.tool_result("t1", numbered(1_000))), CONFIG, store)
    again, compaction = offload_results(once, CONFIG, store)
    assert compaction is None and again is once


def test_a_large_paste_is_offloaded_but_not_tagged_blocks_or_images():
    paste = numbered(1_000, name="pasted")  # 60k > 50k
    image = Block(type="image", media_type="image/png", data="A" * 80_000)
    big_reminder = Block.text_block("<system-reminder>" + "r" * 60_000 + "</system-reminder>", REMINDER)
    message = Message("user", (big_reminder, image, Block.text_block(paste)))
    refs = iter(["paste-7"])
    store = MemoryStore()
    new, compaction = offload_results(message, CONFIG, store, paste_ref=lambda: next(refs))
    assert new.blocks[0] == big_reminder and new.blocks[1] == image
    assert new.blocks[2].text.startswith(
        f'<persisted-output ref="paste-7" chars="{len(paste)}" lines="1000">'
    )
    assert new.blocks[2].meta.ref == "paste-7"
    assert store.get("paste-7") == paste
    assert compaction.refs == ("paste-7",)


def test_the_compaction_replays_to_the_same_view():
    view = [
        Message("user", (Block.text_block("go"),)),
        Message("assistant", (Block.tool_use("t1", "bash", {"command": "make"}),)),
        results(Block.tool_result("t1", numbered(1_000))),
    ]
    new, compaction = offload_results(view[2], CONFIG, MemoryStore(), index=2)
    assert apply_compaction(view, compaction) == [view[0], view[1], new]


def test_shaping_helpers():
    words, reminder = (
        Block.text_block("words"),
        Block.text_block("<system-reminder>r</system-reminder>", REMINDER),
    )
    res = Block.tool_result("t1", "ok")
    merged = merge_injections(Message("user", (words, res)), [], [reminder])
    assert merged.blocks == (res, reminder, words)
    assert merge_same_role(Message("user", (words,)), Message("user", (res,))).blocks == (res, words)
    assert clean_message(Message("user", (Block.text_block(" "), words))).blocks == (words,)


def test_a_store_that_cannot_write_keeps_the_result_whole():
    class Full(MemoryStore):
        def put(self, ref, text):
            raise OSError(28, "No space left on device")

    message = results(Block.tool_result("t1", numbered(5_000)), Block.tool_result("t2", numbered(4_000)))
    same, compaction = offload_results(message, CONFIG, Full())
    assert compaction is None and same is message
