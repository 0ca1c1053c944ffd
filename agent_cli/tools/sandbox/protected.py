"""Protected paths: files and folders that make a program run code later, outside any sandbox — git's
executable config and hooks, our own and other agents' and editors' config, shell start-up files.

A tool that writes one needs the person's explicit yes (tools/permissions.py asks, in every mode);
bash's sandbox keeps them read-only (tools/sandbox/bwrap.py). Claude Code's sandbox denies the same family
(its mandatory deny list); this is that list and a few more of the same kind.

`is_protected` judges a path a tool would write, symlinks resolved (a write through
`src/x -> ../.git/config` is a write to `.git/config`). A repository inside the workspace has its git
config and hooks and its hook managers' config protected as the root's are: at any depth from the
write tools, NESTED_DEPTH folders deep in the sandbox (`nested_git`); editors' config is the root's
alone. `layout` says, for one sandboxed command, what bwrap must bind read-only, which folders must
stay mount points so they cannot be renamed away, and which protected paths do not exist yet (bwrap
cannot bind those without creating them on the host, so the sandbox watches them and sets aside
whatever a command created there: `set_aside`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.tools.sandbox.gitdirs import planted_git_dir

SHELL_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
)
# Relative to the workspace (and to any other writable root): git's executable config (its hooks,
# `core.fsmonitor`, `core.hooksPath`, filters and aliases run code at the person's next git command),
# submodule git dirs, our own folder, other agents' and editors' config that runs code, and the
# config of hook managers whose installed hook runs it.
# (`.git/commondir` and the linked worktrees' own `commondir` would point git at another config.)
GIT_ENTRIES = (
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/commondir",
    ".git/modules",
    ".git/worktrees",
)
# lefthook reads its config at every hook it installed (https://lefthook.dev/configuration): each
# format, with or without a leading dot or in `.config/` (no dot), and its `-local` twin; scripts
# live in `.lefthook/` and `.lefthook-local/`.
LEFTHOOK_ENTRIES = (
    *(
        f"{where}lefthook{local}.{ext}"
        for where in ("", ".", ".config/")
        for local in ("", "-local")
        for ext in ("yml", "yaml", "toml", "json", "jsonc")
    ),
    ".lefthook",
    ".lefthook-local",
)
# Relative to a repository's root, the workspace's and any inside it: run at the person's next
# `git commit` there (pre-commit's, husky's, lefthook's installed hooks read them) or `cd` (direnv,
# where the folder is whitelisted). `.npmrc` is not here: npm runs the project's package.json scripts
# anyway, and those are ordinary files.
HOOK_MANAGER_ENTRIES = (".pre-commit-config.yaml", ".husky", ".envrc", *LEFTHOOK_ENTRIES)
WORKSPACE_ENTRIES = (
    ".agent",
    ".claude",
    ".mcp.json",
    ".vscode",
    ".idea",
    ".gitmodules",
    ".gitconfig",
    ".ripgreprc",
    *HOOK_MANAGER_ENTRIES,
    *GIT_ENTRIES,
    *SHELL_STARTUP,
)
# Relative to the home directory: they matter when a writable root reaches into it.
HOME_ENTRIES = (
    *SHELL_STARTUP,
    ".gitconfig",
    ".config/git",
    ".config/agent",
    ".local/state/agent",  # the person's prompt history (tui/history_file.py): Up would offer what is planted
    ".claude",
    ".claude.json",
    ".mcp.json",
    ".ssh",
)
GIT_TAILS = tuple(entry.split("/", 1)[1] for entry in GIT_ENTRIES)  # config, hooks, … inside any `.git`
NESTED_DEPTH = 2  # how deep bash's sandbox looks for repositories inside a writable root (an editor's
# scan for them goes one level; a look costs one scandir a folder, on every command)
PLACEHOLDER_DIRS = (".git/hooks",)  # created empty when missing (git's own layout; git never lists it)
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[\s*([^\]\s]+)[^\]]*\]")


def is_protected(path: Path, workspace: Path, home: Path | None = None, extra: Iterable[Path] = ()) -> str:
    """The protected path (as the person would write it) that `path` is or lies in, or "" when none:
    also anything in a `.git` folder, and what would plant a git directory elsewhere (gitdirs.py).
    Both the path as given and its target (symlinks followed) are judged, case-insensitively."""
    home = home or Path.home()
    candidates = {_norm(path), _real(path)}
    for entry, label in _entries(workspace, home, extra):
        for candidate in candidates:
            if _within(candidate, entry):
                return label
    roots = {_norm(workspace), _real(workspace)}
    checks = (_nested_git, _nested_repo, planted_git_dir)
    nested = (check(c, r) for check in checks for c in candidates for r in roots)
    return next(filter(None, nested), "")


def _nested_git(path: Path, root: Path) -> str:
    """`sub/.git/config` for a path in the git config or hooks of a repository inside `root` (a nested
    clone, or one a command made: the person's or their editor's next git command there runs them),
    and `sub/.git` itself (a `gitdir:` pointer sends git to a config anywhere); "" otherwise."""
    if not _within(path, root) or path == root:
        return ""
    parts = str(path)[len(str(root).rstrip("/")) + 1 :].split("/")
    for i, part in enumerate(parts[1:], start=1):
        if part.casefold() != ".git":
            continue
        if i + 1 == len(parts):
            return "/".join(parts)
        if parts[i + 1].casefold() in GIT_TAILS:
            return "/".join(parts[: i + 2])
    return ""


def _nested_repo(path: Path, root: Path) -> str:
    """`sub/lefthook.yml` for a path in a hook manager's config (HOOK_MANAGER_ENTRIES) or in the
    `core.hooksPath` of a repository inside `root`, at any depth: a folder below it that holds a `.git`
    (a folder, or a `gitdir:` pointer), whose hooks run it at the person's next `git commit` there."""
    if not _within(path, root) or path == root:
        return ""
    parts = str(path)[len(str(root).rstrip("/")) + 1 :].split("/")
    for i in range(len(parts) - 1, 0, -1):  # the nearest repository first
        repo = root.joinpath(*parts[:i])
        if not os.path.lexists(repo / ".git"):
            continue
        rest = Path(*parts[i:])
        for name in HOOK_MANAGER_ENTRIES:
            if _within(rest, Path(name)):
                return "/".join([*parts[:i], name])
        if (hooks := hooks_path(repo)) is not None and _within(path, hooks):
            return f"{_label(hooks, root)} (core.hooksPath)"
    return ""


def _entries(workspace: Path, home: Path, extra: Iterable[Path]) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    for root in {_norm(workspace), _real(workspace)}:
        out += [(root / name, name) for name in WORKSPACE_ENTRIES]
        hooks = hooks_path(root)
        if hooks is not None:
            out.append((hooks, f"{_label(hooks, root)} (core.hooksPath)"))
    for root in {_norm(home), _real(home)}:
        out += [(root / name, f"~/{name}") for name in HOME_ENTRIES]
    out += [(_norm(p), str(p)) for p in [*person_dirs(), *extra]]
    return out


def person_dirs() -> list[Path]:
    """The person's own config folders where the environment moves them (`$XDG_CONFIG_HOME/agent`,
    `$CLAUDE_CONFIG_DIR`), and their prompt history's (`$XDG_STATE_HOME/agent`): what is written
    there is read next time as the person's own word."""
    out = []
    if xdg := os.environ.get("XDG_CONFIG_HOME"):
        out.append(Path(xdg).expanduser() / "agent")
    if state := os.environ.get("XDG_STATE_HOME"):
        out.append(Path(state).expanduser() / "agent")
    if claude := os.environ.get("CLAUDE_CONFIG_DIR"):
        out.append(Path(claude).expanduser())
    return [_norm(p) for p in out]


def hooks_path(workspace: Path) -> Path | None:
    """`core.hooksPath` from the workspace's `.git/config`, as an absolute path (None when unset).
    A repository that keeps its hooks in the tree (husky's `.husky/`) runs them at every commit."""
    try:
        text = (workspace / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section = ""
    found = ""
    for line in text.splitlines():
        if header := _SECTION.match(line):
            section = header.group(1).lower()
        elif section == "core" and (match := _HOOKS_PATH.match(line)):
            found = match.group(1).strip('"')
    if not found:
        return None
    path = Path(os.path.expanduser(found))
    return _norm(path if path.is_absolute() else workspace / path)


# -- what bash's sandbox binds ----------------------------------------------------------------------


@dataclass(frozen=True)
class Watch:
    """A protected path that did not exist (or was a symlink) when a command started: whatever is
    there after it ends, other than what was there before, is set aside."""

    path: Path
    link: str | None = None  # the symlink's target, when it was one (put back after setting aside)


@dataclass(frozen=True)
class Layout:
    anchors: tuple[Path, ...] = ()  # folders bound writable over themselves: they cannot be renamed
    read_only: tuple[Path, ...] = ()  # existing protected paths (real paths), bound read-only
    watched: tuple[Watch, ...] = ()


def layout(roots: Sequence[Path], home: Path, extra: Iterable[Path] = (), *, create: bool = True) -> Layout:
    """What keeps the protected paths under the writable `roots` unchanged by a sandboxed command.
    `extra`: more protected paths (the sessions folder wherever it lives); `create`: make the missing
    placeholder folders (an empty `.git/hooks`). Cheap: a few dozen lstat."""
    real_roots = _dedupe([Path(os.path.realpath(r)) for r in roots])
    candidates: list[Path] = []
    for root in real_roots:
        git = root / ".git"
        if git.is_dir() and not git.is_symlink():
            for name in PLACEHOLDER_DIRS if create else ():
                _placeholder(root / name)
            candidates += [root / name for name in WORKSPACE_ENTRIES]
        else:  # no repository yet: `git init` may make one (its config is then not watched)
            candidates += [root / n for n in WORKSPACE_ENTRIES if n not in GIT_ENTRIES]
            if git.is_file() or git.is_symlink():
                candidates.append(git)  # `gitdir: …` must keep pointing where it points
        if (hooks := hooks_path(root)) is not None:
            candidates.append(hooks)
        candidates += nested_git(root)
    real_home = Path(os.path.realpath(home))
    candidates += [real_home / name for name in HOME_ENTRIES]
    candidates += [Path(os.path.realpath(p)) for p in [*person_dirs(), *extra]]
    anchors: list[Path] = []
    read_only: list[Path] = []
    watched: list[Watch] = []
    for path in _dedupe(candidates):
        root = next((r for r in real_roots if _within(path, r) and path != r), None)
        if root is None or any(_within(path, done) for done in read_only):
            continue
        anchors += _ancestors(path, root)
        if path.is_symlink():
            watched.append(Watch(path, os.readlink(path)))
            target = Path(os.path.realpath(path))
            if target.exists() and any(_within(target, r) for r in real_roots):
                read_only.append(target)
        elif path.exists():
            read_only.append(path)
        else:
            watched.append(Watch(path))
    anchors = sorted(_dedupe(anchors), key=lambda p: len(p.parts))
    return Layout(tuple(anchors), tuple(_dedupe(read_only)), tuple(watched))


def nested_git(root: Path, depth: int = NESTED_DEPTH) -> list[Path]:
    """The git config and hooks (and `gitdir:` pointers) of the repositories in `root`'s folders down
    to `depth` levels, each repository's `core.hooksPath` and hook managers' config too; symlinked
    folders are not followed."""
    out: list[Path] = []
    level = [root]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            try:
                entries = [e for e in os.scandir(folder) if e.name.casefold() != ".git"]
            except OSError:
                continue
            for entry in entries:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                sub = Path(entry.path)
                below.append(sub)
                git = sub / ".git"
                if git.is_dir() and not git.is_symlink():
                    out += [git / tail for tail in GIT_TAILS]  # a missing one is watched
                    if (hooks := hooks_path(sub)) is not None:
                        out.append(hooks)
                elif os.path.lexists(git):
                    out.append(git)
                if os.path.lexists(git):
                    out += [sub / name for name in HOOK_MANAGER_ENTRIES]  # a missing one is watched
        level = below
    return out


def _ancestors(path: Path, root: Path) -> list[Path]:
    """The real folders between `root` and `path`: bound over themselves, they cannot be renamed away
    (with them a new `.git/hooks` could be put in place of the protected one)."""
    out: list[Path] = []
    for parent in path.parents:
        if parent == root or not _within(parent, root):
            break
        if parent.is_dir() and not parent.is_symlink():
            out.append(parent)
    return out


def set_aside(watched: Iterable[Watch], quarantine: Path, workspace: Path) -> list[str]:
    """Move what a command created at a watched protected path into `quarantine` (nothing is
    deleted), and put back a symlink it replaced. Returns "path -> where it went" for each, paths in
    the workspace relative to it."""
    moved: list[str] = []
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    root = Path(os.path.realpath(workspace))
    for watch in watched:
        path = watch.path
        if not os.path.lexists(path) or (watch.link is not None and _link(path) == watch.link):
            continue
        dest = quarantine / stamp / _label(path, root).lstrip("/")
        if _within(quarantine, path):  # the quarantine lies in what is set aside (`.agent` itself)
            dest = path.with_name(f"{path.name}.set-aside-{stamp}")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.rename(path, dest)
        except OSError:  # another filesystem: renamed where it is, out of the name that runs code
            dest = path.with_name(f"{path.name}.set-aside-{stamp}")
            try:
                os.rename(path, dest)
            except OSError:
                continue
        moved.append(f"{_label(path, root)} -> {_label(dest, root)}")
        if watch.link is not None:
            try:
                os.symlink(watch.link, path)
            except OSError:
                pass
    return moved


def _placeholder(path: Path) -> None:
    if not os.path.lexists(path):
        try:
            path.mkdir(mode=0o755)
        except OSError:
            pass  # then it is watched like any missing protected path


def _link(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _dedupe(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))


def _norm(path: Path) -> Path:
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def _within(path: Path, entry: Path) -> bool:
    p, e = str(path).casefold(), str(entry).casefold()
    return p == e or p.startswith(e.rstrip("/") + "/")


def _label(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


__all__ = [
    "HOME_ENTRIES",
    "HOOK_MANAGER_ENTRIES",
    "WORKSPACE_ENTRIES",
    "Layout",
    "Watch",
    "is_protected",
    "layout",
    "set_aside",
]
