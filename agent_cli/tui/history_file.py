"""The person's prompt history across sessions: Up after a restart brings back what they sent before.

One file per person, in their home, never in a workspace (a repository can neither ship one nor
find one there): `$XDG_STATE_HOME/agent/prompt-history.jsonl` (`~/.local/state/agent/…`), 0600 in a
0700 folder, a JSON line per prompt. The sandbox and the write tools keep it read-only
(tools/sandbox/protected.py), so a command cannot plant prompts for the person to send.

- Bounded: the newest `LIMIT` prompts are kept; the file is cut back to them once it has
  `TRIM_SLACK` more lines.
- Not kept: a prompt longer than `MAX_CHARS`, or holding a pasted chip (its paste lives only in the
  session it was pasted in).
- Several sessions at once: each prompt is one `write` of one line, in append mode, under an
  exclusive `flock` of a lock file beside it, which the cut-back holds too; the cut-back writes a new
  file and renames it over the old one. A reader skips a line that is not a whole entry.
- A file that cannot be read or written costs the history, never the prompt: `problem` says why once.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Mapping
from pathlib import Path

from agent_cli.core.files import PRIVATE_DIR, PRIVATE_FILE, atomic_write_bytes, open_private, private_dir
from agent_cli.core.surrogates import scrub

LIMIT = 1_000
TRIM_SLACK = 200
MAX_CHARS = 10_000
FILE_NAME = "prompt-history.jsonl"


def history_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/agent/prompt-history.jsonl`, `~/.local/state/agent/…` without it."""
    env = os.environ if env is None else env
    state = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state).expanduser() / "agent" / FILE_NAME


class HistoryFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = ""  # why the history could not be read or kept ("" while all is well)
        self._failed = False  # a write failed: the next failures are not said again

    def take_problem(self) -> str:
        """What went wrong since last asked ("" if nothing): said once, not at every prompt."""
        problem, self.problem = self.problem, ""
        return problem

    def load(self) -> list[str]:
        """The kept prompts, oldest first (none when there is no file, or it is not the person's)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = f"cannot read {self.path}: {exc.strerror or exc}"
            return []
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                self.problem = f"{self.path} belongs to someone else: not used"
                return []
            data = f.read()
        return _entries(data)[-LIMIT:]

    def append(self, text: str) -> bool:
        """Keep `text` (False when it is not kept: too long, or the file could not be written)."""
        if not text.strip() or len(text) > MAX_CHARS:
            return False
        line = _line(text)
        try:
            _own_folder(private_dir(self.path.parent))
            lock = open_private(self.path.with_name(self.path.name + ".lock"), os.O_WRONLY | os.O_NOFOLLOW)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                fd = open_private(self.path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW)
                try:
                    size = os.fstat(fd).st_size
                    torn = size and os.pread(fd, 1, size - 1) != b"\n"  # a writer that died mid-line
                    os.write(fd, b"\n" + line if torn else line)
                finally:
                    os.close(fd)
                if _line_count(self.path) > LIMIT + TRIM_SLACK:
                    self._trim()
            finally:
                os.close(lock)  # the lock goes with it
        except OSError as exc:
            if not self._failed:
                self.problem = f"prompt history not saved ({self.path}): {exc.strerror or exc}"
            self._failed = True
            return False
        return True

    def _trim(self) -> None:
        """Cut the file back to its newest LIMIT entries (the caller holds the lock)."""
        kept = _entries(self.path.read_bytes())[-LIMIT:]
        atomic_write_bytes(self.path, b"".join(_line(t) for t in kept), mode=PRIVATE_FILE)


def _own_folder(folder: Path) -> None:
    """Our folder is 0700 even if it was made before under another umask."""
    if folder.stat().st_mode & 0o777 != PRIVATE_DIR:
        os.chmod(folder, PRIVATE_DIR)


def _line(text: str) -> bytes:
    return json.dumps({"prompt": scrub(text)}, ensure_ascii=False).encode("utf-8") + b"\n"


def _entries(data: bytes) -> list[str]:
    out: list[str] = []
    for raw in data.splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue  # a torn or foreign line
        prompt = entry.get("prompt") if isinstance(entry, dict) else None
        if isinstance(prompt, str) and prompt.strip() and len(prompt) <= MAX_CHARS:
            out.append(prompt)
    return out


def _line_count(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
