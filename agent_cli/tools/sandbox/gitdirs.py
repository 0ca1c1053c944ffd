"""Git directories anywhere in the workspace. Git takes any folder holding `HEAD`, `objects/` and
`refs/` (or `HEAD` and a `commondir` file) for a repository: a `.git` folder, or a bare repository that
git finds where a person runs it (a broken `.git` makes git look at the folder itself). At their next
git command there it runs the programs that folder's `config` names (gitconfig.py) and its hooks,
outside any sandbox.

- `planted_git_dir`: for the write tools and bash redirects (protected.py), a write inside any `.git`
  folder, or one that completes or extends a git directory's shape elsewhere (whatever the order of
  the writes: the last of HEAD, objects/, refs/ completes it; anything written inside one extends it).
- `GitDirWatch`: for sandboxed bash, which may make folders anywhere (`mkdir`, `git init`), after each
  command: the git directories whose `config` the command created or changed, or that it made, and
  that name a program are found, and that config (and the hooks the command put there) set aside.
  One it made (also: one that was only objects/ and refs/ at the last look and got its HEAD) is
  judged whole, its hooks too. Git follows two pointers: a git directory's `commondir` file (its
  config and hooks are the named folder's too) and a `.git` FILE (`gitdir: path`) that a command
  made or changed. The folder either names is judged too, whole when the pointer is new, wherever
  it is in the workspace (also inside a `.git`'s logs/ or objects/, which the walk skips), unless it
  is a `.git` folder's own already-known git directory (the person's, as `git worktree add` names);
  a new pointer to outside the workspace or to what is not a git directory is itself set aside.
  The walk follows no link: a link the command made into a git directory (`evil ->
  .git/logs/cache`, where git run in `evil` finds a bare repository the walk never reads) is set aside.
  A walk of every folder costs a scandir each; after the first, only the folders whose ctime changed
  (a new entry, a rename) are read again, and the known git directories' files and `.git` files are
  stat'ed.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.tools.sandbox.gitconfig import programs

SHAPE = ("head", "objects", "refs", "commondir")  # the entries that make a git directory (casefolded)
CONFIGS = ("config", "config.worktree")
_NOTED = (*SHAPE, ".git")
_NOTED_LENGTHS = {len(n) for n in _NOTED}
_POINTER_MAX = 4096
INSIDE = ("objects", "refs", "logs", "lfs")  # not walked inside a git directory: nobody runs git there
_COARSE_CLOCK = 5  # CLOCK_REALTIME_COARSE: what Linux stamps a file's ctime with


def is_git_dir(names: Iterable[str]) -> bool:
    """Whether a folder holding these entries is a git directory to git: HEAD with objects/ and refs/,
    or HEAD with `commondir` (a linked worktree's). Judged by name alone, whatever each entry is (a
    dangling `objects` link counts), so that a shape cannot be finished later at a distance."""
    have = {n.casefold() for n in names}
    return "head" in have and ({"objects", "refs"} <= have or "commondir" in have)


def _git_like(names: Set[str]) -> bool:
    """A git directory, or the common directory another one's `commondir` may name (objects/ and
    refs/, no HEAD): the sweep judges both."""
    return is_git_dir(names) or {"objects", "refs"} <= names


def planted_git_dir(path: Path, root: Path) -> str:
    """How a write to `path` (inside `root`) would plant a git directory, as the person would write
    the protected path; "" when it would not. Inside any `.git` folder (or `.git` itself, a `gitdir:`
    pointer): `sub/.git`. In a folder that is, or with this write becomes, a git directory (HEAD,
    objects/, refs/): `tests (a git directory's shape)`."""
    if not _within(path, root) or path == root:
        return ""
    parts = str(path)[len(str(root).rstrip("/")) + 1 :].split("/")
    for i, part in enumerate(parts):
        if part.casefold() == ".git":
            return "/".join(parts[: i + 1])
    for i in range(len(parts) - 1, -1, -1):  # the folders holding the path, nearest first
        folder = root.joinpath(*parts[:i])
        after = [parts[i], *(n for n in SHAPE if os.path.lexists(folder / n.replace("head", "HEAD")))]
        if is_git_dir(after):
            return f"{'/'.join(parts[:i]) or '.'} (a git directory's shape)"
    return ""


@dataclass(frozen=True)
class Planted:
    """A git directory a command planted: the `files` to set aside (its config, its hooks) and the
    config `keys` that run a program."""

    folder: Path
    files: tuple[Path, ...]
    keys: tuple[str, ...] = ()
    where: str = ""  # the folder as the person would write it
    what: str = ""  # what is set aside when not a config's keys or hooks


@dataclass
class _Look:
    """One look: the git directories (and their shape) at the last one and now, the folders to judge
    (True: whole) and the pointers to set aside (with why)."""

    known: dict[str, frozenset[str]]
    shapes: dict[str, frozenset[str]] = field(default_factory=dict)
    whole: dict[str, bool] = field(default_factory=dict)
    aside: list[tuple[Path, str]] = field(default_factory=list)


@dataclass
class GitDirWatch:
    """Every folder under `root` (not following links; the folders in `skip` not entered) with its
    ctime, and the git directories among them, as of the last look."""

    root: Path
    skip: tuple[Path, ...] = ()
    _folders: dict[str, int] | None = None
    _git: dict[str, frozenset[str]] = field(default_factory=dict)  # git-like folder -> its SHAPE names
    _pointers: set[str] = field(default_factory=set)  # `.git` files (or links) seen by the walk
    _links: list[str] = field(default_factory=list)  # links the walks since the last look read

    def seed(self) -> None:
        """The first look (before the first command): a walk of every folder."""
        if self._folders is None:
            self._folders = {}
            self._git = {}
            self._pointers = set()
            self._walk(str(self.root))
            self._links = []

    def planted(self, since: int, bound: Iterable[Path] = ()) -> list[Planted]:
        """Look again; the git directories a command running since `since` (ns, see `now`) planted. One
        it made is judged whole, a known one by the files changed in it; what lies in `bound` (bound
        read-only in the sandbox: no command changed it) is left alone."""
        if self._folders is None:
            self.seed()
            return []
        look = _Look(known=dict(self._git))
        self._links = []
        self._refresh()
        for link in self._links:  # git run in a linked folder uses what the link leads to
            if _link_made(link, since) and ".git" in Path(os.path.realpath(link)).parts:
                look.aside.append((Path(link), "a link into a git directory"))
        look.shapes = dict(self._git)
        for folder, names in self._git.items():
            was = look.known.get(folder)
            made = was is None or (is_git_dir(names) and not is_git_dir(was))
            look.whole[folder] = made and _touched(Path(folder), since)
        for pointer in sorted(self._pointers):
            try:
                st = os.lstat(pointer)
            except OSError:
                st = None
            if st is None or stat.S_ISDIR(st.st_mode):
                self._pointers.discard(pointer)
                continue
            changed = st.st_ctime_ns >= since
            self._follow(look, Path(pointer), _gitdir(Path(pointer)), changed, is_git_dir)
        for folder in [f for f, names in look.shapes.items() if "commondir" in names]:
            changed = look.whole.get(folder, False) or _ctime(Path(folder) / "commondir") >= since
            self._follow(look, Path(folder) / "commondir", _commondir(Path(folder)), changed, _git_like)
        out = []
        for folder in sorted(look.whole):
            path = Path(folder)
            files, keys = _judge(path, since, new=look.whole[folder])
            if files := [f for f in files if not any(_within(Path(os.path.realpath(f)), b) for b in bound)]:
                out.append(Planted(path, tuple(files), tuple(keys), self._where(path)))
        for pointer, why in look.aside:
            if not any(_within(Path(os.path.realpath(pointer.parent)), b) for b in bound):
                out.append(Planted(pointer.parent, (pointer,), (), self._where(pointer), why))
        return out

    def _follow(
        self,
        look: _Look,
        pointer: Path,
        target: Path | None,
        changed: bool,
        shaped: Callable[[Set[str]], bool],
    ) -> None:
        """A `.git` file's or `commondir`'s `target`: judged (whole when the pointer is `changed`,
        unless it is an already-known git directory in a `.git` folder: the person's); a changed
        pointer to what cannot be judged (outside the workspace, not `shaped` as git wants) is set
        aside itself."""
        if target is None or not _within(target, self.root):
            if changed:
                look.aside.append(
                    (
                        pointer,
                        "a gitdir: pointer to outside the workspace" if target else "a bad gitdir: pointer",
                    )
                )
            return
        folder = str(target)
        if folder not in look.shapes:
            try:
                look.shapes[folder] = frozenset(_list(folder)[0])
            except OSError:
                look.shapes[folder] = frozenset()
        if not shaped(look.shapes[folder]):
            if changed:
                look.aside.append((pointer, "a gitdir: pointer to what is not a git directory"))
            return
        was = look.known.get(folder)
        theirs = was is not None and is_git_dir(was) and ".git" in self._where(target).casefold().split("/")
        look.whole[folder] = look.whole.get(folder, False) or (changed and not theirs)

    def _where(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path != self.root else "."

    # -- the walk --------------------------------------------------------------------------------
    def _refresh(self) -> None:
        folders = self._folders
        assert folders is not None
        again = []
        for folder, ctime in list(folders.items()):
            try:
                st = os.lstat(folder)
            except OSError:
                st = None
            if st is None or not stat.S_ISDIR(st.st_mode):
                del folders[folder]
                self._git.pop(folder, None)
            elif st.st_ctime_ns != ctime:
                again.append(folder)
        for folder in again:
            if folder in folders:
                self._walk(folder)

    def _walk(self, top: str) -> None:
        """Read `top` and every folder below it not read yet (all of them, under a new folder)."""
        folders = self._folders
        assert folders is not None
        skip = {str(s) for s in self.skip}
        pending = [top]
        while pending:
            folder = pending.pop()
            try:
                ctime = os.lstat(folder).st_ctime_ns
                names, listed, links = _list(folder)
            except OSError:
                folders.pop(folder, None)
                self._git.pop(folder, None)
                continue
            folders[folder] = ctime
            git = _git_like(names)
            if git:
                self._git[folder] = frozenset(names)
            else:
                self._git.pop(folder, None)
            if ".git" in names:
                self._pointers.add(os.path.join(folder, ".git"))
            self._links.extend(links)
            for name, sub in listed:
                if sub in folders or sub in skip or (git and name.casefold() in INSIDE):
                    continue
                pending.append(sub)


def summary(planted: list[Planted]) -> str:
    """`vendor/lib/.git: core.fsmonitor; tests: hooks`, folders relative to the watched root."""
    return "; ".join(f"{p.where}: {', '.join(p.keys) or p.what or 'hooks'}" for p in planted)


def _list(folder: str) -> tuple[set[str], list[tuple[str, str]], list[str]]:
    """The shape's entries a folder holds (casefolded; `.git` when it holds a `.git` that is no
    folder: a `gitdir:` pointer) and its subfolders (name, path), links not followed: one scandir,
    no stat."""
    names: set[str] = set()
    listed: list[tuple[str, str]] = []
    links: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            noted = len(name) in _NOTED_LENGTHS and name.casefold() in _NOTED
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and entry.is_symlink():
                    links.append(entry.path)
            except OSError:
                is_dir = False
            if is_dir:
                listed.append((name, entry.path))
            if noted and (name != ".git" or not is_dir):
                names.add(name.casefold() if name != ".git" else name)
    return names, listed, links


def _gitdir(pointer: Path) -> Path | None:
    """Where a `.git` file (`gitdir: path`, relative to its folder) or link sends git; None: nowhere."""
    try:
        st = os.stat(pointer)
        if stat.S_ISDIR(st.st_mode):
            return Path(os.path.realpath(pointer))
        if not stat.S_ISREG(st.st_mode):
            return None
        fd = os.open(pointer, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            text = f.read(_POINTER_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    return Path(os.path.realpath(os.path.join(pointer.parent, text[len("gitdir: ") :].strip())))


def _commondir(folder: Path) -> Path | None:
    """The folder a git directory's `commondir` file names (relative to it), None: unreadable."""
    try:
        fd = os.open(folder / "commondir", os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            text = f.read(_POINTER_MAX).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return Path(os.path.realpath(os.path.join(folder, text))) if text else None


def _judge(folder: Path, since: int, new: bool) -> tuple[list[Path], list[str]]:
    """The files of a git directory to set aside: a config that names a program, created or changed
    since `since`, and the hooks put there since (any config and hook, when the directory is `new`)."""
    files: list[Path] = []
    keys: list[str] = []
    for name in CONFIGS:
        config = folder / name
        if os.path.lexists(config) and (new or _ctime(config) >= since):
            if found := programs(config):
                files.append(config)
                keys += found
    try:
        hooks = [e for e in os.scandir(folder / "hooks") if not e.name.endswith(".sample")]
    except OSError:
        hooks = []
    files += [Path(h.path) for h in hooks if new or _ctime(Path(h.path)) >= since]
    return files, keys


def _touched(folder: Path, since: int) -> bool:
    """Whether what makes the folder a git directory (HEAD, objects/, refs/, commondir) was made or
    changed since `since`: a command made it one. Not a repository a person made between commands in
    which a command then ran `git status` (that changes the folder, not these)."""
    return any(_ctime(folder / n) >= since for n in ("HEAD", "objects", "refs", "commondir"))


def _link_made(link: str, since: int) -> bool:
    """Whether the link itself (not what it leads to) was made or changed since `since`."""
    try:
        return os.lstat(link).st_ctime_ns >= since
    except OSError:
        return False


def _ctime(path: Path) -> int:
    """The later ctime of the entry and of what it links to (-1: missing)."""
    out = -1
    for follow in (False, True):
        try:
            out = max(out, os.stat(path, follow_symlinks=follow).st_ctime_ns)
        except OSError:
            pass
    return out


def now() -> int:
    """The clock file ctimes are stamped with (Linux's coarse one, which may lag the fine one by a
    tick: a ctime taken from it is never earlier than this reading)."""
    if sys.platform.startswith("linux"):
        return time.clock_gettime_ns(_COARSE_CLOCK)
    return time.time_ns() - 50_000_000


def _within(path: Path, entry: Path) -> bool:
    p, e = str(path).casefold(), str(entry).casefold()
    return p == e or p.startswith(e.rstrip("/") + "/")


__all__ = ["GitDirWatch", "Planted", "is_git_dir", "now", "planted_git_dir", "summary"]
