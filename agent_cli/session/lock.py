"""One writer per session: an advisory lock (`fcntl.flock`) on `<session dir>/lock`, held while a
process has the session open for writing. The holder's pid is written into the file so a second
process can say who has it. The kernel drops the lock when the holder dies, even by `kill -9`."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agent_cli.core.errors import SessionError
from agent_cli.core.files import open_private, private_dir

LOCK = "lock"


class SessionLocked(SessionError):
    """Another process has this session open for writing."""

    def __init__(self, session_id: str, pid: int | None):
        self.session_id, self.pid = session_id, pid
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"session {session_id} is in use by {who}; "
            "add --fork-session to go on in a copy of it (a new session)"
        )
        self.hint = "add --fork-session to continue in a copy, or wait until the other agent ends"


class SessionLock:
    def __init__(self, session_dir: Path, session_id: str):
        self.path = session_dir / LOCK
        self.session_id = session_id
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock now or raise SessionLocked (never waits). Creates the session directory."""
        if self._fd is not None:
            return
        try:
            private_dir(self.path.parent)  # the session directory: 0700
            fd = open_private(self.path, os.O_RDWR)
        except OSError as exc:
            raise SessionError(f"cannot write the session directory {self.path.parent}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise SessionLocked(self.session_id, pid) from None
        with contextlib.suppress(OSError):  # the pid is a courtesy (disk full: the lock still holds)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        os.close(self._fd)  # closing the descriptor drops the flock
        self._fd = None


def holder(session_dir: Path) -> int | None:
    """The pid that has the session open for writing, or None when nobody has (a read-only probe)."""
    try:
        fd = os.open(session_dir / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_pid(fd) or -1
    finally:
        os.close(fd)
    return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None
