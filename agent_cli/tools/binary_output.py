"""A command's output that is binary (an image cat'ed, a compressed stream) is not shown as mojibake:
the model sees "[binary output, N bytes, stored as ref …]" and recall returns a hex dump of the bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol, runtime_checkable

from agent_cli.tools.encoding import looks_binary

KEEP_BYTES = 1 << 20  # raw bytes kept for the hex dump (the count covers everything)
SNIFF_BYTES = 65_536
ROW = 16


@runtime_checkable
class TextKeeper(Protocol):
    """A recall store that takes new entries (context/store.py's DirStore and MemoryStore)."""

    def put(self, ref: str, text: str) -> Path | None: ...


class RawOutput:
    """The first `keep` raw bytes of a command's output and how many there were in all."""

    def __init__(self, keep: int = KEEP_BYTES) -> None:
        self._keep = keep
        self._data = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._keep - len(self._data)
        if room > 0:
            self._data += data[:room]

    def is_binary(self) -> bool:
        return looks_binary(bytes(self._data[:SNIFF_BYTES]))

    def placeholder(self, store: object) -> str:
        """What the model reads instead of the bytes; the hex dump goes to `store` when it can keep it."""
        data = bytes(self._data)
        ref = "bash-binary-" + hashlib.blake2b(data, digest_size=6).hexdigest()
        if not isinstance(store, TextKeeper):
            return f"[binary output, {self.total} bytes, not stored (this session has no recall store)]"
        store.put(ref, hex_dump(data, self.total))
        kept = "" if len(data) == self.total else f"; the dump has the first {len(data)} bytes"
        return f"[binary output, {self.total} bytes, stored as ref {ref} (a hex dump: recall it to look inside{kept})]"


def hex_dump(data: bytes, total: int | None = None) -> str:
    """`xxd`-style rows: offset, 16 bytes in hex, the printable ASCII of them."""
    rows = []
    for offset in range(0, len(data), ROW):
        chunk = data[offset : offset + ROW]
        hexes = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        rows.append(f"{offset:08x}: {hexes:<39}  {text}")
    if total is not None and total > len(data):
        rows.append(f"[… {total - len(data)} more bytes not kept]")
    return "\n".join(rows) + "\n"
