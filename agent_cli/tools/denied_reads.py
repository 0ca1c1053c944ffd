"""What a `Read(...)` deny rule keeps out of grep, glob, ls and edit_file, as it keeps it from read_file.

`Permissions.decide` refuses a search whose root a deny rule covers or lies in (grep of `secrets`
under `Read(./secrets/**)`, of a link to it, of `~/.ssh` under `Read(~/.ssh/**)`). A search whose root
merely holds denied files runs, and every file a deny rule covers is left out of what it shows (lines,
names, counts), judged as read_file's path is: by the path and by its target, symlinks resolved. grep
also keeps ripgrep from reading them (`rg_exclusions`); the filter stays the authority.

The result says in one line how many files were left out. That number counts the denied files the
search walked, whatever its pattern: a count of the denied files that *match* would let a model spell
a secret out one guess at a time (`sk-live-1`? `sk-live-2`? …).

edit_file reads the file it edits and shows it back: the region closest to an `old_string` it did not
find, the lines around the edit, where and how often `old_string` occurs, whether it occurs at all. So a
deny or ask rule on reading a file is one on editing it too (`reads_back`); write_file, which reports
only how many lines it replaced, is left to the rules on writing.

Ask rules are not applied file by file inside a search: a search in a folder an ask rule covers asks
(as a deny rule's is refused), and one over a folder that merely holds such files leaves nothing out
— a question per file found would be a storm of modals, and leaving the files out unasked would be a
deny the person did not write.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from agent_cli.tools.base import ReadGuard
from agent_cli.tools.rules import READ_FAMILY, PathSpec, Rule, SourcedRule, canonical_tool

DenyCheck = Callable[[Path], bool]
MAX_EXCLUSIONS = 1000  # --glob arguments for ripgrep; past them the filter alone leaves files out
_GLOB_SPECIAL = frozenset("\\*?[]{}")
SHOWS_WHAT_IT_READS = frozenset({"edit"})  # canonical names (rules.py): edit_file, MultiEdit, NotebookEdit
_ANY_NAME = "\x01"  # a file name no rule spells out: what a rule says of it, it says of any file


def searches_in(rule: Rule, tool_name: str, roots: Iterable[Path], workspace: Path, home: Path) -> bool:
    """Whether a search (grep, glob, ls) from one of these roots runs inside a folder the rule covers
    (`secrets`, or a link to it, under `Read(./secrets/**)`): a rule that covers any name in the
    folder covers all the search could find, so the search is refused as read_file of one would be."""
    if canonical_tool(tool_name) not in READ_FAMILY:
        return False
    return any(
        rule.matches_path(tool_name, root / _ANY_NAME, workspace, home) for root in roots if root.is_dir()
    )


def reads_back(rule: Rule, tool_name: str, paths: Iterable[Path], workspace: Path, home: Path) -> bool:
    """Whether a deny or ask rule on reading (a bare `Read`, or `Read(…)` and the other searches' path
    rules) covers a call that shows the model what it read: edit_file (and Claude Code's MultiEdit and
    NotebookEdit, the same tool to a rule) of a file the rule covers, by its path and by its target."""
    if canonical_tool(tool_name) not in SHOWS_WHAT_IT_READS:
        return False
    return any(rule.matches_path("read_file", path, workspace, home) for path in paths)


def deny_check(rules: Iterable[SourcedRule], workspace: Path, home: Path) -> DenyCheck | None:
    """Whether a deny rule forbids reading a path: `Rule.matches_path` for read_file (a bare `Read`
    covers every file; `Read(…)`, `Grep(…)`, `Glob(…)`, `LS(…)` their paths), by the path and by its
    target, compiled once for a whole search. None when no deny rule is about reading files."""
    anchored: list[tuple[str, str]] = []  # every rule's, as one spec: any of them matching is a match
    for sourced in rules:
        rule = sourced.rule
        if sourced.effect != "deny":
            continue
        if rule.spec is None and rule.names_tool("read_file"):
            return lambda path: True
        if rule.spec is not None and rule.tool in READ_FAMILY:
            anchored += PathSpec.of(rule.spec, workspace, home).anchored
    if not anchored:
        return None
    spec, real = PathSpec(tuple(anchored)), _RealPaths()
    return lambda path: spec.matches((path, real(path)))


class _RealPaths:
    """`os.path.realpath`, each folder resolved once: a search's paths are many names in few folders,
    and a name that is not a link resolves to its folder's target joined with the name. Strings, not
    Paths: this runs for every file a search walks."""

    def __init__(self) -> None:
        self._folders: dict[str, str] = {}

    def __call__(self, path: Path) -> str:
        text = os.fspath(path)
        try:
            folder, name = os.path.split(text)
            if not name or not folder or os.path.islink(text):
                return os.path.realpath(text)
            real = self._folders.get(folder)
            if real is None:
                real = self._folders[folder] = os.path.realpath(folder)
            return os.path.join(real, name)
        except (OSError, ValueError, RuntimeError):
            return text


class LeftOut:
    """One search's filter: a path no deny rule covers goes on; one a rule covers is left out, and
    counted for the result's note."""

    def __init__(self, guard: ReadGuard | None) -> None:
        self._denied = guard.read_check() if guard is not None else None
        self.paths: set[Path] = set()

    @property
    def active(self) -> bool:
        return self._denied is not None

    def keeps(self, path: str | Path) -> bool:
        if self._denied is None:
            return True
        path = Path(path)
        if self._denied(path):
            self.paths.add(path)
            return False
        return True

    def note(self, one: str = "file", many: str = "files") -> str:
        """One line for the result, naming no file ('' when nothing was left out)."""
        count = len(self.paths)
        if count == 1:
            return f"1 {one} left out: a deny rule forbids reading it"
        return f"{count} {many} left out: deny rules forbid reading them" if count else ""


def rg_exclusions(root: Path, paths: Iterable[Path]) -> list[str]:
    """`--glob` values that keep ripgrep, run in `root`, from reading these files: each one's path from
    the root, anchored, its glob characters escaped. A path outside the root, or whose name is not
    UTF-8 or holds a line break, is left to the filter; so is every path past MAX_EXCLUSIONS, and all of
    them when the root's path goes through a link (ripgrep anchors at its resolved working directory).
    """
    globs: list[str] = []
    for path in paths:
        try:
            rel = path.relative_to(root).as_posix()
            rel.encode("utf-8")
        except (ValueError, UnicodeEncodeError):
            continue
        if rel in ("", ".") or "\n" in rel or "\r" in rel:
            continue
        escaped = "".join("\\" + char if char in _GLOB_SPECIAL else char for char in rel)
        if escaped.endswith(" "):
            escaped = escaped[:-1] + "\\ "  # a gitignore-style line loses its unescaped trailing spaces
        globs.append("!/" + escaped)
        if len(globs) >= MAX_EXCLUSIONS:
            break
    return globs
