from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.core.errors import ToolError
from agent_cli.tools.fs import (
    HeadTail,
    cap_text,
    is_binary,
    is_inside,
    resolve_path,
    sniff_kind,
    walk,
)
from agent_cli.tools.glob import glob_to_regex
from agent_cli.tools.write import atomic_write

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


def rel_files(root: Path, **kw) -> list[str]:
    return [e.path.relative_to(root).as_posix() + ("/" if e.is_dir else "") for e in walk(root, root, **kw)]


def test_resolve_relative_absolute_and_home(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_path(ws, "a/../b.txt") == ws / "b.txt"
    assert resolve_path(ws, "/etc/hosts") == Path("/etc/hosts")
    monkeypatch.setenv("HOME", str(ws / "home"))
    assert resolve_path(ws, "~/notes.md") == ws / "home" / "notes.md"
    with pytest.raises(ToolError):
        resolve_path(ws, "  ")


def test_is_inside_follows_symlinks(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    assert is_inside(ws, ws / "src" / "new.py")
    assert not is_inside(ws, ws / ".." / "x")
    assert not is_inside(ws, Path("/etc/passwd"))
    assert not is_inside(ws, ws / "link" / "file.txt")


def test_binary_detection() -> None:
    assert is_binary(PNG)
    assert sniff_kind(PNG) == "PNG"
    assert sniff_kind(b"\x7fELF\x02\x01") == "ELF"
    assert not is_binary("héllo wörld\n".encode())
    assert not is_binary(b"caf\xe9 latin-1\n")  # Latin-1 is text (issue 10)
    assert is_binary(b"\x00\x01\x02\x03\xff\xfe\x80" * 20)
    # a multi-byte character cut by the end of the sample is still text
    sample = ("x" * 8191 + "é").encode()[:8192]
    assert not is_binary(sample)


def test_walk_honours_gitignore_at_every_level(ws: Path) -> None:
    (ws / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    (ws / "app.log").write_text("x")
    (ws / "keep.log").write_text("x")
    (ws / "build").mkdir()
    (ws / "build" / "out.js").write_text("x")
    (ws / "src").mkdir()
    (ws / "src" / ".gitignore").write_text("secret.txt\n/local_only\n")
    (ws / "src" / "main.py").write_text("x")
    (ws / "src" / "secret.txt").write_text("x")
    (ws / "src" / "local_only").write_text("x")
    (ws / "local_only").write_text("anchored in src/, so this one stays")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref")
    (ws / ".agent").mkdir()
    (ws / ".agent" / "log").write_text("x")
    (ws / ".env.example").write_text("x")
    files = rel_files(ws)
    assert files == [".env.example", ".gitignore", "keep.log", "local_only", "src/.gitignore", "src/main.py"]
    assert rel_files(ws / "src", include_dirs=False) == [".gitignore", "main.py"]


def test_walk_from_subdirectory_applies_parent_gitignore(ws: Path) -> None:
    (ws / ".gitignore").write_text("*.tmp\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "a.tmp").write_text("x")
    (ws / "pkg" / "a.py").write_text("x")
    assert [e.path.name for e in walk(ws / "pkg", ws)] == ["a.py"]


def test_head_tail_keeps_both_ends_and_counts_the_rest() -> None:
    buffer = HeadTail(head=100, tail=100)
    for i in range(10_000):
        buffer.feed(f"line {i}\n")
    text = buffer.text()
    assert text.startswith("line 0\n")
    assert text.endswith("line 9999\n")
    assert "chars /" in text and "lines omitted" in text
    assert len(text) < 300
    kept = [line for line in text.splitlines() if line.startswith("line ")]
    assert all(line.split()[1].isdigit() for line in kept)  # cut at line ends: no partial lines


def test_cap_text_leaves_short_text_alone() -> None:
    assert cap_text("short\n", 100) == "short\n"
    capped = cap_text("".join(f"{i}\n" for i in range(1000)), 200)
    assert capped.startswith("0\n1\n") and capped.endswith("999\n") and "omitted" in capped


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*.py", ["a.py"], ["src/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "src/a.py", "src/x/y.py"], ["a.txt"]),
        ("src/**", ["src/a", "src/x/y.py"], ["lib/a"]),
        ("*.{ts,tsx}", ["a.ts", "b.tsx"], ["c.js"]),
        ("file?.[ch]", ["file1.c", "fileA.h"], ["file10.c", "file1.o"]),
        ("[!a]*", ["b.txt"], ["a.txt"]),
    ],
)
def test_glob_to_regex(pattern: str, yes: list[str], no: list[str]) -> None:
    regex = glob_to_regex(pattern)
    assert all(regex.match(p) for p in yes), pattern
    assert not any(regex.match(p) for p in no), pattern


def test_atomic_write_keeps_mode_and_leaves_no_temp(ws: Path) -> None:
    target = ws / "script.sh"
    target.write_text("old")
    os.chmod(target, 0o755)
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in ws.iterdir()] == ["script.sh"]
