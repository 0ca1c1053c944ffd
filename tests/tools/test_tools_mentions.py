"""`@` mentions read out of a prompt, resolved to the call that attaches them, and the workspace's file
index they complete against (gitignore-aware, fuzzy, shallow and exact matches first)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.tools.mentions.index import FileIndex
from agent_cli.tools.mentions.parse import find_mentions, mention_at, mention_text
from agent_cli.tools.mentions.resolve import resolve


def _found(words: str) -> list[tuple[str, int | None, int | None, bool]]:
    return [(m.path, m.first, m.last, m.pasted) for m in find_mentions(words)]


def test_mentions_with_ranges_quotes_and_sentence_punctuation():
    assert _found("fix @src/app.py#L20-45 and @README.md.") == [
        ("src/app.py", 20, 45, False),
        ("README.md", None, None, False),
    ]
    assert _found("one line @a.py#L7, reversed @b.py#L9-L3") == [("a.py", 7, 7, False), ("b.py", 3, 9, False)]
    assert _found('quoted @"my notes.txt" and escaped @my\\ notes.txt') == [
        ("my notes.txt", None, None, False),
        ("my notes.txt", None, None, False),
    ]
    assert _found("mail me@example.com, or @ alone, or @@x") == []  # an address, a bare @, a doubled @


def test_pasted_image_paths_are_absolute_and_name_an_image():
    assert _found("see /tmp/Screen\\ Shot.png please") == [("/tmp/Screen Shot.png", None, None, True)]
    assert _found("'/home/a/b c.JPG' and file:///tmp/x%20y.webp") == [
        ("/home/a/b c.JPG", None, None, True),
        ("/tmp/x y.webp", None, None, True),
    ]
    assert _found("the logo.png is off, see /etc/passwd and /tmp/notes.txt") == []  # relative; not images


@pytest.mark.parametrize(
    ("path", "word"),
    [
        ("src/app.py", "@src/app.py"),
        ("my notes.txt", '@"my notes.txt"'),
        ("weird#name.py", '@"weird#name.py"'),
        ('a"quote.txt', '@"a\\"quote.txt"'),
        ("@at.txt", '@"@at.txt"'),
        ("notes.", '@"notes."'),  # a bare mention drops a sentence's last dot
        ("it's(1).md", '@"it\'s(1).md"'),
        ("back\\ slash", '@"back\\\\ slash"'),
    ],
)
def test_mention_text_writes_what_the_parser_reads_back(path: str, word: str):
    assert mention_text(path) == word
    assert _found(f"look at {word}, then go on") == [(path, None, None, False)]
    assert _found(f"{word}#L3-5") == [(path, 3, 5, False)]


def test_the_at_word_being_typed():
    assert mention_at("explain @src/ap", 15) == (8, "src/ap")
    assert mention_at("explain @src/app.py now", 23) is None  # past it
    assert mention_at("me@example", 10) is None
    assert mention_at("@", 1) == (0, "")


def test_resolve_says_what_a_mention_attaches(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "tool").write_bytes(b"\x7fELF\x00\x01" * 50)

    def one(words: str):
        return resolve(tmp_path, find_mentions(words)[0])

    text = one("@src/a.py#L2-4000")
    assert (text.tool, text.input) == ("read_file", {"path": "src/a.py", "offset": 2, "limit": 2000})
    assert (one("@src").tool, one("@src").input) == ("ls", {"path": "src"})
    assert one("@nope.py").error == "@nope.py: no such file or directory"
    assert one("@tool").error == "@tool: a binary file (ELF), not text" and not one("@tool").tool
    os.mkfifo(tmp_path / "pipe.png")  # never opened: reading a FIFO would wait forever
    assert one("@pipe.png").error == "@pipe.png: not a regular file"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in (
        "agent_cli/tui/app.py",
        "agent_cli/tui/widgets/prompt_input.py",
        "agent_cli/agent/api.py",
        "docs/app_notes.md",
        "build/app.py",
        "applications.txt",
        ".github/workflows/ci.yml",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return tmp_path


@pytest.mark.parametrize("ripgrep", [True, False], ids=["rg", "walk"])
def test_the_index_is_gitignore_aware_and_ranks_file_names_first(tree: Path, ripgrep: bool):
    index = FileIndex(tree) if ripgrep else FileIndex(tree, finder=lambda: None)
    index.build()
    every = index.query("", limit=100)
    assert "build/app.py" not in every and not any(p.startswith(".git/") for p in every)
    assert ".github/workflows/ci.yml" in every and "agent_cli/tui/" in every  # dot-dirs and directories
    assert index.query("app")[:3] == ["agent_cli/tui/app.py", "docs/app_notes.md", "applications.txt"]
    assert index.query("tuiapp")[0] == "agent_cli/tui/app.py"  # fuzzy: in order, anywhere
    assert index.query("promptinp") == ["agent_cli/tui/widgets/prompt_input.py"]
    assert index.query("promptinpx") == []  # narrowing from a complete answer: still right
    assert index.query("zzz") == []


def test_the_index_sees_new_files_after_a_refresh(tree: Path):
    now = [0.0]
    index = FileIndex(tree, clock=lambda: now[0])
    index.build()
    (tree / "fresh_module.py").write_text("")
    assert index.query("fresh") == []
    now[0] += 60  # stale: the next query starts a new listing
    index.refresh()
    assert index._building is not None
    index._building.join()
    assert index.query("fresh") == ["fresh_module.py"]
