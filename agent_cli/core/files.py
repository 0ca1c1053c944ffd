"""Writing files so that a crash never leaves a torn one: temp file in the same directory, fsync, rename."""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write(path: Path, text: str, *, errors: str = "strict") -> None:
    """Write `text` (UTF-8) to `path` via a temp file and a rename.

    An existing file keeps its permission bits; a new one gets the usual umask-derived mode."""
    atomic_write_bytes(path, text.encode("utf-8", errors))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temp file and a rename (see `atomic_write`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        old_mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        old_mode = None
    tmp = path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if old_mode is not None:
            os.chmod(tmp, old_mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
