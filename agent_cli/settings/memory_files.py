"""The memory files: instructions every session starts with (the user context, layer 3 of a request).

Read in this order, each at most `MEMORY_CAP` characters, as one text ("" when there is none):
- the person's own, for every workspace: `~/.config/agent/AGENTS.md` (`$XDG_CONFIG_HOME`) and Claude
  Code's `~/.claude/CLAUDE.md` (`$CLAUDE_CONFIG_DIR`);
- when the workspace is a folder inside a git repository, each folder above it up to the
  repository's root (the root first), then the workspace itself: `AGENTS.md`, `CLAUDE.md`,
  `.claude/CLAUDE.md` and `CLAUDE.local.md` (`PROJECT_NAMES`), as Claude Code reads them.
Those of a folder below the workspace come later, with the first read there (`read_folder_memory`,
settings/folder_memory.py), bound to that folder as these are to theirs.

`@path/to/file` in a memory file imports that file (Claude Code's syntax): relative to the importing
file, not inside Markdown code spans or blocks, up to `IMPORT_DEPTH` hops, each file once; imports
together hold at most `IMPORTS_CAP` characters. Each comes after the file that imports it, as a
section of its own. A `@word` that names no file is words, and left alone.

The repository is not trusted. A project's file is read only when it really lies inside the folder
it stands for (the workspace, or the folder above it that holds it): a link out of it, and an import
by `~`, by an absolute path or by `../` that leads out, are not read, nor a file that is not a regular
one, nor one a deny or ask rule of the person's covers (`Read(secrets/**)`): the text says so in one
line where it would have been. Only the person's own files may import by `~/` or from anywhere.
`/memory` lists the files to open one in an editor: those that exist, and for a scope that has
none, the `AGENTS.md` that saving would create.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_cli.settings.files import claude_user_dir
from agent_cli.settings.trust import user_config_dir

Scope = Literal["user", "workspace"]
MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md")  # the workspace's that `#` writes to, in the order read
PROJECT_NAMES = (*MEMORY_NAMES, ".claude/CLAUDE.md", "CLAUDE.local.md")  # read in each project folder
MEMORY_CAP = 20_000  # characters per file
IMPORT_DEPTH = 5  # hops from a memory file, as Claude Code
IMPORTS_CAP = 2 * MEMORY_CAP  # characters of all imports together
_READ_BYTES = 4 * MEMORY_CAP  # read at most this much of a file: the rest is cut anyway
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+).*?\1")
_IMPORT = re.compile(r"(?<!\S)@(\S+)")
_TRAILING = ".,;:!?)"
Judge = Callable[[Path], str]  # why the person's rules refuse reading a file ("" when they do not)


@dataclass(frozen=True)
class MemoryFile:
    scope: Scope
    path: Path
    exists: bool
    name: str = ""  # as shown: the workspace's `.claude/CLAUDE.md`; else the file's name

    @property
    def label(self) -> str:
        whose = "yours, every workspace" if self.scope == "user" else "this workspace"
        shown = self.name or self.path.name
        return f"{shown} ({whose})" + ("" if self.exists else " — new, created when you save it")


def user_memory_paths(env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The person's own memory files, in the order they are read (whether or not they exist)."""
    env = os.environ if env is None else env
    return (user_config_dir(dict(env)) / "AGENTS.md", claude_user_dir(env) / "CLAUDE.md")


def memory_files(workspace: Path, env: Mapping[str, str] | None = None) -> list[MemoryFile]:
    """The memory files to offer for editing: the person's, then the workspace's."""
    out: list[MemoryFile] = []
    theirs = tuple((workspace / name, name) for name in PROJECT_NAMES)
    for scope, named in (("user", tuple((p, "") for p in user_memory_paths(env))), ("workspace", theirs)):
        present = [MemoryFile(scope, p, True, n) for p, n in named if p.is_file()]  # type: ignore[arg-type]
        out += present or [MemoryFile(scope, named[0][0], False, named[0][1])]  # type: ignore[arg-type]
    return out


def read_user_context(workspace: Path, user_files: Sequence[Path] = (), judge: Judge | None = None) -> str:
    """The memory files as one text (the module docstring says which, and how imports are read).
    `judge` says why the person's rules refuse a file an import names ("" when they do not)."""
    reader = _Reader(judge or (lambda _path: ""))
    for path in user_files:
        shown = _home_relative(path)
        reader.file(path, f"{shown} (yours, every workspace)", shown, None)
    root = Path(workspace).resolve()
    for folder in project_folders(root):
        where = "the workspace" if folder == root else f"the folder {os.path.relpath(folder, root)}"
        for name in PROJECT_NAMES:
            shown = os.path.relpath(folder / name, root)
            reader.file(folder / name, shown, shown, _Bound(folder, where, root))
    return "\n\n".join(reader.parts)


def read_folder_memory(
    workspace: Path, folder: Path, judge: Judge | None = None, seen: set[Path] | None = None
) -> str:
    """The memory files (`PROJECT_NAMES`) of `folder`, a folder below the workspace, as one text ("" when
    there is none): read as the workspace's are (the module docstring), bound to `folder` — a link
    out of it and an import leading out are not read. `seen` holds the real paths already read (each
    file once); those read here join it."""
    root = Path(workspace).resolve()
    reader = _Reader(judge or (lambda _path: ""), seen=set() if seen is None else seen)
    bound = _Bound(folder, f"the folder {os.path.relpath(folder, root)}", root)
    for name in PROJECT_NAMES:
        shown = os.path.relpath(folder / name, root)
        reader.file(folder / name, shown, shown, bound)
    return "\n\n".join(reader.parts)


def has_memory_files(folder: Path) -> bool:
    """Whether `folder` holds a memory file (`PROJECT_NAMES`) to read, or to say why it is not read."""
    return any((folder / name).is_file() for name in PROJECT_NAMES)


def folders_below(workspace: Path, path: Path) -> list[Path]:
    """The folders from just below `workspace` (resolved) down to the one holding `path`, as they
    really are (links followed): none for a file in the workspace itself or outside it."""
    try:
        parent = Path(path).resolve().parent
    except (OSError, RuntimeError):  # a loop of links
        return []
    if parent == workspace or not parent.is_relative_to(workspace):
        return []
    parts = parent.relative_to(workspace).parts
    return [workspace.joinpath(*parts[:depth]) for depth in range(1, len(parts) + 1)]


def project_memory_paths(workspace: Path) -> set[Path]:
    """The real paths of the project memory files `read_user_context` reads for `workspace` (resolved)."""
    found = (folder / name for folder in project_folders(workspace) for name in PROJECT_NAMES)
    return {path.resolve() for path in found if path.is_file()}


def project_folders(workspace: Path) -> list[Path]:
    """The folders whose memory files belong to `workspace`: those from the root of the git
    repository it is in down to it, or the workspace alone outside a repository."""
    for index, folder in enumerate((workspace, *workspace.parents)):
        if (folder / ".git").exists():
            return [*reversed(workspace.parents[:index]), workspace] if index else [workspace]
    return [workspace]


def imports_in(text: str) -> list[str]:
    """The paths a memory file imports (`@path`), in order, each once; not in code spans or blocks."""
    found: list[str] = []
    fence = ""
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = ""
            continue
        if marker:
            fence = marker.group(1)
            continue
        for match in _IMPORT.finditer(_SPAN.sub(" ", line)):
            target = match.group(1).rstrip(_TRAILING)
            if target and target not in found:
                found.append(target)
    return found


@dataclass(frozen=True)
class _Bound:
    """Where a project's memory file, and what it imports, must really lie."""

    folder: Path
    where: str  # "the workspace", "the folder .."
    root: Path  # the workspace: imports are named relative to it


@dataclass
class _Reader:
    judge: Judge
    parts: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)
    imported: int = 0  # characters of imports read so far

    def file(self, path: Path, header: str, shown: str, bound: _Bound | None) -> None:
        """A memory file (a person's when `bound` is None), then what it imports."""
        try:
            if not path.is_file():
                return
            real = path.resolve()
            if real in self.seen:
                return
            self.seen.add(real)
            if bound is not None and not real.is_relative_to(bound.folder):
                outside = "the workspace" if bound.where == "the workspace" else "its folder"
                self.parts.append(f"# {header}\n(not read: a link to a file outside {outside})")
                return
            if why := self.judge(real):  # `CLAUDE.local.md -> .env` under `Read(./.env)`
                self.parts.append(f"# {header}\n(not read: {why})")
                return
            text, rest = _read(path)
        except OSError as exc:
            self.parts.append(f"# {header}\n(could not be read: {exc.strerror or exc})")
            return
        if text:
            text = _capped(text, shown, rest)
            self.parts.append(f"# {header}\n{text}")
            self._imports(path, text, shown, bound, 1)

    def _imports(self, importer: Path, text: str, by: str, bound: _Bound | None, depth: int) -> None:
        for raw in imports_in(text):
            header = f"@{raw} (imported by {by})"
            path, why = self._where(raw, importer, bound, depth)
            if path is None:
                if why:
                    self.parts.append(f"# {header}\n(not read: {why})")
                continue
            shown = _shown(path, bound)
            try:
                text, rest = _read(path)
            except OSError as exc:
                self.parts.append(f"# {header}\n(could not be read: {exc.strerror or exc})")
                continue
            if not text:
                continue
            text = _capped(text, shown, rest)
            self.imported += len(text)
            self.parts.append(f"# {shown} (imported by {by})\n{text}")
            self._imports(path, text, shown, bound, depth + 1)

    def _where(self, raw: str, importer: Path, bound: _Bound | None, depth: int) -> tuple[Path | None, str]:
        """The file `raw` names, or None and why it is not read ("" for a name that is no file)."""
        if raw.startswith("~") and bound is not None:
            return None, "only your own memory files may import from your home folder"
        path = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
        path = path if path.is_absolute() else importer.parent / path
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a loop of links
            return None, ""
        if bound is not None and not real.is_relative_to(bound.folder):
            return None, f"outside {bound.where}"
        if not real.exists() or real.is_dir() or real in self.seen:
            return None, ""
        if not real.is_file():
            return None, "not a regular file"
        if depth > IMPORT_DEPTH:
            return None, f"imports go at most {IMPORT_DEPTH} deep"
        if self.imported >= IMPORTS_CAP:
            return None, f"imports hold at most {IMPORTS_CAP:,} characters in all"
        if why := self.judge(real):
            return None, why
        self.seen.add(real)
        return path, ""


def _read(path: Path) -> tuple[str, int]:
    """The file's text, stripped, from at most `_READ_BYTES` of it; and how many bytes were left."""
    with path.open("rb") as handle:
        data = handle.read(_READ_BYTES)
        rest = max(0, os.fstat(handle.fileno()).st_size - len(data))
    return data.decode("utf-8", "replace").strip(), rest


def _capped(text: str, name: str, rest: int = 0) -> str:
    """`text` cut to `MEMORY_CAP` at a line's end, saying how much of `name` is not shown."""
    if len(text) <= MEMORY_CAP and not rest:
        return text
    cut = text.rfind("\n", 0, MEMORY_CAP)
    cut = cut if cut > MEMORY_CAP // 2 else min(MEMORY_CAP, len(text))
    return f"{text[:cut]}\n… ({len(text) - cut + rest:,} more chars of {name} not shown)"


def _shown(path: Path, bound: _Bound | None) -> str:
    """An imported file as the text names it: from the workspace, or from home, or whole."""
    path = Path(os.path.normpath(path))
    return os.path.relpath(path, bound.root) if bound is not None else _home_relative(path)


def _home_relative(path: Path) -> str:
    home = str(Path.home()) + "/"
    return "~/" + str(path)[len(home) :] if str(path).startswith(home) else str(path)
