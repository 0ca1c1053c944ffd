"""Binary bash output is not shown as mojibake: a one-line placeholder, and a hex dump to recall."""

from __future__ import annotations

import re
from pathlib import Path

from agent_cli.context.store import MemoryStore
from agent_cli.tools.base import ToolContext
from agent_cli.tools.bash import BashTool
from agent_cli.tools.binary_output import hex_dump
from agent_cli.tools.recall import RecallTool

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8


async def test_binary_output_is_a_placeholder_and_recall_returns_its_hex_dump(ws: Path) -> None:
    (ws / "logo.png").write_bytes(PNG)
    ctx = ToolContext(ws, store=MemoryStore())
    result = await BashTool().run({"command": "cat logo.png"}, ctx)
    assert not result.is_error
    match = re.fullmatch(rf"\[binary output, {len(PNG)} bytes, stored as ref (\S+) \(.*\)\]", result.output)
    assert match, result.output
    recalled = await RecallTool().run({"ref": match.group(1), "limit": 200}, ctx)
    assert "00000000: 8950 4e47 0d0a 1a0a 0000 000d 4948 4452  .PNG........IHDR" in recalled.output


async def test_a_failing_command_with_binary_output_still_says_its_exit_code(ws: Path) -> None:
    (ws / "blob").write_bytes(PNG)
    result = await BashTool().run({"command": "cat blob; exit 3"}, ToolContext(ws, store=MemoryStore()))
    assert result.is_error and result.output.startswith("[binary output,")
    assert result.output.endswith("exit code 3")


async def test_text_with_a_few_odd_bytes_stays_text(ws: Path) -> None:
    (ws / "notes.txt").write_bytes("Grüße aus Köln\n".encode("latin-1") + b"plain line\n" * 20)
    result = await BashTool().run({"command": "cat notes.txt"}, ToolContext(ws, store=MemoryStore()))
    assert "plain line" in result.output and "binary" not in result.output


def test_hex_dump_says_what_it_did_not_keep() -> None:
    assert (
        hex_dump(b"AB", total=10)
        == "00000000: 4142                                     AB\n[… 8 more bytes not kept]\n"
    )


async def test_a_large_binary_output_leaves_no_lossy_text_under_the_calls_own_ref(ws: Path) -> None:
    """What streamed to the store under the call's id was the bytes decoded with U+FFFD in place of
    most: recalling the id now says where the dump is, never serves the lossy text."""
    (ws / "big.bin").write_bytes(PNG * 100)
    ctx = ToolContext(ws, store=MemoryStore(), call_id="toolu_bin")
    result = await BashTool().run({"command": "cat big.bin"}, ctx)
    assert result.output.startswith("[binary output,") and result.meta["output_ref"] == "toolu_bin"
    recalled = await RecallTool().run({"ref": "toolu_bin"}, ctx)
    assert "\ufffd" not in recalled.output and "stored as ref bash-binary-" in recalled.output
