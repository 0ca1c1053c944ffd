"""Images in the engine: a tool result carrying an image keeps it through the log, counts ≈ w·h/750
tokens (an `images` line in the breakdown), and T1 clears an old one like any old result — a
placeholder with a ref, the image itself in the store, given back by recall."""

from __future__ import annotations

import base64
import io

from PIL import Image

from agent_cli.context.engine import ContextEngine
from agent_cli.context.model import ContextConfig
from agent_cli.context.store import MemoryStore
from agent_cli.context.tiers import MicroCompact
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.images import data_url, tokens_for
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust
from agent_cli.replay.recoverable import RecoverableCheck

MODEL = ModelInfo("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0)  # factor 1.0


def _png(width: int, height: int) -> str:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (1, 2, 3)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


def _image_result(call_id: str, data: str) -> Block:
    block = Block.tool_result(
        call_id,
        "[image shot.png: PNG, 1200x900, ≈1,440 tokens]",
        meta=BlockMeta(Trust.TOOL, "tool", 0, "read_file"),
    )
    return Block(**{**block.__dict__, "media_type": "image/png", "data": data})


def test_an_image_result_round_trips_the_log_and_is_sent_as_an_image():
    block = _image_result("t1", _png(30, 20))
    assert Block.from_json(block.to_json()) == block
    api = block.to_api()
    assert api["content"][0] == {"type": "text", "text": "[image shot.png: PNG, 1200x900, ≈1,440 tokens]"}
    assert api["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": block.data}


def test_an_image_counts_by_its_size_not_its_base64():
    counter = TokenCounter("claude-sonnet-4-5")
    small, large = _image_result("a", _png(100, 100)), _image_result("b", _png(1200, 900))
    text_only = Block.tool_result("c", "[image shot.png: PNG, 1200x900, ≈1,440 tokens]")
    assert counter.raw_block(large) - counter.raw_block(text_only) >= tokens_for(1200, 900)
    assert counter.raw_block(large) - counter.raw_block(small) >= tokens_for(1200, 900) - tokens_for(100, 100)


def _view(data: str) -> list[Message]:
    meta = BlockMeta(Trust.USER, "user")
    view = [Message("user", (Block.text_block("look at shot.png", meta),), 1)]
    view.append(Message("assistant", (Block.tool_use("t0", "read_file", {"path": "shot.png"}),), 1))
    view.append(Message("user", (_image_result("t0", data),), 1))
    for i in range(1, 8):  # later reads of other files push the image out of the recent results
        view.append(Message("assistant", (Block.tool_use(f"t{i}", "read_file", {"path": f"f{i}.py"}),), 1))
        view.append(Message("user", (Block.tool_result(f"t{i}", f"     1\tline of f{i}\n" * 200),), 1))
    view.append(Message("assistant", (Block.text_block("done", BlockMeta(Trust.ASSISTANT, "assistant")),), 1))
    return view


async def test_t1_clears_an_old_image_and_the_store_keeps_it():
    data = _png(1200, 900)
    store = MemoryStore()
    engine = ContextEngine(
        config=ContextConfig(),
        model=MODEL,
        system_prompt="system",
        tools=[],
        store=store,
        clock=lambda: 1_000.0,
    )
    for message in _view(data):
        engine.append(message, ingest=False)
    before = engine.breakdown()
    assert before["images"] >= tokens_for(1200, 900)
    compaction = await MicroCompact(keep_recent=3).propose(engine.messages, engine.tier_context(), "manual")
    assert compaction is not None
    used, view = engine.status().used, engine.messages
    engine.apply(compaction)
    recoverable = RecoverableCheck()  # replay's check: all that left the view is in the store, verbatim
    recoverable.observe(view, compaction)
    left, back = recoverable.count(store)
    assert left == 5 and back == left  # four texts and the image's caption
    cleared = engine.messages[2].blocks[0]
    assert not cleared.data and not cleared.media_type
    assert cleared.text.startswith(
        "[cleared: read_file shot.png: image, 1200x900, ≈1,440 tokens; recall ref r"
    )
    caption = "[image shot.png: PNG, 1200x900, ≈1,440 tokens]"
    assert store.get(cleared.meta.ref) == f"{caption}\n{data_url('image/png', data)}"  # text, then image
    assert engine.breakdown()["images"] == 0
    assert used - engine.status().used >= tokens_for(1200, 900)  # the gauge drops by the image at least
