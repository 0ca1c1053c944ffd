"""Where a task works, never the repository's own checkout: a git worktree of a local repository, or a
fresh clone of a URL, on the branch `agent/batch/<id>` from the task's `ref` (the repository's HEAD
when none). Afterwards everything the agent changed is committed on that branch.

A checkout made by an earlier run of the batch (an interrupted task, or a failed one run again) is
used as it is, and the task's session goes on there. Work on one local repository is serialized by a
lock in its git folder (several workers add worktrees to it at once). Git never asks for a password
(GIT_TERMINAL_PROMPT=0, ssh in batch mode) and speaks only the usual protocols (no `ext::`). Every git
call here runs no hooks and no fsmonitor, takes no bare repository it was not pointed at (a task's model
may plant one in its checkout: HEAD, objects/, refs/ and a config), and diffs without external or
textconv drivers: the branch is a record of what the agent changed, for your checks to judge. A local
repository's own filter drivers (filter.*.clean/smudge in its .git/config) still run at the checkout
and the commit, as they do at every `git add` of yours there.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_cli.batch.tasks import Task

GIT_TIMEOUT = 600.0  # a clone of a large repository
# before every git command: no hooks (a local repository's post-checkout at `worktree add`), no
# fsmonitor, no bare repository found by itself (`safe.bareRepository` counts from the command line)
SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "safe.bareRepository=explicit")
COMMITTER = ("agent batch", "agent-batch@localhost")  # when git knows no one
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class CheckoutError(Exception):
    pass


@dataclass(frozen=True)
class Checkout:
    path: Path
    branch: str
    base: str  # the commit the branch started from
    reused: bool  # made by an earlier run


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env.setdefault("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return env


def git(*args: str, cwd: Path | None = None) -> str:
    """Run git; its stdout. CheckoutError carries git's last line of complaint."""
    try:
        done = subprocess.run(
            ["git", *SAFE, *args],
            cwd=cwd,
            env=git_env(),
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise CheckoutError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise CheckoutError(f"git {args[0]} took longer than {GIT_TIMEOUT:g} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise CheckoutError(lines[-1].strip() if lines else f"git {args[0]} failed ({done.returncode})")
    return done.stdout


def prepare(task: Task, workdir: Path) -> Checkout:
    """The task's checkout under `workdir/<id>`: made now, or the one an earlier run left."""
    path = workdir / task.id
    if (path / ".git").exists():
        return Checkout(path, task.branch, _base_of(path), reused=True)
    if path.exists() and any(path.iterdir()):
        raise CheckoutError(f"{path} is in the way (not a checkout of this batch); move it away")
    workdir.mkdir(parents=True, exist_ok=True)
    if task.is_url:
        return _clone(task, path)
    return _worktree(task, path)


def _clone(task: Task, path: Path) -> Checkout:
    try:
        git("clone", "--quiet", "--no-checkout", "--", task.repo, str(path))
    except CheckoutError as exc:
        raise CheckoutError(f"cannot clone {task.repo}: {exc}") from None
    base = _resolve(path, task.ref, remote=True)
    git("checkout", "--quiet", "-B", task.branch, base, cwd=path)
    _remember_base(path, base)
    return Checkout(path, task.branch, base, reused=False)


def _worktree(task: Task, path: Path) -> Checkout:
    repo = Path(task.repo)
    if not repo.is_dir():
        raise CheckoutError(f"no repository at {repo}")
    at: tuple[str, ...] = ()
    for at in ((), ("--git-dir", str(repo.absolute()))):  # a bare repository, named: taken as one
        try:
            common = Path(git(*at, "rev-parse", "--git-common-dir", cwd=repo).strip())
            break
        except CheckoutError:
            continue
    else:
        raise CheckoutError(f"{repo} is not a git repository")
    common = common if common.is_absolute() else (repo / common).resolve()
    with repo_lock(common):
        base = _resolve(repo, task.ref, remote=False, at=at)
        git(*at, "worktree", "prune", cwd=repo)  # a worktree folder deleted by hand frees its branch
        exists = bool(git(*at, "branch", "--list", task.branch, cwd=repo).strip())
        if exists:  # an earlier run's branch whose folder is gone: go on from it
            git(*at, "worktree", "add", "--quiet", str(path), task.branch, cwd=repo)
            base = _base_of(path, default=base)
        else:
            git(*at, "worktree", "add", "--quiet", "-b", task.branch, str(path), base, cwd=repo)
    _remember_base(path, base)
    return Checkout(path, task.branch, base, reused=exists)


def _resolve(repo: Path, ref: str | None, *, remote: bool, at: tuple[str, ...] = ()) -> str:
    """The commit `ref` names (HEAD when None); in a clone, a branch name is the remote's."""
    names = [ref or "HEAD"]
    if remote and ref:
        names.append(f"origin/{ref}")
    for name in names:
        try:
            return git(*at, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=repo).strip()
        except CheckoutError:
            continue
    raise CheckoutError(f"no commit {ref or 'HEAD'!r} in {repo}" + ("" if ref else " (an empty repository?)"))


def _git_dir(path: Path) -> Path:
    git_dir = Path(git("rev-parse", "--git-dir", cwd=path).strip())
    return git_dir if git_dir.is_absolute() else path / git_dir


def _remember_base(path: Path, base: str) -> None:
    """The commit the branch starts from, kept in the checkout's own git folder (a worktree's is
    its own too), for the diff stat of a later run that goes on there."""
    (_git_dir(path) / "agent-batch-base").write_text(base + "\n", encoding="utf-8")


def _base_of(path: Path, default: str = "") -> str:
    """The commit an earlier run started the branch from: kept in the checkout's own git folder (a
    clone's task could write there: only a commit's name is taken, never a link or an option)."""
    marker = _git_dir(path) / "agent-batch-base"
    if marker.is_file() and not marker.is_symlink():
        base = marker.read_text(encoding="utf-8", errors="replace").strip()
        if _COMMIT.fullmatch(base):
            return base
    return default or git("rev-parse", "HEAD", cwd=path).strip()


def _links(path: Path) -> list[str]:
    """The symbolic links in a clone's git folder, which its task could write: git writes through them
    (a reflog is appended to, COMMIT_EDITMSG rewritten), out of the checkout. A worktree's git folder
    is the repository's, out of the task's reach."""
    git_dir = path / ".git"
    if git_dir.is_symlink():
        return [".git"]
    out = []
    for folder, dirs, files in os.walk(git_dir) if git_dir.is_dir() else ():
        for name in (*dirs, *files):
            if os.path.islink(entry := os.path.join(folder, name)):
                out.append(f"{os.path.relpath(entry, path)} -> {os.readlink(entry)}")
    return out


@contextmanager
def repo_lock(common_dir: Path) -> Iterator[None]:
    """One worker at a time changes a repository's worktrees and branches."""
    with open(common_dir / "agent-batch.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def commit(checkout: Checkout, task: Task, exclude: list[str]) -> tuple[str, str]:
    """Commit everything changed in the checkout but `exclude` (paths relative to it: the session
    folder); (the branch's head, `git diff --shortstat` from the base)."""
    path = checkout.path
    if links := _links(path):
        raise CheckoutError(f"its git folder holds links git would write through ({'; '.join(links[:3])})")
    # a path git ignores already (`.agent/` in a clone's info/exclude) named in a pathspec fails the add
    git("add", "--all", "--", ".", *(f":(exclude){p}" for p in exclude if not _ignored(path, p)), cwd=path)
    staged = subprocess.run(
        ["git", *SAFE, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv"],
        cwd=path,
        env=git_env(),
        stdin=subprocess.DEVNULL,
    ).returncode
    if staged == 1:
        who = []
        if not _configured(path, "user.email"):
            who = ["-c", f"user.name={COMMITTER[0]}", "-c", f"user.email={COMMITTER[1]}"]
        title = " ".join(task.prompt.split())
        title = title if len(title) <= 60 else title[:57] + "..."
        message = f"agent batch {task.id}: {title}\n\n{task.prompt.strip()}\n"
        quiet = ["-c", "gc.auto=0", "-c", "commit.gpgSign=false"]
        _commit(path, [*quiet, *who], message)
    head = git("rev-parse", "HEAD", cwd=path).strip()
    diff = ["diff", "--shortstat", "--no-ext-diff", "--no-textconv"]
    stat = git(*diff, checkout.base, head, cwd=path).strip() if checkout.base else ""
    return head, stat


def _commit(path: Path, options: list[str], message: str) -> None:
    done = subprocess.run(
        ["git", *SAFE, *options, "commit", "--quiet", "--no-verify", "-F", "-"],
        cwd=path,
        env=git_env(),
        input=message,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT,
    )
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise CheckoutError("commit failed: " + (lines[-1] if lines else str(done.returncode)))


def _ignored(path: Path, name: str) -> bool:
    try:
        git("check-ignore", "--quiet", "--", name, cwd=path)
    except CheckoutError:
        return False
    return True


def _configured(path: Path, key: str) -> bool:
    try:
        return bool(git("config", "--get", key, cwd=path).strip())
    except CheckoutError:
        return False
