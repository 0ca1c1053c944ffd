"""The checkpoint store stays small however many snapshots a session takes, and a fork's store is
small and whole without its parent (session/checkpoint_store.py)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import time

import pytest

from agent_cli.session.checkpoints import SHADOW, Checkpoints

from .helpers import make_session, run

MIB = 2**20


def _disk_bytes(directory) -> int:
    return sum(p.lstat().st_blocks * 512 for p in directory.rglob("*") if p.is_file())


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _snapshots(points: Checkpoints, big, count: int) -> list[tuple[str, str]]:
    """`count` snapshots of `big`, 1 MiB of random bytes (zlib cannot shrink them), a few blocks
    rewritten before each: (commit, sha256 of the file then)."""
    rng = random.Random(5)
    data = bytearray(rng.randbytes(MIB))
    taken = []
    for number in range(count):
        for _ in range(4):
            at = rng.randrange(len(data) - 4096)
            data[at : at + 4096] = rng.randbytes(4096)
        big.write_bytes(data)
        taken.append((points.snapshot(f"before prompt {number + 1}").commit, _digest(big)))
    return taken


def _settle(points: Checkpoints) -> None:
    upkeep = getattr(points, "upkeep", None)  # the packing in the background: done before measuring
    if upkeep is not None:
        upkeep.settle()


def test_many_snapshots_of_a_changing_large_file_keep_the_store_small_and_every_one_restores(tmp_path):
    """24 versions of a 1 MiB file took 24 MiB of loose objects; packed, each version is a delta.
    Every snapshot, and the snapshot a rewind takes first (`/rewind undo`), still restores."""
    workspace, session = tmp_path / "ws", tmp_path / "session"
    workspace.mkdir()
    big = workspace / "data.bin"
    points = Checkpoints(workspace, session)
    taken = _snapshots(points, big, 24)
    _settle(points)
    store = _disk_bytes(session / SHADOW)
    assert store < 12 * MIB, f"the store takes {store / MIB:.1f} MiB after 24 snapshots of a 1 MiB file"
    undo = ""
    for commit, digest in reversed(taken):
        undo = points.restore(commit).undo
        assert _digest(big) == digest
    points.restore(undo)  # the state before the last rewind: the second snapshot's
    assert _digest(big) == taken[1][1]
    _settle(points)


def test_a_killed_repack_s_leftover_is_removed_after_a_day(tmp_path):
    workspace, session = tmp_path / "ws", tmp_path / "session"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    points = Checkpoints(workspace, session)
    points.snapshot("first")
    _settle(points)
    pack = session / SHADOW / "objects" / "pack"
    old, new = pack / "tmp_pack_AbCdEf", pack / ".tmp-4242-pack-0123.pack"
    for leftover in (old, new):
        leftover.write_bytes(b"PACK" + bytes(MIB))
    day_ago = time.time() - 25 * 3600
    os.utime(old, (day_ago, day_ago))
    points.snapshot("second")
    _settle(points)
    assert not old.exists() and new.exists()  # one still being written is left alone


async def test_a_fork_s_store_is_small_and_its_snapshots_restore_after_the_parent_is_deleted(workspace):
    from .test_loop import FIX_TASK

    original = (workspace / "app.py").read_text()
    first = make_session(workspace, FIX_TASK)
    await run(first, "fix add()")  # prompt 1's checkpoint: app.py as it was
    first.close()
    big = workspace / "data.bin"
    points = Checkpoints(workspace, first.session_dir)
    taken = _snapshots(points, big, 12)
    _settle(points)
    fork = make_session(workspace, [], resume=first.session_id, fork=True)
    fork.close()
    forked = _disk_bytes(fork.session_dir / SHADOW)
    assert forked < 3 * MIB, f"the fork's store takes {forked / MIB:.1f} MiB (12 versions of 1 MiB)"
    shutil.rmtree(first.session_dir)
    copy = Checkpoints(workspace, fork.session_dir)
    for commit, digest in taken:
        copy.restore(commit)
        assert _digest(big) == digest
    _settle(copy)
    again = make_session(workspace, [], resume=fork.session_id)
    said = await again.rewind(1, "code")  # the checkpoint its log names, from before the fork
    again.close()
    assert "restored" in said and (workspace / "app.py").read_text() == original
    assert big.exists() and "Kept 1 file(s) changed outside the agent's turns" in said  # not the agent's


def test_a_store_that_failed_to_pack_is_tried_again_only_once_twice_as_large(tmp_path):
    """A repack that fails (a store too large for git's timeout) is not started again after every
    snapshot, each one as doomed: the next try waits until the loose objects have doubled."""
    from agent_cli.session.checkpoint_store import Upkeep

    loose = tmp_path / "objects" / "ab"
    loose.mkdir(parents=True)
    calls = []

    def failing_git(*args: str) -> str:
        calls.append(args)
        raise RuntimeError("git repack took longer than 120 s")

    upkeep = Upkeep(tmp_path, failing_git, pack_at=1)
    (loose / "one").write_bytes(bytes(64 * 1024))
    assert not upkeep.pack_if_due() and len(calls) == 1 and "120 s" in upkeep.problem
    (loose / "two").write_bytes(bytes(16 * 1024))
    assert not upkeep.pack_if_due() and len(calls) == 1  # not yet twice as much
    (loose / "three").write_bytes(bytes(64 * 1024))
    assert not upkeep.pack_if_due() and len(calls) == 2


def test_a_fork_of_a_shipped_store_takes_no_objects_of_another_repository(tmp_path):
    """A shipped session's store can hold `objects/info/alternates` naming another repository's
    objects: the fork's repack followed it and copied that repository's files into the fork for good.
    Such a parent is copied as it is instead, and opening the copy drops the alternates."""
    from agent_cli.session.checkpoint_store import fork_store

    other = tmp_path / "private"
    other.mkdir()
    (other / "secret.txt").write_text("SECRET-OF-OTHER-REPO\n")
    theirs = Checkpoints(other, tmp_path / "other-session").snapshot("theirs").commit
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hi\n")
    parent = Checkpoints(ws, tmp_path / "parent")
    parent.snapshot("ours")
    (parent.git_dir / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (parent.git_dir / "objects" / "info" / "alternates").write_text(
        str(tmp_path / "other-session" / SHADOW / "objects") + "\n"
    )
    fork = Checkpoints(ws, tmp_path / "fork")
    fork._init()
    with pytest.raises(OSError):
        fork_store(parent.git_dir, fork.git_dir, fork._git)
    assert not any((fork.git_dir / "objects").glob("pack/*.pack"))
    assert theirs  # the other repository's snapshot exists, and nothing of it reached the fork
