"""Writing files so that a crash never leaves a torn one: temp file in the same directory, fsync, rename.
And the agent's own private files and directories (sessions, outputs, trust answers): 0600 and 0700
whatever the umask, since they hold the conversation, tool output and what the person trusts."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def atomic_write(path: Path, text: str, *, errors: str = "strict", mode: int | None = None) -> None:
    """Write `text` (UTF-8) to `path` via a temp file and a rename.

    With `mode` the file ends with exactly that mode (and a missing parent directory is made
    private); without, an existing file keeps its permission bits and a new one gets the usual
    umask-derived mode."""
    atomic_write_bytes(path, text.encode("utf-8", errors), mode=mode)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` via a temp file and a rename (see `atomic_write`)."""
    if mode is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        private_dir(path.parent)
    try:
        old_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        old_mode = None
    tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)  # exact, whatever the umask
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None and old_mode is not None:
            os.chmod(tmp, old_mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def private_dir(path: Path) -> Path:
    """Make `path` and any missing parents as 0700 directories (directories that already exist keep
    their mode). Raises OSError as mkdir does."""
    missing = []
    here = path
    while not here.is_dir():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # made meanwhile by someone else: theirs, keep its mode
        os.chmod(directory, PRIVATE_DIR)  # mkdir's mode is masked by the umask
    return path


def open_private(path: Path, flags: int) -> int:
    """`os.open(path, flags | O_CREAT)` for one of our own files: created 0600, and an existing one
    (left by an older version) brought to 0600. Returns the descriptor."""
    fd = os.open(path, flags | os.O_CREAT, PRIVATE_FILE)  # new: at most 0600 under any umask
    if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE:
        with contextlib.suppress(OSError):  # someone else's file: left as it is
            os.fchmod(fd, PRIVATE_FILE)
    return fd
