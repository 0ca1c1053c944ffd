"""A task's checkout: a worktree of a local repository or a clone of a URL, on agent/batch/<id> from
the task's ref, never the repository's own checkout; the commit of its work leaves the session out
and runs none of the repository's hooks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_cli.batch.checkout import CheckoutError, commit, prepare
from agent_cli.batch.tasks import Task


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text("v = 1\n")
    git(path, "add", ".")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one")
    git(path, "tag", "v1")
    (path / "app.py").write_text("v = 2\n")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "two")
    git(path, "branch", "feature", "v1")
    return path


def test_a_worktree_from_a_ref_and_its_work_committed_on_the_tasks_branch(tmp_path, repo):
    task = Task("fix", "make v three", str(repo), ref="v1")

    checkout = prepare(task, tmp_path / "work")

    assert checkout.path == tmp_path / "work" / "fix" and not checkout.reused
    assert checkout.base == git(repo, "rev-parse", "v1")
    assert (checkout.path / "app.py").read_text() == "v = 1\n"
    (checkout.path / "app.py").write_text("v = 3\n")
    (checkout.path / ".agent" / "sessions" / "s1").mkdir(parents=True)
    (checkout.path / ".agent" / "sessions" / "s1" / "events.jsonl").write_text("{}\n")
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 1\n")  # would refuse the commit
    (hooks / "post-commit").write_text(f"#!/bin/sh\ntouch {tmp_path}/hook-ran\n")
    for hook in ("pre-commit", "post-commit"):
        (hooks / hook).chmod(0o755)

    head, stat = commit(checkout, task, exclude=[".agent/sessions"])

    assert stat == "1 file changed, 1 insertion(+), 1 deletion(-)"
    assert git(repo, "rev-parse", "agent/batch/fix") == head
    assert git(repo, "show", "agent/batch/fix:app.py") == "v = 3"
    assert (
        git(repo, "show", "--stat", "--format=%s", "agent/batch/fix").splitlines()[0]
        == "agent batch fix: make v three"
    )
    assert ".agent" not in git(repo, "show", "--stat", "--format=", "agent/batch/fix")
    assert not (tmp_path / "hook-ran").exists()
    assert git(repo, "branch", "--show-current") == "main" and (repo / "app.py").read_text() == "v = 2\n"


def test_a_second_run_goes_on_in_the_same_checkout(tmp_path, repo):
    task = Task("again", "x", str(repo))
    first = prepare(task, tmp_path / "work")
    (first.path / "new.txt").write_text("half done\n")

    second = prepare(task, tmp_path / "work")

    assert second.reused and second.path == first.path and second.base == first.base
    assert (second.path / "new.txt").read_text() == "half done\n"


def test_a_url_is_cloned_fresh_with_the_remotes_branch(tmp_path, repo):
    task = Task("clone", "x", f"file://{repo}", ref="feature")

    checkout = prepare(task, tmp_path / "work")

    assert checkout.base == git(repo, "rev-parse", "feature")
    assert git(checkout.path, "branch", "--show-current") == "agent/batch/clone"
    assert (checkout.path / "app.py").read_text() == "v = 1\n"
    assert git(repo, "branch", "--list", "agent/batch/*") == ""  # the origin is left alone


@pytest.mark.parametrize(
    ("repo_of", "message"),
    [
        (lambda tmp: f"file://{tmp}/missing.git", "cannot clone file://"),
        (lambda tmp: "ext::sh -c touch% /tmp/pwned", "cannot clone ext::"),
        (lambda tmp: str(tmp), "is not a git repository"),
        (lambda tmp: str(tmp / "nowhere"), "no repository at"),
    ],
)
def test_what_cannot_be_checked_out_is_the_tasks_error(tmp_path, repo_of, message):
    with pytest.raises(CheckoutError, match=message.replace("(", r"\(")):
        prepare(Task("t", "x", repo_of(tmp_path)), tmp_path / "work")


def test_a_ref_that_names_nothing_is_said(tmp_path, repo):
    with pytest.raises(CheckoutError, match="no commit 'nope'"):
        prepare(Task("t", "x", str(repo), ref="nope"), tmp_path / "work")


def test_a_local_repositorys_hooks_and_fsmonitor_never_run(tmp_path, repo):
    """A repository unpacked from a tarball ships its .git: its post-checkout hook ran at `git worktree
    add`, its core.fsmonitor at every add and commit of ours (finding H4)."""
    ran = tmp_path / "ran"
    for hook in ("post-checkout", "post-commit", "pre-commit", "reference-transaction"):
        (repo / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\necho {hook} >> {ran}\n")
        (repo / ".git" / "hooks" / hook).chmod(0o755)
    git(repo, "config", "core.fsmonitor", f"echo fsmonitor >> {ran}; false")
    task = Task("fix", "x", str(repo))

    checkout = prepare(task, tmp_path / "work")
    (checkout.path / "app.py").write_text("v = 3\n")
    head, stat = commit(checkout, task, exclude=[".agent/sessions"])

    assert stat == "1 file changed, 1 insertion(+), 1 deletion(-)" and head
    assert not ran.exists(), ran.read_text()


def test_a_bare_repository_planted_in_a_clone_is_not_taken_for_it(tmp_path, repo):
    """A task breaks the clone's .git/HEAD and leaves HEAD, objects/, refs/ and a config at the root:
    git took the checkout itself for a bare repository and ran its core.fsmonitor at our add."""
    checkout = prepare(Task("t", "x", f"file://{repo}"), tmp_path / "work")
    ran = tmp_path / "ran"
    (checkout.path / ".git" / "HEAD").write_text("broken\n")
    (checkout.path / "HEAD").write_text("ref: refs/heads/main\n")
    (checkout.path / "objects").mkdir()
    (checkout.path / "refs").mkdir()
    (checkout.path / "config").write_text(f'[core]\n\tworktree = .\n\tfsmonitor = "echo x >> {ran}; false"\n')

    with pytest.raises(CheckoutError, match="bare repository"):
        commit(checkout, Task("t", "x", f"file://{repo}"), exclude=[])
    assert not ran.exists()


def test_a_clones_git_folder_holding_links_is_not_written_through(tmp_path, repo):
    """A sandboxed `ln -sf ~/file .git/logs/HEAD` (or COMMIT_EDITMSG): our unconfined commit appended
    its reflog to, or rewrote, the file the link names."""
    task = Task("t", "x", f"file://{repo}")
    checkout = prepare(task, tmp_path / "work")
    outside = tmp_path / "outside"
    outside.write_text("the person's file\n")
    (checkout.path / ".git" / "logs" / "HEAD").unlink()
    (checkout.path / ".git" / "logs" / "HEAD").symlink_to(outside)
    (checkout.path / "fix.txt").write_text("fixed\n")

    with pytest.raises(CheckoutError, match=r"links git would write through \(.git/logs/HEAD -> "):
        commit(checkout, task, exclude=[])
    assert outside.read_text() == "the person's file\n"


def test_a_planted_base_is_taken_only_as_a_commit(tmp_path, repo):
    """The base an earlier run remembered lives in the clone's git folder, which its task could write:
    `--output=FILE` there was an option to our `git diff` (it writes the diff to any file)."""
    task = Task("t", "x", f"file://{repo}")
    first = prepare(task, tmp_path / "work")
    target = tmp_path / "written"
    (first.path / ".git" / "agent-batch-base").write_text(f"--output={target}\n")

    again = prepare(task, tmp_path / "work")
    (again.path / "fix.txt").write_text("fixed\n")
    head, stat = commit(again, task, exclude=[])

    assert again.reused and again.base == git(again.path, "rev-parse", "HEAD~1") and head
    assert stat == "1 file changed, 1 insertion(+)" and not target.exists()


def test_a_bare_repository_named_as_the_tasks_repo_still_works(tmp_path, repo):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    task = Task("fix", "x", str(bare))

    checkout = prepare(task, tmp_path / "work")
    (checkout.path / "app.py").write_text("v = 3\n")
    head, _ = commit(checkout, task, exclude=[])

    assert git(bare, "rev-parse", "agent/batch/fix") == head
