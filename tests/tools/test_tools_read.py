from __future__ import annotations

from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


async def test_numbered_lines_like_cat_n(ws: Path, call) -> None:
    (ws / "a.py").write_text("import os\n\tindented\nlast\n")
    result = await call("read_file", path="a.py")
    assert not result.is_error
    assert result.output == "     1\timport os\n     2\t\tindented\n     3\tlast"
    assert result.meta == {"path": str(ws / "a.py"), "lines": [1, 3], "total_lines": 3}


async def test_offset_limit_and_continuation_hint(ws: Path, call) -> None:
    (ws / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))
    first = await call("read_file", path="big.txt")
    assert first.output.splitlines()[-2] == "  2000\trow 2000"
    assert "3000 more lines" in first.output and "offset=2001" in first.output
    page = await call("read_file", path=str(ws / "big.txt"), offset=4990, limit=5)
    assert page.output.splitlines() == [f"  {n}\trow {n}" for n in range(4990, 4995)] + [
        "… 6 more lines (file has 5000); use offset=4995 to continue."
    ]
    assert page.meta["lines"] == [4990, 4994] and page.meta["total_lines"] == 5000
    last = await call("read_file", path="big.txt", offset=4999)
    assert last.output == "  4999\trow 4999\n  5000\trow 5000"


async def test_limit_above_max_is_capped(ws: Path, call) -> None:
    (ws / "big.txt").write_text("x\n" * 3000)
    result = await call("read_file", path="big.txt", limit=10_000)
    assert result.meta["lines"] == [1, 2000]


async def test_long_lines_are_cut_with_marker(ws: Path, call) -> None:
    (ws / "min.js").write_text("a" * 5000 + "\n")
    result = await call("read_file", path="min.js")
    assert "[line cut: 3000 more chars]" in result.output
    assert len(result.output) < 2100


async def test_missing_file_suggests_similar_names(ws: Path, call) -> None:
    (ws / "config.yaml").write_text("a: 1\n")
    result = await call("read_file", path="config.yml")
    assert result.is_error
    assert "no such file" in result.output and "config.yaml" in result.output


async def test_missing_directory(ws: Path, call) -> None:
    result = await call("read_file", path="nope/x.py")
    assert result.is_error and "does not exist" in result.output


async def test_directory_is_an_error(ws: Path, call) -> None:
    (ws / "src").mkdir()
    result = await call("read_file", path="src")
    assert result.is_error and "is a directory" in result.output and "ls" in result.output


async def test_binary_file_is_not_shown(ws: Path, call) -> None:
    elf = b"\x7fELF" + bytes(range(256))
    (ws / "tool").write_bytes(elf)
    result = await call("read_file", path="tool")
    assert result.is_error
    assert result.output == f"tool: binary file ({len(elf)} bytes, looks like ELF) — not shown"
    (ws / "logo.png").write_bytes(PNG)  # an image is opened as one: this one is not a real PNG
    result = await call("read_file", path="logo.png")
    assert result.is_error and result.output.startswith("logo.png: a corrupt PNG image")


async def test_latin1_past_the_sniffed_head_is_read_as_text(ws: Path, call) -> None:
    (ws / "mixed.txt").write_bytes(b"ok\n" * 5000 + b"caf\xe9\n")
    result = await call("read_file", path="mixed.txt", offset=5001)
    assert not result.is_error
    assert result.output == "  5001\tcafé"
    assert result.meta["encoding"] == "cp1252"


async def test_empty_file_says_so(ws: Path, call) -> None:
    (ws / "empty.txt").write_text("")
    result = await call("read_file", path="empty.txt")
    assert not result.is_error and "empty" in result.output
    assert result.meta["total_lines"] == 0


async def test_offset_past_end(ws: Path, call) -> None:
    (ws / "a.txt").write_text("one\ntwo\n")
    result = await call("read_file", path="a.txt", offset=9)
    assert result.is_error and "past the end" in result.output and "2 lines" in result.output


async def test_crlf_lines_are_shown_without_carriage_returns(ws: Path, call) -> None:
    (ws / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call("read_file", path="win.txt")
    assert result.output == "     1\tone\n     2\ttwo"
