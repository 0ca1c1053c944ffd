"""Helpers the file tools share: path resolution, binary sniffing, gitignore-aware walking, caps.

Nothing here knows about a particular tool. Errors a model should read are raised as `ToolError`
and turned into an error `ToolResult` by `reports_tool_errors`.
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from agent_cli.core.errors import ToolError
from agent_cli.core.surrogates import name_from_shown, shown_name
from agent_cli.tools.base import ToolResult
from agent_cli.tools.encoding import Encoding, decode_file, detect, line_ending

SNIFF_BYTES = 8192
ALWAYS_SKIP = frozenset({".git", ".agent"})

# -- paths -----------------------------------------------------------------------------------------


def resolve_path(workspace: Path, path: str) -> Path:
    """`path` (relative to the workspace, absolute, or starting with `~`) as a normalized absolute path.

    Symlinks are not followed, so what the person sees is the path they gave."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path is empty")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    p = Path(os.path.expanduser(path.strip()))
    if not p.is_absolute():
        p = Path(workspace).expanduser().absolute() / p
    p = Path(os.path.normpath(p))
    # a name that is not UTF-8 was shown as `caf\xe9.txt` (display_path): that file, unless the
    # name as written is one
    if (name := name_from_shown(str(p))) is not None and not os.path.lexists(p) and os.path.lexists(name):
        return Path(name)
    return p


def is_inside(workspace: Path, path: Path) -> bool:
    """Whether `path` lies in `workspace`, after following symlinks (a link out of it is outside)."""
    try:
        root = Path(workspace).expanduser().resolve()
        target = Path(path).expanduser()
        if not target.is_absolute():
            target = root / target
        Path(target).resolve().relative_to(root)
        return True
    except (ValueError, OSError, RuntimeError):
        return False


def display_path(workspace: Path, path: Path) -> str:
    """A path as the model should see it: relative to the workspace when inside, else absolute; bytes
    of it that are not UTF-8 as `\\xNN` (core/surrogates.py), which `resolve_path` reads back."""
    try:
        rel = Path(path).relative_to(Path(workspace).absolute())
    except ValueError:
        return shown_name(str(path))
    text = rel.as_posix()
    return shown_name(text) if text != "." else "."


def missing_path_error(workspace: Path, path: Path) -> ToolError:
    """A 'not found' error that suggests similar names in the same directory."""
    shown = display_path(workspace, path)
    parent = path.parent
    if not parent.is_dir():
        where = shown_name(str(parent))
        return ToolError(f"{shown}: no such file or directory (the directory {where} does not exist either)")
    try:
        names = [e.name for e in os.scandir(parent)]
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.5)
    lowered = [n for n in names if n.lower() == path.name.lower() and n not in close]
    suggestions = lowered + close
    if suggestions:
        shown_names = ", ".join(display_path(workspace, parent / n) for n in suggestions[:3])
        return ToolError(f"{shown}: no such file or directory. Did you mean: {shown_names}?")
    return ToolError(f"{shown}: no such file or directory")


# -- binary ------------------------------------------------------------------------------------------

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF8", "GIF"),
    (b"%PDF", "PDF"),
    (b"\x7fELF", "ELF"),
    (b"PK\x03\x04", "ZIP"),
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"SQLite format 3\x00", "SQLite"),
    (b"\xca\xfe\xba\xbe", "Mach-O/Java class"),
    (b"\xcf\xfa\xed\xfe", "Mach-O"),
    (b"MZ", "Windows executable"),
    (b"\x00asm", "WebAssembly"),
    (b"OggS", "Ogg"),
    (b"ID3", "MP3"),
    (b"wOFF", "WOFF font"),
    (b"wOF2", "WOFF2 font"),
)


def sniff_kind(head: bytes) -> str:
    """A guess at what a binary file is, from its first bytes ('' when unknown)."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "WAV"
    if head[4:8] == b"ftyp":
        return "MP4/MOV"
    return ""


def is_binary(sample: bytes, complete: bool = False) -> bool:
    """True when `sample` (a file's first bytes, or all of them when `complete`) is not text in any
    encoding we read: NUL bytes outside UTF-16/32, or no decoding fits (tools/encoding.py).

    A multi-byte character cut by the end of a partial sample is not held against it."""
    return detect(sample if complete else sample[:SNIFF_BYTES], complete) is None


def binary_message(workspace: Path, path: Path, head: bytes, size: int) -> str:
    kind = sniff_kind(head)
    looks = f", looks like {kind}" if kind else ""
    return f"{display_path(workspace, path)}: binary file ({size} bytes{looks}) — not shown"


@dataclass(frozen=True)
class TextFile:
    """A text file as read: its text (line ends as in the file), encoding, and the bytes it came from."""

    text: str
    encoding: Encoding
    data: bytes

    @property
    def newline(self) -> str:
        return line_ending(self.text)


def load_text(workspace: Path, path: Path) -> TextFile:
    """The whole file decoded, or a ToolError for a missing path, a directory or a binary file."""
    if not path.exists():
        raise missing_path_error(workspace, path)
    if path.is_dir():
        raise ToolError(f"{display_path(workspace, path)} is a directory, not a file (use ls to list it)")
    data = path.read_bytes()
    decoded = decode_file(data)
    if decoded is None:
        raise ToolError(binary_message(workspace, path, data[:64], len(data)))
    text, encoding = decoded
    return TextFile(text, encoding, data)


def read_text(workspace: Path, path: Path) -> str:
    """The whole file as text, or a ToolError for a missing path, a directory or a binary file."""
    return load_text(workspace, path).text


# -- gitignore-aware walking -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ignore:
    base: Path  # the directory whose .gitignore this is
    spec: pathspec.GitIgnoreSpec

    def check(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` rule, None: no rule speaks about it."""
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _load_ignore(directory: Path, name: str = ".gitignore") -> _Ignore | None:
    file = directory / name
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None
    except OSError:
        return None
    if not any(line.strip() and not line.lstrip().startswith("#") for line in lines):
        return None
    return _Ignore(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def _ancestor_ignores(workspace: Path | None, root: Path) -> list[_Ignore]:
    """The .gitignore files between the workspace (or the git top level) and `root`, outermost first."""
    chain: list[Path] = []
    top = Path(workspace).absolute() if workspace is not None else None
    current = root.parent
    while True:
        if top is not None and not _is_under(current, top):
            break
        chain.append(current)
        if (current / ".git").exists() or current.parent == current:
            break
        current = current.parent
    ignores: list[_Ignore] = []
    for directory in reversed(chain):
        exclude = _load_ignore(directory / ".git" / "info", "exclude")
        if exclude is not None:
            ignores.append(_Ignore(directory, exclude.spec))
        found = _load_ignore(directory)
        if found is not None:
            ignores.append(found)
    return ignores


def _is_under(path: Path, top: Path) -> bool:
    try:
        path.relative_to(top)
        return True
    except ValueError:
        return False


def _ignored(ignores: list[_Ignore], path: Path, is_dir: bool) -> bool:
    for ignore in reversed(ignores):  # the deepest .gitignore that speaks wins
        verdict = ignore.check(path, is_dir)
        if verdict is not None:
            return verdict
    return False


@dataclass(frozen=True)
class Entry:
    path: Path
    is_dir: bool
    depth: int  # 1 for a direct child of the root


def walk(root: Path, workspace: Path | None = None, include_dirs: bool = False) -> Iterator[Entry]:
    """Every file (and, with `include_dirs`, directory) under `root`, depth first, names sorted.

    Honours `.gitignore` at every level (and those above `root` up to the workspace), and always
    skips `.git/` and `.agent/`. Symlinked directories are listed but not followed."""
    root = Path(root).absolute()
    base = _ancestor_ignores(workspace, root)
    if (root / ".git").is_dir():
        exclude = _load_ignore(root / ".git" / "info", "exclude")
        if exclude is not None:
            base.append(_Ignore(root, exclude.spec))
    yield from _walk_dir(root, base, 1, include_dirs)


def _walk_dir(directory: Path, ignores: list[_Ignore], depth: int, include_dirs: bool) -> Iterator[Entry]:
    own = _load_ignore(directory)
    if own is not None:
        ignores = [*ignores, own]
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if entry.name in ALWAYS_SKIP and is_dir:
            continue
        path = Path(entry.path)
        if _ignored(ignores, path, is_dir):
            continue
        if is_dir:
            if include_dirs:
                yield Entry(path, True, depth)
            yield from _walk_dir(path, ignores, depth + 1, include_dirs)
        else:
            yield Entry(path, False, depth)


# -- caps --------------------------------------------------------------------------------------------


def omission_marker(chars: int, lines: int) -> str:
    return f"… [{chars} chars / {lines} lines omitted] …"


def cap_text(text: str, max_chars: int) -> str:
    """`text` if it fits, else its head and tail (cut at line ends) around an omission marker."""
    if len(text) <= max_chars:
        return text
    buffer = HeadTail(max_chars // 2, max_chars - max_chars // 2)
    buffer.feed(text)
    return buffer.text()


class HeadTail:
    """Keeps the first `head` and last `tail` characters of a stream and counts what falls between.

    Memory stays bounded however much is fed; `text()` cuts both parts at line ends when it can."""

    def __init__(self, head: int = 15_000, tail: int = 15_000) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.total_chars = 0
        self.total_newlines = 0

    def feed(self, chunk: str) -> None:
        if not chunk:
            return
        self.total_chars += len(chunk)
        self.total_newlines += chunk.count("\n")
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(chunk[:room])
            self._head_len += min(room, len(chunk))
            chunk = chunk[room:]
        if chunk:
            self._tail.append(chunk)
            self._tail_len += len(chunk)
            if self._tail_len > 2 * self._tail_limit + 65_536:
                joined = "".join(self._tail)[-self._tail_limit :]
                self._tail, self._tail_len = [joined], len(joined)

    @property
    def truncated(self) -> bool:
        return self.total_chars > self._head_limit + self._tail_limit

    def text(self) -> str:
        head = "".join(self._head)
        tail = "".join(self._tail)
        if not self.truncated:
            return head + tail
        tail = tail[-self._tail_limit :]
        cut = head.rfind("\n")
        if cut > 0:
            head = head[: cut + 1]
        cut = tail.find("\n")
        if 0 <= cut < len(tail) - 1:
            tail = tail[cut + 1 :]
        omitted_chars = self.total_chars - len(head) - len(tail)
        omitted_lines = max(0, self.total_newlines - head.count("\n") - tail.count("\n"))
        sep = "" if head.endswith("\n") or not head else "\n"
        return f"{head}{sep}{omission_marker(omitted_chars, omitted_lines)}\n{tail}"


# -- error plumbing ----------------------------------------------------------------------------------


def reports_tool_errors(
    run: Callable[[Any, dict[str, Any], Any], Awaitable[ToolResult]],
) -> Callable[[Any, dict[str, Any], Any], Awaitable[ToolResult]]:
    """Turn a ToolError raised inside a tool's `run` into an error ToolResult with its message."""

    @functools.wraps(run)
    async def wrapper(self: Any, input: dict[str, Any], ctx: Any) -> ToolResult:
        try:
            return await run(self, input, ctx)
        except ToolError as e:
            return ToolResult(output=str(e), is_error=True)

    return wrapper


def int_arg(input: dict[str, Any], name: str, default: int, minimum: int, maximum: int | None = None) -> int:
    """An integer argument: missing -> default, below minimum -> ToolError, above maximum -> maximum."""
    value = input.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ToolError(f"{name} must be at least {minimum}, got {value}")
    return min(value, maximum) if maximum is not None else value


def str_arg(input: dict[str, Any], name: str, required: bool = True) -> str:
    value = input.get(name)
    if value is None:
        if required:
            raise ToolError(f"missing required parameter {name!r}")
        return ""
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string, got {type(value).__name__}")
    return value
