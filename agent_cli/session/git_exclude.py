"""Our files kept out of the person's `git status`: `.agent/` and the session memory note go into the
repository's `.git/info/exclude` (never `.gitignore`, which is theirs and committed).

The agent writes it unconfined, at each start, in a folder a sandboxed command could change: never
through a link (`info/exclude` or `info` made a link to a file elsewhere, which the append would
write), a hard link or a FIFO. Such an exclude is left alone, and said.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def ensure_git_exclude(workspace: Path, patterns: tuple[str, ...] = (".agent/", ".session_memory.md")) -> str:
    """Keep our files out of the person's `git status` (.git/info/exclude, never .gitignore). Never
    through a link: a sandboxed command may have put one there to a file elsewhere, which this
    (unconfined) append would write. Such an exclude is left alone and said; "" otherwise."""
    git = workspace / ".git"
    if git.is_symlink() or not git.is_dir():
        return ""
    info = git / "info"
    exclude = info / "exclude"
    refused = (
        f"{exclude} is a link or not a plain file of the repository, so it was left alone "
        f"({', '.join(patterns)} may show in git status)"
    )
    try:
        if not info.is_symlink() and not info.exists():
            info.mkdir()
        if info.is_symlink() or Path(os.path.realpath(info)) != Path(os.path.realpath(git)) / "info":
            return refused
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(exclude, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return refused
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(fd)
            return refused  # a FIFO, or a hard link to a file elsewhere
        with os.fdopen(fd, "r+", encoding="utf-8", errors="surrogateescape") as fh:
            existing = fh.read()
            missing = [p for p in patterns if p not in existing.splitlines()]
            if missing:
                if existing and not existing.endswith("\n"):
                    fh.write("\n")
                fh.write("# added by agent\n" + "".join(p + "\n" for p in missing))
    except OSError:
        pass  # a read-only .git is not a reason to fail
    return ""
