"""grep (ripgrep and the Python fallback), glob and ls — all gitignore-aware."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import agent_cli.tools.grep as grep_module
from agent_cli.tools.grep import find_rg

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR needle"


@pytest.fixture
def tree(ws: Path) -> Path:
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("import os\n\ndef main():\n    print('needle one')\n    return 0\n")
    (ws / "src" / "util.py").write_text("NEEDLE = 1\nneedle_two = 2\n# nothing\n")
    (ws / "src" / "web").mkdir()
    (ws / "src" / "web" / "page.ts").write_text("const needle = 'x';\n")
    (ws / "src" / ".gitignore").write_text("generated.py\n")
    (ws / "src" / "generated.py").write_text("needle generated\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("needle in build\n")
    (ws / "debug.log").write_text("needle in log\n")
    (ws / "README.md").write_text("A needle in the readme.\n")
    (ws / ".hidden.cfg").write_text("needle hidden\n")
    (ws / "image.png").write_bytes(PNG)
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle in git\n")
    (ws / ".agent").mkdir()
    (ws / ".agent" / "events.jsonl").write_text("needle in agent\n")
    return ws


@pytest.fixture(params=["rg", "python"])
def engine(request, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "rg":
        if find_rg() is None:
            pytest.skip("rg is not installed")
    else:
        monkeypatch.setattr(grep_module, "find_rg", lambda: None)
    return request.param


def test_rg_is_found_next_to_python() -> None:
    assert find_rg() is not None


async def test_grep_files_skips_ignored_binary_and_git(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="needle")
    assert not result.is_error
    assert result.output.splitlines() == [
        ".hidden.cfg",
        "README.md",
        "src/app.py",
        "src/util.py",
        "src/web/page.ts",
    ]


async def test_grep_content_with_context(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="needle", output_mode="content", context=1, path="src")
    assert result.output == (
        "src/app.py\n3-def main():\n4:    print('needle one')\n5-    return 0\n\n"
        "src/util.py\n1-NEEDLE = 1\n2:needle_two = 2\n3-# nothing\n\n"
        "src/web/page.ts\n1:const needle = 'x';"
    )


async def test_grep_count_ignore_case_and_glob(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="needle", output_mode="count", ignore_case=True, glob="*.py")
    assert result.output == "src/app.py:1\nsrc/util.py:2\n(3 matching lines in 2 files)"


async def test_grep_glob_with_directories(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="needle", glob="src/**/*.ts")
    assert result.output == "src/web/page.ts"


async def test_grep_single_file(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="needle", path="src/util.py", output_mode="content")
    assert result.output == "src/util.py\n2:needle_two = 2"


async def test_grep_no_matches(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="haystack")
    assert not result.is_error and result.output == "No matches for 'haystack' in the workspace."


async def test_grep_invalid_regex(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="foo(")
    assert result.is_error and "invalid regular expression" in result.output


async def test_grep_missing_path(tree: Path, call, engine: str) -> None:
    result = await call("grep", pattern="x", path="nowhere")
    assert result.is_error and "no such file" in result.output


async def test_grep_caps_at_250_and_says_how_many_more(ws: Path, call, engine: str) -> None:
    (ws / "many.txt").write_text("hit\n" * 300)
    (ws / "more.txt").write_text("hit\n" * 10)
    result = await call("grep", pattern="hit", output_mode="content")
    lines = result.output.splitlines()
    assert sum(1 for line in lines if line.endswith(":hit")) == 250
    assert "… 60 more matches in 1 more files not shown (limit 250)" in result.output
    small = await call("grep", pattern="hit", output_mode="content", max_results=3)
    assert small.output.startswith("many.txt\n1:hit\n2:hit\n3:hit\n… 307 more matches")


async def test_grep_engines_agree(tree: Path, call, monkeypatch: pytest.MonkeyPatch) -> None:
    if find_rg() is None:
        pytest.skip("rg is not installed")
    queries = [
        {"pattern": r"ne+dle\w*", "output_mode": "content", "context": 2},
        {"pattern": "needle", "output_mode": "count"},
        {"pattern": "NEEDLE", "ignore_case": True},
        {"pattern": "^import", "output_mode": "content", "glob": "*.{py,ts}"},
    ]
    with_rg = [(await call("grep", **q)).output for q in queries]
    monkeypatch.setattr(grep_module, "find_rg", lambda: None)
    with_python = [(await call("grep", **q)).output for q in queries]
    assert with_rg == with_python


# -- glob ----------------------------------------------------------------------------------------------


async def test_glob_newest_first_and_gitignore_aware(tree: Path, call) -> None:
    os.utime(tree / "src" / "util.py", (1_000_000, 1_000_000))
    os.utime(tree / "src" / "app.py", (2_000_000, 2_000_000))
    result = await call("glob", pattern="**/*.py")
    assert result.output.splitlines() == ["src/app.py", "src/util.py"]


async def test_glob_top_level_only_and_path(tree: Path, call) -> None:
    assert (await call("glob", pattern="*.md")).output == "README.md"
    assert (await call("glob", pattern="*.py")).output == "No files match '*.py' in the workspace."
    assert (await call("glob", pattern="*.ts", path="src/web")).output == "src/web/page.ts"


async def test_glob_absolute_pattern(tree: Path, call) -> None:
    result = await call("glob", pattern=f"{tree}/src/**/*.ts")
    assert result.output == "src/web/page.ts"


async def test_glob_caps_at_1000(ws: Path, call) -> None:
    (ws / "d").mkdir()
    for i in range(1005):
        (ws / "d" / f"f{i}.txt").write_text("")
    result = await call("glob", pattern="d/*.txt")
    assert len(result.output.splitlines()) == 1001
    assert "5 more files not shown" in result.output


async def test_glob_missing_path(ws: Path, call) -> None:
    result = await call("glob", pattern="*", path="nope")
    assert result.is_error and "no such file" in result.output


# -- ls ------------------------------------------------------------------------------------------------


async def test_ls_tree_is_gitignore_aware(tree: Path, call) -> None:
    result = await call("ls")
    assert result.output == "\n".join(
        [
            "./",
            "  .gitignore",
            "  .hidden.cfg",
            "  README.md",
            "  image.png",
            "  src/",
            "    .gitignore",
            "    app.py",
            "    util.py",
            "    web/",
            "      page.ts",
        ]
    )


async def test_ls_cap_keeps_shallow_levels(ws: Path, call, monkeypatch: pytest.MonkeyPatch) -> None:
    import agent_cli.tools.ls as ls_module

    monkeypatch.setattr(ls_module, "MAX_ENTRIES", 4)
    (ws / "a").mkdir()
    for i in range(5):
        (ws / "a" / f"deep{i}.txt").write_text("")
    (ws / "b.txt").write_text("")
    (ws / "c.txt").write_text("")
    result = await call("ls")
    assert result.output.splitlines() == [
        "./",
        "  a/",
        "    deep0.txt",
        "    … 4 more entries",
        "  b.txt",
        "  c.txt",
        "(8 entries; 4 shown — list a subdirectory to see the rest)",
    ]


async def test_ls_errors(ws: Path, call) -> None:
    (ws / "f.txt").write_text("x")
    assert "is a file" in (await call("ls", path="f.txt")).output
    missing = await call("ls", path="nope")
    assert missing.is_error and "no such file" in missing.output


async def test_ls_empty_directory(ws: Path, call) -> None:
    result = await call("ls")
    assert result.output == "./\n  (empty)"


async def test_a_name_that_is_not_utf8_is_shown_escaped_and_reached_as_shown(
    ws: Path, call, engine: str
) -> None:
    """os.scandir (and rg) give such a name with lone surrogates, which no request can carry: the
    tools show its odd byte as `\\xe9`, and read_file and edit_file take the name as shown."""
    (ws / "sub").mkdir()
    (ws / "sub" / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"needle\n")
    outputs = [
        (await call("ls")).output,
        (await call("glob", pattern="**/*.txt")).output,
        (await call("grep", pattern="needle")).output,
        (await call("grep", pattern="needle", output_mode="content")).output,
        (await call("grep", pattern="needle", output_mode="count")).output,
    ]
    assert all("caf\\xe9.txt" in out for out in outputs), outputs
    assert all(out.encode("utf-8") for out in outputs)  # no lone surrogate left
    read = await call("read_file", path="sub/caf\\xe9.txt")
    assert not read.is_error and "needle" in read.output
    edit = await call("edit_file", path="sub/caf\\xe9.txt", old_string="needle", new_string="pin")
    assert not edit.is_error, edit.output
    assert (ws / "sub" / os.fsdecode(b"caf\xe9.txt")).read_bytes() == b"pin\n"


async def test_a_name_spelled_with_a_backslash_x_is_that_name_when_it_exists(ws: Path, call) -> None:
    (ws / "caf\\xe9.txt").write_text("literal\n")
    (ws / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1\n")
    assert "literal" in (await call("read_file", path="caf\\xe9.txt")).output
