"""Where originals live once they leave the context: offloaded outputs, cleared results, compacted spans.

`DirStore` keeps them as `tool-results/<ref>.txt` in the session directory, written atomically;
`MemoryStore` keeps them in a dict (replay, tests). Both satisfy `tools.base.RecallStore`.
"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Protocol, TextIO

from agent_cli.core.files import PRIVATE_FILE, atomic_write, open_private, private_dir
from agent_cli.core.persisted import is_valid_ref, safe_ref, validate_ref  # noqa: F401 - re-exported

_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # lone surrogates (odd tool output) survive the round trip


class OffloadStore(Protocol):
    def get(self, ref: str) -> str | None: ...

    def refs(self) -> list[str]: ...

    def put(self, ref: str, text: str) -> Path | None:
        """Keep `text` under `ref`; returns the file it is in, or None for an in-memory store."""
        ...


class OutputWriter:
    """Text written piece by piece under a ref; `close()` makes it visible (atomically, for a file).

    `abort()` throws away what was written. Used for a tool's full output while it streams."""

    def __init__(self, stream: TextIO, finish, discard) -> None:
        self._stream = stream
        self._finish = finish
        self._discard = discard
        self.closed = False

    def write(self, text: str) -> None:
        self._stream.write(text)

    def close(self) -> Path | None:
        self.closed = True
        return self._finish()

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self._discard()


class MemoryStore:
    def __init__(self) -> None:
        self._items: dict[str, str] = {}

    def put(self, ref: str, text: str) -> Path | None:
        self._items[validate_ref(ref)] = text
        return None

    def get(self, ref: str) -> str | None:
        return self._items.get(ref)

    def open_output(self, ref: str) -> OutputWriter:
        validate_ref(ref)
        buffer = io.StringIO()

        def finish() -> None:
            self._items[ref] = buffer.getvalue()

        return OutputWriter(buffer, finish, buffer.close)

    def refs(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, ref: object) -> bool:
        return ref in self._items


class DirStore:
    """`<session_dir>/tool-results/<ref>.txt`; the directory is created on the first write."""

    def __init__(self, session_dir: Path | str) -> None:
        self.directory = Path(session_dir) / "tool-results"

    def path(self, ref: str) -> Path:
        return self.directory / f"{validate_ref(ref)}.txt"

    def put(self, ref: str, text: str) -> Path | None:
        target = self.path(ref)
        atomic_write(target, text, errors=_ERRORS, mode=PRIVATE_FILE)
        return target

    def open_output(self, ref: str) -> OutputWriter:
        """A writer to `tool-results/<ref>.txt` through a temp file, renamed into place on close."""
        target = self.path(ref)
        private_dir(self.directory)
        tmp = self.directory / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.part"
        fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)  # 0600: tool output may hold anything
        stream = open(fd, "w", encoding=_ENCODING, errors=_ERRORS, newline="")  # noqa: SIM115

        def finish() -> Path:
            try:
                stream.flush()
                os.fsync(stream.fileno())
                stream.close()
                os.replace(tmp, target)
            except BaseException:
                stream.close()
                tmp.unlink(missing_ok=True)
                raise
            return target

        def discard() -> None:
            stream.close()
            tmp.unlink(missing_ok=True)

        return OutputWriter(stream, finish, discard)

    def get(self, ref: str) -> str | None:
        if not is_valid_ref(ref):
            return None
        target = self.directory / f"{ref}.txt"
        try:  # never through a link: a shipped session's `tool-results/x.txt` naming ~/.ssh/id_rsa
            if self.directory.is_symlink():
                return None
            with open(os.open(target, os.O_RDONLY | os.O_NOFOLLOW), "rb") as fh:
                data = fh.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise
        try:
            return data.decode(_ENCODING, _ERRORS)
        except UnicodeDecodeError:
            return data.decode(_ENCODING, "replace")

    def refs(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.txt") if is_valid_ref(p.stem))

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and is_valid_ref(ref) and (self.directory / f"{ref}.txt").is_file()
