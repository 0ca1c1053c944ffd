"""The session seal's key, made by the first agent that needs it: when several start at once on a
fresh machine (a batch's workers), they all seal with the one key on disk, so `--continue` later
finds every one of their sessions."""

from __future__ import annotations

from pathlib import Path

from agent_cli.session.seal import SessionSeal


def test_an_agent_that_found_no_key_but_comes_second_uses_the_first_ones(tmp_path, monkeypatch):
    key = tmp_path / "cfg" / "session.key"
    first, second = SessionSeal(key), SessionSeal(key)
    sealed = first.seal("s1", tmp_path)
    # the second looked before the first had written its key: it found none
    real_read = Path.read_bytes
    looked: list[Path] = []

    def read_bytes(path: Path) -> bytes:
        if path == key and not looked:
            looked.append(path)
            raise FileNotFoundError(path)
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    second_sealed = second.seal("s2", tmp_path)
    monkeypatch.undo()

    assert looked == [key]
    check = SessionSeal(key)
    assert check.verify("s1", tmp_path, sealed), "the first agent's sessions lost their seal"
    assert check.verify("s2", tmp_path, second_sealed)
    assert [p.name for p in key.parent.iterdir()] == ["session.key"]  # no draft left behind
