"""What /rewind cannot bring back, said rather than hidden: a checkpoint that could not be taken,
nested repositories and submodules (gitlinks, not files), and large files the snapshots leave out."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agent_cli.core.events import Notice
from agent_cli.session.checkpoints import CheckpointError, Checkpoints
from agent_cli.session.log import EventLog
from agent_cli.session.rewind import Rewinder
from agent_cli.tui.screens.rewind_screen import prompt_label


def _rewinder(ws: Path, session: Path) -> tuple[Rewinder, EventLog]:
    log = EventLog(session)
    return Rewinder(ws, log, turn=lambda: 1, reopen=lambda: None, forget_note=lambda: None), log


def _repo(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "n.txt").write_text("nested then\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=path, check=True)
    subprocess.run([*git, "commit", "-qm", "n"], cwd=path, check=True)


async def test_a_checkpoint_that_failed_is_recorded_and_rewind_says_the_code_cannot_go_back(tmp_path):
    """Disk full (or no git): nothing was recorded, so /rewind told a later process "no changes were
    made from that prompt on; nothing to restore" while the agent had changed files."""
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    rewinder, log = _rewinder(ws, session)
    log.append("user", prompt="change a.txt")

    def full(message: str):
        raise CheckpointError("git write-tree failed: fatal: No space left on device")

    rewinder.checkpoints.snapshot = full  # type: ignore[method-assign]
    said: list[Notice] = []
    await rewinder.checkpoint(said.append)
    log.close()

    later, log = _rewinder(ws, session)  # another process reads the log
    (point,) = later.prompt_points()
    assert not point.checkpoint and "No space left on device" in point.not_taken
    assert "no checkpoint was taken (" in point.code_note() and "cannot be restored" in point.code_note()
    label = prompt_label(point.__dict__).plain
    assert "no code changes" not in label and "its code cannot be restored" in label
    text = await later.rewind(1, "both")
    assert "nothing to restore" not in text and "no changes were made" not in text
    assert "Code: no checkpoint was taken (git write-tree failed" in text
    assert "Conversation: back to before prompt 1" in text  # the conversation still goes back
    log.close()


async def test_nested_repositories_are_named_at_the_snapshot_and_at_the_rewind(tmp_path):
    """`git add -A` records a nested repository as a gitlink: /rewind restored the rest and left its
    files as the agent left them without a word."""
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    (ws / "a.txt").write_text("a then\n")
    _repo(ws / "lib")
    rewinder, log = _rewinder(ws, session)
    log.append("user", prompt="change things")
    said: list[Notice] = []
    await rewinder.checkpoint(said.append)
    await rewinder.checkpoint(said.append)
    assert len(said) == 1 and "lib/" in said[0].text and "cannot restore them" in said[0].text
    (ws / "a.txt").write_text("a now\n")
    (ws / "lib" / "n.txt").write_text("agent\n")
    _repo(ws / "made")  # a repository created since: not a file to unlink
    text = await rewinder.rewind(1, "code")
    assert (ws / "a.txt").read_text() == "a then\n"
    assert "restored 1 file(s): a.txt" in text
    assert "Not restored: lib/, made/ (a repository of its own: use its git)" in text
    log.close()


def test_a_snapshot_lists_its_gitlinks(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _repo(ws / "sub" / "inner")
    snap = Checkpoints(ws, tmp_path / "session").snapshot("before prompt 1")
    assert snap.nested == ("sub/inner",) and snap.nested_shown() == ["sub/inner/"]


async def test_the_rewind_names_the_large_files_it_left_as_they_are(tmp_path):
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    (ws / "big.dat").write_bytes(b"x" * 2000)
    (ws / "a.txt").write_text("then\n")
    rewinder, log = _rewinder(ws, session)
    rewinder.checkpoints.max_file_bytes = 1000
    log.append("user", prompt="change")
    await rewinder.checkpoint(lambda event: None)
    (ws / "a.txt").write_text("now\n")
    (ws / "big.dat").write_bytes(b"y" * 2000)
    text = await rewinder.rewind(1, "code")
    assert "Not in checkpoints, left as they are: 1 large file(s): big.dat." in text
    log.close()


def test_a_file_grown_past_the_size_limit_is_left_as_it_is(tmp_path):
    """A file small at the checkpoint and over the limit now is in no snapshot of now: the rewind
    overwrote it with the old copy (and said "left as they are"), and no undo could bring it back."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "grows.dat").write_bytes(b"small")
    cp = Checkpoints(ws, tmp_path / "session", max_file_bytes=1000)
    snap = cp.snapshot("before prompt 1")
    (ws / "grows.dat").write_bytes(b"y" * 2000)
    done = cp.restore(snap.commit)
    assert (ws / "grows.dat").read_bytes() == b"y" * 2000
    assert done.restored == () and done.skipped == ("grows.dat",)
