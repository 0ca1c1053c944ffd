"""The tokenizer's parsed table is cached on disk; a bad cache never changes a count."""

from __future__ import annotations

import marshal

import pytest

from agent_cli.context import encoding_cache
from agent_cli.context.tokens import ENCODING

TEXT = "def f(x):\n    return x ** 2  # squares 🙂, naïve café\n" * 20


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_CACHE_DIR", str(tmp_path / "cache"))
    encoding_cache.load_encoding.cache_clear()
    yield tmp_path / "cache" / f"{ENCODING}.marshal"
    encoding_cache.load_encoding.cache_clear()


def _tokens() -> list[int]:
    encoding_cache.load_encoding.cache_clear()
    return encoding_cache.load_encoding(ENCODING).encode_ordinary(TEXT)


def test_the_first_load_writes_the_cache_and_the_second_counts_the_same(fresh):
    assert not fresh.exists()
    first = _tokens()
    assert fresh.is_file() and fresh.stat().st_size > 1_000_000
    assert _tokens() == first
    import tiktoken

    assert first == tiktoken.get_encoding(ENCODING).encode_ordinary(TEXT)


@pytest.mark.parametrize("content", [b"", b"not marshal at all \x00\xff", marshal.dumps(("stale", {}))])
def test_a_corrupt_or_stale_cache_is_rebuilt_not_trusted(fresh, content):
    expected = _tokens()
    fresh.write_bytes(content)
    assert _tokens() == expected
    key, params = marshal.loads(fresh.read_bytes())  # rewritten whole
    assert params["mergeable_ranks"] and key[0] == encoding_cache.FORMAT


def test_a_cache_for_another_tokenizer_file_is_ignored(fresh):
    expected = _tokens()
    key, params = marshal.loads(fresh.read_bytes())
    params["mergeable_ranks"] = {b"x": 0}  # a table that would change every count
    fresh.write_bytes(marshal.dumps(((*key[:3], key[3] + 1, *key[4:]), params)))
    assert _tokens() == expected


def test_an_unwritable_cache_directory_still_loads(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory would be")
    monkeypatch.setenv("AGENT_CACHE_DIR", str(blocker / "cache"))
    encoding_cache.load_encoding.cache_clear()
    try:
        assert encoding_cache.load_encoding(ENCODING).encode_ordinary("hello") == [15339]
    finally:
        encoding_cache.load_encoding.cache_clear()


def test_the_cache_lives_under_xdg_cache_home():
    assert encoding_cache.cache_dir({"XDG_CACHE_HOME": "/x"}).as_posix() == "/x/agent"
    assert encoding_cache.cache_dir({"AGENT_CACHE_DIR": "/y", "XDG_CACHE_HOME": "/x"}).as_posix() == "/y"
