"""The offload store: originals by ref, atomic files, safe names."""

from __future__ import annotations

import pytest

from agent_cli.context.store import DirStore, MemoryStore, is_valid_ref, safe_ref


def test_dir_store_round_trip(tmp_path):
    store = DirStore(tmp_path)
    text = "line one\nλ ünïcødé ✓\n" * 1000
    path = store.put("toolu_01ABC", text)
    assert path == tmp_path / "tool-results" / "toolu_01ABC.txt"
    assert path.read_text(encoding="utf-8") == text
    assert store.get("toolu_01ABC") == text
    assert store.refs() == ["toolu_01ABC"]
    assert "toolu_01ABC" in store


def test_writes_leave_no_temporary_files(tmp_path):
    store = DirStore(tmp_path)
    store.put("a", "first")
    store.put("a", "second")
    store.put("b", "x")
    assert sorted(p.name for p in (tmp_path / "tool-results").iterdir()) == ["a.txt", "b.txt"]
    assert store.get("a") == "second"


def test_odd_text_survives(tmp_path):
    store = DirStore(tmp_path)
    text = "crlf\r\nlone surrogate \udcff and NUL \x00"
    store.put("odd", text)
    assert store.get("odd") == text


def test_missing_refs(tmp_path):
    store = DirStore(tmp_path)
    assert store.get("nothing") is None
    assert store.refs() == []
    assert store.get("../etc/passwd") is None


@pytest.mark.parametrize("ref", ["", "../x", "a/b", ".hidden", "a..b", "x" * 201, "sp ace", "-dash"])
def test_unsafe_refs_are_refused(tmp_path, ref):
    assert not is_valid_ref(ref)
    with pytest.raises(ValueError, match="invalid ref"):
        DirStore(tmp_path).put(ref, "x")
    with pytest.raises(ValueError, match="invalid ref"):
        MemoryStore().put(ref, "x")
    assert not (tmp_path / "x").exists()


def test_memory_store():
    store = MemoryStore()
    assert store.put("paste-1", "text") is None
    assert store.get("paste-1") == "text"
    assert store.refs() == ["paste-1"]
    assert store.get("other") is None


def test_safe_ref_keeps_good_ids_and_fixes_bad_ones():
    assert safe_ref("toolu_01ABC") == "toolu_01ABC"
    fixed = safe_ref("call:1/2")
    assert is_valid_ref(fixed)
    assert fixed != safe_ref("call:1/3")  # different ids stay different
    assert safe_ref("call:1/2") == fixed  # and stable
    assert is_valid_ref(safe_ref("///"))


def test_a_stored_output_that_is_a_link_is_not_read(tmp_path):
    """`recall` reads the store: a link planted there (to ~/.ssh/id_rsa) is no stored output."""
    secret = tmp_path / "secret"
    secret.write_text("KEY")
    store = DirStore(tmp_path / "session")
    store.put("toolu_real", "ours")
    (store.directory / "toolu_x1.txt").symlink_to(secret)
    assert store.get("toolu_real") == "ours" and store.get("toolu_x1") is None
    linked = DirStore(tmp_path / "other")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tool-results").symlink_to(store.directory)
    assert linked.get("toolu_real") is None
