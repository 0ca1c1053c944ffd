from __future__ import annotations

from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

# -- write_file ----------------------------------------------------------------------------------------


async def test_write_creates_parents_and_reports_created(ws: Path, call) -> None:
    result = await call("write_file", path="pkg/sub/mod.py", content="a = 1\nb = 2\n")
    assert not result.is_error
    assert (ws / "pkg" / "sub" / "mod.py").read_text() == "a = 1\nb = 2\n"
    assert result.output == "Created pkg/sub/mod.py (2 lines)."
    assert result.meta == {"path": str(ws / "pkg" / "sub" / "mod.py"), "action": "created"}
    assert "+a = 1" in result.display and "/dev/null" in result.display


async def test_write_overwrites_and_shows_a_diff(ws: Path, call) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    result = await call("write_file", path="a.txt", content="one\n2\nthree\n")
    assert result.meta["action"] == "overwritten"
    assert "Overwrote a.txt (3 lines; was 3 lines)" in result.output
    assert "-two\n+2\n" in result.display
    assert (ws / "a.txt").read_text() == "one\n2\nthree\n"
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]  # no temp file left behind


async def test_write_to_a_directory_is_an_error(ws: Path, call) -> None:
    (ws / "src").mkdir()
    result = await call("write_file", path="src", content="x")
    assert result.is_error and "directory" in result.output


async def test_write_under_a_file_is_an_error(ws: Path, call) -> None:
    (ws / "a.txt").write_text("x")
    result = await call("write_file", path="a.txt/b.txt", content="x")
    assert result.is_error and "not a directory" in result.output
    assert (ws / "a.txt").read_text() == "x"


async def test_write_over_binary_says_so(ws: Path, call) -> None:
    (ws / "img.png").write_bytes(PNG)
    result = await call("write_file", path="img.png", content="text now\n")
    assert not result.is_error and "replaced a binary file" in result.output


# -- edit_file -----------------------------------------------------------------------------------------

SOURCE = """def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""


async def test_edit_unique_match(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call(
        "edit_file", path="m.py", old_string="    return a - b", new_string="    return a - b  # ok"
    )
    assert not result.is_error
    assert (ws / "m.py").read_text() == SOURCE.replace("a - b", "a - b  # ok")
    assert result.output.startswith("Edited m.py: replaced 1 occurrence; the new text is at line 6.")
    assert "     6\t    return a - b  # ok" in result.output  # the snippet
    assert "-    return a - b\n+    return a - b  # ok" in result.display
    assert result.meta == {"path": str(ws / "m.py"), "replacements": 1}


async def test_edit_non_unique_match_lists_lines(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="(a, b):", new_string="(a, b, c):")
    assert result.is_error
    assert (
        "occurs 2 times" in result.output and "lines 1, 5" in result.output and "replace_all" in result.output
    )
    assert (ws / "m.py").read_text() == SOURCE


async def test_edit_replace_all(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="(a, b)", new_string="(x, y)", replace_all=True)
    assert not result.is_error and "2 occurrences" in result.output
    assert result.meta["replacements"] == 2
    assert (ws / "m.py").read_text().count("(x, y)") == 2


async def test_edit_absent_match_shows_closest_region(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="def sub(a, b):\n    return a-b", new_string="x")
    assert result.is_error
    assert "not found" in result.output
    assert "lines 5–6" in result.output
    assert "     5\tdef sub(a, b):" in result.output and "     6\t    return a - b" in result.output
    assert (ws / "m.py").read_text() == SOURCE


async def test_edit_whitespace_only_difference_is_named(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="def add(a, b):\n  return a + b", new_string="x")
    assert result.is_error and "only in whitespace" in result.output


async def test_edit_identical_strings_is_an_error(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="add", new_string="add")
    assert result.is_error and "identical" in result.output


async def test_edit_empty_old_string_creates_missing_file(ws: Path, call) -> None:
    result = await call("edit_file", path="new/file.txt", old_string="", new_string="hello\n")
    assert not result.is_error and result.output.startswith("Created new/file.txt")
    assert (ws / "new" / "file.txt").read_text() == "hello\n"


async def test_edit_empty_old_string_on_existing_file_is_an_error(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call("edit_file", path="m.py", old_string="", new_string="x")
    assert result.is_error and "already exists" in result.output
    assert (ws / "m.py").read_text() == SOURCE


async def test_edit_missing_file(ws: Path, call) -> None:
    result = await call("edit_file", path="nope.py", old_string="a", new_string="b")
    assert result.is_error and "no such file" in result.output


async def test_edit_binary_file_is_refused(ws: Path, call) -> None:
    (ws / "img.png").write_bytes(PNG)
    result = await call("edit_file", path="img.png", old_string="PNG", new_string="JPG")
    assert result.is_error and "binary file" in result.output
    assert (ws / "img.png").read_bytes() == PNG


async def test_edit_matches_lf_text_in_a_crlf_file(ws: Path, call) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call("edit_file", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not result.is_error
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_deleting_text(ws: Path, call) -> None:
    (ws / "m.py").write_text(SOURCE)
    result = await call(
        "edit_file", path="m.py", old_string="\n\ndef sub(a, b):\n    return a - b\n", new_string=""
    )
    assert not result.is_error
    assert (ws / "m.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert result.output.startswith("Edited m.py: removed 1 occurrence at line 3 (-4 lines).")
