"""Nothing lost before the engine sees it: bash keeps its whole output in the store before any cap,
the context gets a preview naming the ref and size, and recall pages or greps the original."""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli.context.store import DirStore, MemoryStore
from agent_cli.core.persisted import is_persisted
from agent_cli.tools.base import OutputLimits, ToolContext
from agent_cli.tools.bash import BashTool
from agent_cli.tools.recall import RecallTool


def _ctx(ws: Path, store, **limits: int) -> ToolContext:
    return ToolContext(workspace=ws, store=store, call_id="toolu_big", limits=OutputLimits(**limits))


async def test_a_60k_output_is_stored_whole_and_its_middle_line_recalled(ws: Path, tmp_path: Path) -> None:
    store = DirStore(tmp_path / "session")
    ctx = _ctx(ws, store)
    result = await BashTool().run({"command": "seq -f 'line %05g of the output' 1 2500"}, ctx)
    assert not result.is_error
    assert is_persisted(result.output)
    assert 'ref="toolu_big"' in result.output and 'chars="62500"' in result.output
    assert "line 01250 " not in result.output  # the middle is not in the context ...
    assert len(result.output) < 3_000
    stored = store.get("toolu_big")
    assert stored is not None and stored.count("\n") == 2500  # ... but every line is in the store
    found = await RecallTool().run({"ref": "toolu_big", "pattern": r"line 0125\d "}, ctx)
    assert "1250: line 01250 of the output" in found.output
    assert found.output.count("\n") == 10  # a header and ten numbered lines
    page = await RecallTool().run({"ref": "toolu_big", "offset": 1249 * 25, "limit": 25}, ctx)
    assert "line 01250 of the output\n" in page.output


async def test_just_over_the_inline_limit_is_offloaded_not_kept_whole(ws: Path) -> None:
    store = MemoryStore()
    ctx = _ctx(ws, store, inline_chars=30_000)
    result = await BashTool().run({"command": "head -c 29999 /dev/zero | tr '\\0' x; echo"}, ctx)
    assert result.output == "x" * 29_999 + "\n"  # 30,000 chars: at the limit, whole
    result = await BashTool().run({"command": "head -c 30000 /dev/zero | tr '\\0' x; echo"}, ctx)
    assert is_persisted(result.output) and len(store.get("toolu_big") or "") == 30_001


async def test_past_the_ceiling_head_and_tail_are_kept_and_the_drop_said(ws: Path) -> None:
    store = MemoryStore()
    ctx = _ctx(ws, store, inline_chars=1_000, ceiling_chars=100_000)
    result = await BashTool().run({"command": "seq 1 200000"}, ctx)
    assert result.meta["dropped_chars"] > 1_000_000
    assert "passed the storage ceiling of 100,000 chars" in result.output
    stored = store.get("toolu_big") or ""
    assert stored.startswith("1\n2\n3\n") and stored.endswith("199999\n200000\n")
    assert re.search(r"… \[[\d,]+ chars dropped here", stored)
    assert len(stored) < 100_200


async def test_a_failing_command_shows_its_exit_code_after_the_preview(ws: Path) -> None:
    ctx = _ctx(ws, MemoryStore(), inline_chars=500)
    result = await BashTool().run({"command": "seq 1 1000; exit 4"}, ctx)
    assert result.is_error and is_persisted(result.output)
    assert result.output.endswith("exit code 4")


async def test_recall_pattern_without_a_match_and_a_bad_pattern(ws: Path) -> None:
    store = MemoryStore()
    store.put("out-1", "alpha\nbeta\ngamma\n")
    ctx = ToolContext(workspace=ws, store=store)
    none = await RecallTool().run({"ref": "out-1", "pattern": "delta"}, ctx)
    assert none.output == "no match in out-1 (3 lines)" and not none.is_error
    bad = await RecallTool().run({"ref": "out-1", "pattern": "("}, ctx)
    assert bad.is_error and "invalid pattern" in bad.output
    gone = await RecallTool().run({"ref": "out-2", "pattern": "a"}, ctx)
    assert gone.is_error and "nothing is stored under it" in gone.output


async def test_a_recall_pattern_that_backtracks_is_stopped_with_a_clear_error(ws: Path) -> None:
    store = MemoryStore()
    store.put("out-1", "a" * 5000 + "!\nfound\n")
    ctx = ToolContext(workspace=ws, store=store)
    slow = await RecallTool().run({"ref": "out-1", "pattern": r"(\w+\s?)+$"}, ctx)
    assert slow.is_error and "took over 2 s to match" in slow.output
    fine = await RecallTool().run({"ref": "out-1", "pattern": "fou?nd"}, ctx)
    assert fine.output.endswith("2: found")


async def test_recall_pattern_pages_when_the_matches_are_many(ws: Path) -> None:
    store = MemoryStore()
    store.put("many", "".join(f"hit {n}\n" for n in range(1, 3001)))
    ctx = ToolContext(workspace=ws, store=store)
    first = await RecallTool().run({"ref": "many", "pattern": "hit", "limit": 1_000}, ctx)
    nxt = re.search(r"offset=(\d+)", first.output)
    assert nxt is not None and "3000 matching lines" in first.output
    second = await RecallTool().run({"ref": "many", "pattern": "hit", "offset": int(nxt.group(1))}, ctx)
    last_shown = int(first.output.split("\n")[-2].split(":")[0])
    assert f"\n{last_shown + 1}: hit {last_shown + 1}\n" in second.output


async def test_a_recall_page_of_dense_text_is_bounded_in_bytes_and_the_pages_join_up(ws: Path) -> None:
    """25k characters of CJK are ~75k bytes and as many tokens as three ASCII pages: a page holds at
    most 25k bytes, and the next offset goes on where it stopped, so the pages join to the original."""
    store = MemoryStore()
    dense = "".join(chr(0x4E00 + i % 20_000) for i in range(30_000)) + "end"
    store.put("cjk", dense)
    ctx = _ctx(ws, store)
    joined, offset = "", 0
    while True:
        page = await RecallTool().run({"ref": "cjk", "offset": offset, "limit": 25_000}, ctx)
        start, end = page.meta["chars"]
        body = page.output.split("\n", 1)[1].split("\n[… ", 1)[0]
        assert start == offset and len(body.encode()) <= 25_000 and body == dense[start:end]
        joined += body
        if end == len(dense):
            break
        offset = end
    assert joined == dense


async def test_a_pattern_page_of_dense_lines_is_bounded_in_bytes_too(ws: Path) -> None:
    """`recall(pattern=".")` over 150 lines of CJK gave 24.8k characters and 73.6k bytes (~57k
    tokens) in one page; the engine lets a recall page in whole, so the page itself must be bounded."""
    store = MemoryStore()
    store.put(
        "cjk",
        "".join("".join(chr(0x4E00 + (i * 400 + j) % 20_000) for j in range(400)) + "\n" for i in range(150)),
    )
    page = await RecallTool().run({"ref": "cjk", "pattern": ".", "limit": 25_000}, _ctx(ws, store))
    assert len(page.output.encode()) <= 25_000 + 200 and "call again with offset=" in page.output
