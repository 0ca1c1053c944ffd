"""Where originals live once they leave the context: offloaded outputs, cleared results, compacted spans.

`DirStore` keeps them as `tool-results/<ref>.txt` in the session directory, written atomically;
`MemoryStore` keeps them in a dict (replay, tests). Both satisfy `tools.base.RecallStore`.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Protocol

from agent_cli.core.files import atomic_write

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # lone surrogates (odd tool output) survive the round trip


class OffloadStore(Protocol):
    def get(self, ref: str) -> str | None: ...

    def refs(self) -> list[str]: ...

    def put(self, ref: str, text: str) -> Path | None:
        """Keep `text` under `ref`; returns the file it is in, or None for an in-memory store."""
        ...


def is_valid_ref(ref: str) -> bool:
    """A ref is a safe file name: letters, digits, `_ . -`, not starting with a dot, <= 200 chars."""
    return bool(_REF.match(ref)) and ".." not in ref


def validate_ref(ref: str) -> str:
    if not isinstance(ref, str) or not is_valid_ref(ref):
        raise ValueError(
            f"invalid ref {ref!r}: a ref is 1-200 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit, without '..'"
        )
    return ref


def safe_ref(name: str) -> str:
    """`name` when it is a valid ref, else a valid ref derived from it (stable, collision-safe)."""
    if is_valid_ref(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).replace("..", "_").lstrip("._-")[:160]
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{cleaned}-{digest}" if cleaned else f"ref-{digest}"


class MemoryStore:
    def __init__(self) -> None:
        self._items: dict[str, str] = {}

    def put(self, ref: str, text: str) -> Path | None:
        self._items[validate_ref(ref)] = text
        return None

    def get(self, ref: str) -> str | None:
        return self._items.get(ref)

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
        atomic_write(target, text, errors=_ERRORS)
        return target

    def get(self, ref: str) -> str | None:
        if not is_valid_ref(ref):
            return None
        target = self.directory / f"{ref}.txt"
        try:
            data = target.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
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
