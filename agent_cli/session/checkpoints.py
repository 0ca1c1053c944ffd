"""Checkpoints: the workspace snapshotted in a shadow git repository before a prompt's first change,
and again when its turn ends.

The shadow repository lives in the session directory (`checkpoints.git`) and uses the workspace as its
work tree (`git --git-dir=... --work-tree=...`), so the person's own `.git` is never touched. It honours
the workspace's .gitignore files; `.agent/` and files over a size limit are left out (and listed). A
nested repository or submodule (a folder with its own `.git`) is only a gitlink in a snapshot: its
files are not held, so a rewind leaves them as they are and says so (`nested`). A snapshot is a commit.

Changes made by bash are caught as well as edits: the snapshot is the whole tree, taken before the
first tool call of a prompt that may change the workspace. Rewinding the code puts back only what the
agent's turns changed since (ownership.py says which paths those are, from the snapshots the log
names), each path as it was before the agent first changed it; files the agent created are removed,
the person's own changes between turns are kept. Before a rewind the current state is snapshotted too,
so a rewind can be undone, and after it, so the next rewind knows what this one changed. A file that
is over the size limit now is in no snapshot of now: a rewind leaves it as it is.

Paths are git's bytes decoded as os.fsdecode decodes them: a name that is not UTF-8 keeps its odd bytes
as lone surrogates and goes back to git, and to the file system, as those very bytes. What a person
or the log is told shows them as `\\xNN` (`shown_name`).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.core.files import PRIVATE_FILE, atomic_write, atomic_write_bytes, private_dir
from agent_cli.core.surrogates import scrub, shown_name
from agent_cli.session.checkpoint_store import ALTERNATES, Upkeep, fork_store
from agent_cli.session.ownership import ABSENT, NOW, Change, Span, attribute, is_commit

SHADOW = "checkpoints.git"
MAX_FILE_BYTES = 5_000_000  # larger files are not snapshotted (listed as skipped)
ALWAYS_EXCLUDED = (".agent/", ".session_memory.md")
GIT_TIMEOUT = 120.0
# The shadow repository's whole config, written afresh whenever a session opens it: whoever wrote the
# file before (a repository that ships `.agent/sessions/`, a tool write), nothing in it runs a
# command (core.fsmonitor, filter drivers, core.hooksPath, ...). Hooks are off on every call too.
CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tautocrlf = false\n[gc]\n\tauto = 0\n"
GITLINK = "160000"  # the mode git gives a nested repository or submodule (a gitlink)
NO_HOOKS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


class CheckpointError(Exception):
    """git is missing, or a snapshot or restore failed; the message says which and why."""


@dataclass(frozen=True)
class Snapshot:
    commit: str
    skipped: tuple[str, ...] = ()  # files over the size limit, not in the snapshot
    nested: tuple[str, ...] = ()  # nested repositories and submodules: their files are not in it

    def skipped_shown(self) -> list[str]:
        return [shown_name(p) for p in self.skipped]

    def nested_shown(self) -> list[str]:
        return [shown_name(p) + "/" for p in self.nested]


@dataclass(frozen=True)
class Restored:
    """What a code rewind did, for the person."""

    restored: tuple[str, ...] = ()  # files put back as they were (changed or deleted since)
    removed: tuple[str, ...] = ()  # files created since, removed
    undo: str = ""  # the snapshot of the state before the rewind
    nested: tuple[str, ...] = ()  # nested repositories (then or now): left as they are
    skipped: tuple[str, ...] = ()  # files over the size limit now: left as they are
    kept: tuple[str, ...] = ()  # changed since, but only outside the agent's turns: left as they are
    yours: tuple[str, ...] = ()  # put back, though the person changed them after the agent did
    after: str = ""  # the snapshot of the state after the rewind

    def describe(self) -> str:
        if not self.restored and not self.removed:
            mine = "Nothing the agent changed is left to restore." if self.kept else ""
            said = mine or "The files were already as they were then; nothing to restore."
        else:
            parts = []
            if self.restored:
                parts.append(f"restored {len(self.restored)} file(s): " + _names(self.restored))
            if self.removed:
                parts.append(f"removed {len(self.removed)} file(s) created since: " + _names(self.removed))
            said = "; ".join(parts) + "."
        if self.yours:
            said += (
                f" Also changed by you since: {_names(self.yours)}; `/rewind undo` brings your version back."
            )
        if self.kept:
            said += f" Kept {len(self.kept)} file(s) changed outside the agent's turns: {_names(self.kept)}."
        if self.nested:
            repos = ", ".join(shown_name(p) + "/" for p in self.nested[:20])
            said += f" Not restored: {repos} (a repository of its own: use its git)."
        return said

    def skipped_shown(self) -> list[str]:
        return [shown_name(p) for p in self.skipped]


@dataclass
class Checkpoints:
    """The shadow repository of one session."""

    workspace: Path
    session_dir: Path
    max_file_bytes: int = MAX_FILE_BYTES
    _ready: bool = field(default=False, init=False)
    # one git at a time on the shadow index: an end-of-turn snapshot may still run as the next starts
    _busy: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)
    # packs the store in the background (checkpoint_store.py)
    upkeep: Upkeep = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.upkeep = Upkeep(self.git_dir, self._git)

    @property
    def git_dir(self) -> Path:
        return self.session_dir / SHADOW

    def snapshot(self, message: str) -> Snapshot:
        """Commit the workspace as it is now."""
        with self._busy:
            self._init()
            skipped = self._exclude_large()
            self._git("add", "-A", "--ignore-errors", check=False)
            tree = self._git("write-tree").strip()
            parent = self._git("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
            args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
            commit = self._git(*args).strip()
            self._git("update-ref", "HEAD", commit)
            snap = Snapshot(commit, tuple(skipped), tuple(self._gitlinks()))
        self.upkeep.after_snapshot()
        return snap

    def fork_from(self, parent_session: Path) -> None:
        """This new session's store made to hold every snapshot of `parent_session`'s, in a pack of
        its own: a few MB however many snapshots, and whole without the parent."""
        self._init()
        fork_store(parent_session / SHADOW, self.git_dir, self._git)

    def restore(self, commit: str, spans: Sequence[Span] = ()) -> Restored:
        """Put back as it was at `commit` what changed since. With `spans` (ownership.py: the log's
        snapshots from `commit` on), only the paths the agent's spans changed, each as it was before
        the first of them did; without, every path that differs from `commit`. `commit`
        comes from the log: only an object name is taken (`--output=…` would be an option to git)."""
        if not is_commit(commit):
            raise CheckpointError(f"not a checkpoint: {commit[:80]!r}")
        with self._busy:
            now = self.snapshot("before rewind")
            spans = [Span(s.start, s.end or now.commit, s.agent) for s in spans or [Span(commit, NOW, True)]]
            owned = attribute(spans, self.changes)
            current = self._tree(now.commit)
            large, nested = set(now.skipped), set(now.nested)
            restored: list[str] = []
            removed: list[str] = []
            checkouts: dict[str, list[str]] = {}
            for path in sorted(owned.then):
                then, cur = owned.then[path], current.get(path)
                if path in large or (then.mode == ABSENT and cur is None) or (then.mode, then.sha) == cur:
                    continue  # a file over the limit now is in no snapshot; or it is as it was then
                if GITLINK in (then.mode, cur[0] if cur else ""):  # git cannot put its files back
                    nested.add(path)
                elif then.mode == ABSENT:  # the agent made it
                    self._remove(path)
                    removed.append(path)
                else:  # the agent changed or deleted it
                    checkouts.setdefault(then.commit, []).append(path)
                    restored.append(path)
            for source, paths in checkouts.items():
                self._checkout(source, paths)
            kept = []
            for change in self.changes(commit, now.commit):
                if GITLINK in (change.old_mode, change.new_mode):
                    nested.add(change.path)
                elif change.path not in owned.then and change.path not in large:
                    kept.append(change.path)
            yours = tuple(p for p in sorted(owned.yours) if p in restored or p in removed)
            after = self.snapshot("after rewind").commit if restored or removed else now.commit
        return Restored(
            restored=tuple(restored),
            removed=tuple(removed),
            undo=now.commit,
            nested=tuple(sorted(nested)),
            skipped=now.skipped,
            kept=tuple(kept),
            yours=yours,
            after=after,
        )

    def changes(self, old: str, new: str) -> list[Change]:
        """The paths that differ between two snapshots, each with its mode and blob in `old`."""
        out = self._git("diff-tree", "-r", "-z", "--no-renames", old, new)
        fields = [f for f in out.split("\0") if f]
        found = []
        for raw, path in zip(fields[::2], fields[1::2], strict=False):
            words = raw.lstrip(":").split()  # "OLDMODE NEWMODE OLDSHA NEWSHA STATUS"
            found.append(Change(path, words[0], words[2], words[1]))
        return found

    def _tree(self, commit: str) -> dict[str, tuple[str, str]]:
        """Every path of a snapshot: its mode and blob."""
        out = self._git("ls-tree", "-r", "-z", "--full-tree", commit)
        tree = {}
        for entry in (e for e in out.split("\0") if e):
            info, path = entry.split("\t", 1)  # "MODE TYPE SHA\tPATH"
            mode, _, sha = info.split()
            tree[path] = (mode, sha)
        return tree

    def _remove(self, path: str) -> None:
        target = self.workspace / path
        try:
            target.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CheckpointError(f"cannot remove {shown_name(path)}: {exc.strerror}") from exc
        _prune_empty_dirs(target.parent, self.workspace)

    # -- git ------------------------------------------------------------------------------------------

    def _init(self) -> None:
        if self._ready:
            return
        if not (self.git_dir / "HEAD").exists():
            private_dir(self.git_dir.parent)
            self._git("init", "-q", "--bare", str(self.git_dir), with_tree=False)
        atomic_write(self.git_dir / "config", CONFIG, mode=PRIVATE_FILE)
        for name in ALTERNATES:  # a shipped store would read objects of another repository on the machine
            (self.git_dir / "objects" / "info" / name).unlink(missing_ok=True)
        self._ready = True

    def _exclude_large(self) -> list[str]:
        """Files over the limit go to the shadow repository's info/exclude, so `add -A` skips them.
        The list is made afresh each time (a file that shrank is snapshotted again)."""
        exclude = self.git_dir / "info" / "exclude"
        atomic_write(exclude, "\n".join(ALWAYS_EXCLUDED) + "\n", mode=PRIVATE_FILE)
        listed = self._git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
        large = []
        root = str(self.workspace)
        for rel in (p for p in listed.split("\0") if p):
            try:  # os.stat on a joined name: a Path per file took 2-3 times as long on 5k files
                if os.stat(os.path.join(root, rel)).st_size > self.max_file_bytes:
                    large.append(rel)
            except OSError:
                continue
        lines = [*ALWAYS_EXCLUDED, *("/" + _escape(p) for p in large)]
        atomic_write_bytes(exclude, os.fsencode("\n".join(lines) + "\n"), mode=PRIVATE_FILE)
        if large:
            self._git("rm", "-q", "--cached", "--ignore-unmatch", "--", *large, check=False)
        return large

    def _gitlinks(self) -> list[str]:
        """The nested repositories and submodules `add -A` recorded as gitlinks (no files of theirs)."""
        staged = self._git("ls-files", "-z", "--stage", check=False)
        return [entry.split("\t", 1)[1] for entry in staged.split("\0") if entry.startswith(GITLINK + " ")]

    def _checkout(self, commit: str, paths: Sequence[str]) -> None:
        for start in range(0, len(paths), 200):  # keep argv short
            self._git("checkout", "-q", commit, "--", *paths[start : start + 200])

    def _git(self, *args: str, check: bool = True, with_tree: bool = True) -> str:
        cmd = ["git", *NO_HOOKS]
        if with_tree:
            cmd += [f"--git-dir={self.git_dir}", f"--work-tree={self.workspace}"]
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "agent",
            "GIT_AUTHOR_EMAIL": "agent@localhost",
            "GIT_COMMITTER_NAME": "agent",
            "GIT_COMMITTER_EMAIL": "agent@localhost",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            # every path we hand git is a file's name, never a pattern: `:(icase)A`, `:(exclude)x`
            # or `[ab]` (a name a command in the sandbox can make) would otherwise be read as one
            "GIT_LITERAL_PATHSPECS": "1",
        }
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"):
            env.pop(name, None)
        if with_tree:  # its `commondir` file is ignored: one a shipped session holds sends git to a
            env["GIT_COMMON_DIR"] = str(self.git_dir)  # config of its own (a filter driver runs code)
        try:
            done = subprocess.run(
                cmd + list(args),
                cwd=self.workspace,
                env=env,
                capture_output=True,
                encoding="utf-8",
                errors="surrogateescape",  # `ls-files -z` and `diff -z` give names as they are
                timeout=GIT_TIMEOUT,
                check=False,
                # the shadow repository holds the person's code: what git writes there is 0600/0700;
                # a checkout writes the work tree too, whose files keep the person's umask
                umask=-1 if args[0] == "checkout" else 0o077,
            )
        except FileNotFoundError as exc:
            raise CheckpointError("git is not installed: checkpoints need it (apt install git)") from exc
        except subprocess.TimeoutExpired as exc:
            raise CheckpointError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from exc
        if check and done.returncode != 0:
            raise CheckpointError(f"git {args[0]} failed: {scrub(done.stderr.strip()[:300])}")
        return done.stdout


def _names(paths: tuple[str, ...]) -> str:
    return ", ".join(shown_name(p) for p in paths[:20])


def _escape(path: str) -> str:
    """A path as a literal gitignore pattern."""
    out = path
    for char in "\\[]*?!#":
        out = out.replace(char, "\\" + char)
    return out


def _prune_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
