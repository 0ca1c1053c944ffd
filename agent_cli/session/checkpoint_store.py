"""The checkpoint repository kept small (session/checkpoints.py is the repository itself).

A snapshot writes each new file version as a loose object: a whole zlib copy, no delta against the
version before. 40 snapshots of a changing 4 MB file took 168 MB (bench/checkpoint_store.py). So:

- `Upkeep`: after a snapshot, a background thread packs the store once its loose objects take
  PACK_AT_LOOSE_BYTES on disk. `git repack -a -d -k` writes one pack of every object, each version of
  a file a delta against another, then removes the packs and loose objects it holds. `-k` keeps the
  objects no ref reaches too: nothing is ever dropped (no prune, no gc), so a snapshot, a restore or
  another process's git running meanwhile finds every object it saw, in the old pack or the new.
  The snapshot does not wait for it; the person never does.
- `fork_store`: a fork's store is one pack of what its parent's refs reach, read from the parent
  through git alternates for the length of one repack, then standing alone: the parent can be
  deleted. git runs only on the fork's own repository (our config); the parent is read as objects.

Every snapshot stays reachable from the refs: each snapshot's commit has the one before as its
parent and HEAD names the last (the snapshot before a rewind, which `/rewind undo` restores, too).
"""

from __future__ import annotations

import contextlib
import os
import string
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.core.files import PRIVATE_FILE, atomic_write_bytes

# Pack once the loose objects take 8 MiB on disk (a small object still takes a 4 KiB block). This
# bounds what a store holds unpacked to about 8 MiB plus one snapshot, and keeps each repack short
# (bench/checkpoint_store.py, at load 6 on 2 cores, not niced: 0.3 s for two new versions of a 4 MB
# file, 2.1 s for the ~20 MiB of loose objects the first snapshot of a 5,000-file tree writes). On
# the 40 x 4 MB case packing every snapshot gave 5.6 MB, every 2nd (this bound) 5.8, every 4th 6.3:
# a lower bound only repacks more often; a higher one lets tens of MB lie loose.
PACK_AT_LOOSE_BYTES = 8 * 2**20
# The packing thread's niceness (and its git's, which inherits it): a repack then takes only the CPU
# a snapshot, a tool or the TUI leave free. Linux only, where niceness is per thread (elsewhere it
# would slow the whole agent).
BACKGROUND_NICENESS = 10
# A repack killed mid-way (the git timeout, a signal) leaves its temporary pack behind, and git
# never removes one short of a gc. One older than a day is no git's work in progress (a repack
# writes its temporary files continuously and renames them in minutes at most): it is removed.
STALE_TEMPORARY_SECONDS = 24 * 3600
REPACK = ("repack", "-a", "-d", "-k", "-q")
ALTERNATES = ("alternates", "http-alternates")  # objects/info/: another store's objects, read by git

Git = Callable[..., str]  # runs git on one repository: checkpoints.Checkpoints._git


@dataclass
class Upkeep:
    """Packs one checkpoint repository in the background when its loose objects pass the bound."""

    git_dir: Path
    git: Git
    pack_at: int = PACK_AT_LOOSE_BYTES
    problem: str = ""  # why the last packing failed ("" when it did not): the store is only larger
    _retry_at: int = field(default=0, init=False)  # loose bytes at which to try again after a failure
    _due: bool = field(default=False, init=False)  # a snapshot since the thread last looked
    _thread: threading.Thread | None = field(default=None, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def after_snapshot(self) -> None:
        """Look at the store (and pack it when due) in a thread of its own. One already running
        looks again when it is done, so the last snapshot's objects are always counted."""
        with self._lock:
            self._due = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="checkpoint-pack", daemon=True)
                self._thread.start()

    def settle(self) -> None:
        """Wait until the thread is done (tests, the bench; a snapshot never needs to)."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _work(self) -> None:
        if sys.platform == "linux":  # this thread only (and the git it starts)
            with contextlib.suppress(OSError):
                os.nice(BACKGROUND_NICENESS)
        while True:
            with self._lock:
                if not self._due:
                    self._thread = None
                    return
                self._due = False
            self.pack_if_due()

    def pack_if_due(self) -> bool:
        """Pack when the loose objects take `pack_at` bytes; True when it packed. After a failure
        (a store too large to pack within git's timeout), not again until they take twice as much."""
        loose = 0
        try:
            remove_stale_temporaries(self.git_dir)
            loose = loose_bytes(self.git_dir)
            if loose < max(self.pack_at, self._retry_at):
                return False
            self.git(*REPACK)
        except Exception as exc:  # noqa: BLE001 - a background thread: said here, the store is only larger
            self.problem = f"{type(exc).__name__}: {exc}"[:300]
            self._retry_at = 2 * loose
            return False
        self.problem, self._retry_at = "", 0
        return True


def loose_bytes(git_dir: Path) -> int:
    """The disk space the repository's loose objects (`objects/xx/…`) take."""
    total = 0
    for folder in _entries(git_dir / "objects"):
        if len(folder.name) == 2 and set(folder.name) <= set(string.hexdigits):
            for entry in _entries(Path(folder.path)):
                try:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
                except OSError:  # packed away meanwhile
                    continue
    return total


def remove_stale_temporaries(git_dir: Path, now: float | None = None) -> None:
    """Remove the temporary pack files a killed repack left (older than STALE_TEMPORARY_SECONDS)."""
    cutoff = (time.time() if now is None else now) - STALE_TEMPORARY_SECONDS
    for entry in _entries(git_dir / "objects" / "pack"):
        if entry.name.startswith(("tmp_", ".tmp-")):
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue


def fork_store(parent: Path, store: Path, git: Git) -> None:
    """Make `store` (a new repository with our config; `git` runs there) hold every snapshot of the
    `parent` repository, in a pack of its own. Raises OSError or the git runner's error; the
    caller then copies the parent whole."""
    source = str((parent / "objects").absolute())
    if any(os.path.lexists(parent / "objects" / "info" / name) for name in ALTERNATES):
        # never ours (a shipped session's): git would follow it and copy another repository's objects
        raise OSError("the parent store reads objects of another repository")
    if any(c in source for c in "\n\r"):  # one line of the alternates file each
        raise OSError(f"cannot name {source!r} as an alternate object store")
    # the refs, as files (git reads them in `store`, never in `parent`), and the index: its objects
    # are packed too, and the fork's first snapshot need not read every file again
    names = [Path(name) for name in ("HEAD", "packed-refs", "index") if (parent / name).is_file()]
    for top, _, files in os.walk(parent / "refs"):
        names += [Path(top, name).relative_to(parent) for name in files]
    for name in names:
        atomic_write_bytes(store / name, (parent / name).read_bytes(), mode=PRIVATE_FILE)
    alternates = store / "objects" / "info" / "alternates"
    atomic_write_bytes(alternates, os.fsencode(source + "\n"), mode=PRIVATE_FILE)
    try:
        git(*REPACK)  # without -l: what the refs reach in the parent is copied into the new pack
    finally:
        alternates.unlink(missing_ok=True)
    git("rev-list", "--objects", "--all", "--quiet")  # alone now: every snapshot is complete


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        return []
