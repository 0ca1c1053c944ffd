"""A git directory planted anywhere in the workspace by a sandboxed command (finding H1): git takes any
folder holding HEAD, objects/ and refs/ for a repository and, at the person's next git command there,
runs what its config names (core.fsmonitor …) outside the sandbox. After each command the config that
names a program, and the hooks put there, are set aside; git itself keeps working in the sandbox.

These run the real bwrap and git; they skip only where bwrap cannot run at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_cli.context.store import MemoryStore
from agent_cli.tools.base import ToolContext
from agent_cli.tools.bash import BashTool
from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy

PAYLOAD = "touch /tmp/pwned-by-git; false"


@pytest.fixture
def bwrap(ws: Path) -> None:
    status = Sandbox(SandboxPolicy(), ws).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(ws: Path) -> Path:
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "T")
    git(ws, "config", "commit.gpgsign", "false")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "first")
    return ws


def session(ws: Path) -> ToolContext:
    """One sandbox for several commands, as in a session."""
    sandbox = Sandbox(SandboxPolicy(), ws)
    return ToolContext(ws, store=MemoryStore(), sandbox=sandbox, permission_mode=lambda: "yolo")


async def bash(ctx: ToolContext, command: str) -> str:
    result = await BashTool().run({"command": command}, ctx)
    return result.output


def before_the_next_command(path: Path) -> None:
    """Wait until the clock file times are stamped with has moved past `path`'s change: a change in
    the same tick as a command's start counts as that command's (gitdirs.now)."""
    from agent_cli.tools.sandbox.gitdirs import now

    changed = path.stat().st_ctime_ns
    while now() <= changed:
        pass


def quarantined(ws: Path) -> set[str]:
    return (
        {
            p.relative_to(ws / ".agent" / "quarantine").as_posix().split("/", 1)[1]
            for p in (ws / ".agent" / "quarantine").rglob("*")
            if p.is_file()
        }
        if (ws / ".agent" / "quarantine").exists()
        else set()
    )


async def test_a_bare_repository_made_with_mkdir_and_printf_loses_its_fsmonitor(repo: Path, bwrap) -> None:
    ctx = session(repo)
    command = (
        "mv .git/HEAD .git/HEAD.orig; printf 'ref: refs/heads/main\\n' > HEAD; mkdir -p objects refs; "
        f"printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"{PAYLOAD}\"\\n' > config; echo end"
    )
    output = await bash(ctx, command)
    assert "end" in output and not (repo / "config").exists()
    assert "moved aside" in output and ".: core.fsmonitor" in output, output
    assert quarantined(repo) == {"config"}


async def test_a_shape_finished_by_a_later_command_is_judged_then(repo: Path, bwrap) -> None:
    """The config written first, in a folder that is not yet a git directory; HEAD last, later."""
    ctx = session(repo)
    await bash(ctx, f"mkdir -p tests/objects && printf '[core]\\n\\tpager = \"{PAYLOAD}\"\\n' > tests/config")
    assert (repo / "tests" / "config").exists()  # no git directory there yet: an ordinary file
    output = await bash(ctx, "mkdir tests/refs && echo 'ref: refs/heads/main' > tests/HEAD && echo end")
    assert not (repo / "tests" / "config").exists() and "tests: core.pager" in output, output


async def test_a_new_nested_repositorys_config_and_hooks_are_set_aside(repo: Path, bwrap) -> None:
    ctx = session(repo)
    command = (
        f"git init -q vendor/lib && git -C vendor/lib config core.fsmonitor '{PAYLOAD}' && "
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > vendor/lib/.git/hooks/post-checkout && echo end"
    )
    output = await bash(ctx, command)
    assert "end" in output and "vendor/lib/.git: core.fsmonitor" in output, output
    assert quarantined(repo) == {"vendor/lib/.git/config", "vendor/lib/.git/hooks/post-checkout"}
    assert (repo / "vendor" / "lib" / ".git" / "hooks" / "pre-commit.sample").exists()  # git's own stay
    # deeper than the sandbox binds read-only: a command changing a repository's config in place
    git(repo, "init", "-q", "a/b/c/deep")
    output = await bash(ctx, "printf '[alias]\\n\\tst = !sh -c x\\n' >> a/b/c/deep/.git/config; echo end")
    assert "a/b/c/deep/.git: alias.st" in output and not (repo / "a/b/c/deep/.git/config").exists()


async def test_git_keeps_working_and_an_ordinary_new_repository_stays(repo: Path, bwrap) -> None:
    ctx = session(repo)
    command = (
        "echo b >> a.txt && git add a.txt && git commit -qm second && git checkout -q -b feature && "
        "git init -q fixtures/repo && git -C fixtures/repo config user.name X && "
        "git -C fixtures/repo remote add origin https://example.com/x.git && "
        "git -C fixtures/repo commit -q --allow-empty -m init && git status --short -- a.txt && echo ok"
    )
    output = await bash(ctx, command)
    assert output == "ok\n", output
    assert git(repo, "log", "--format=%s").split() == ["second", "first"]
    assert "url = https://example.com/x.git" in (repo / "fixtures/repo/.git/config").read_text()
    assert not (repo / ".agent" / "quarantine").exists()
    # a person's repository with their own editor, made between commands, is theirs: left alone
    mine = repo / "a" / "b" / "c" / "mine"  # deeper than the sandbox binds read-only
    git(repo, "init", "-q", str(mine))
    git(mine, "config", "core.editor", "vim")
    before_the_next_command(mine / ".git" / "config")
    output = await bash(ctx, "git -C a/b/c/mine status --short && echo ok")
    assert output == "ok\n" and (mine / ".git" / "config").exists()


def test_the_keys_that_run_a_program(tmp_path: Path) -> None:
    from agent_cli.tools.sandbox.gitconfig import programs, runs_program

    config = tmp_path / "config"
    config.write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = true\n"
        '[remote "origin"]\n\turl = https://x/y.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        '[branch "main"]\n\tremote = origin\n[user]\n\tname = X\n[alias]\n\tst = status\n'
    )
    assert programs(config) == []  # what `git init`, `git remote add` and a person write
    config.write_text(
        '[filter "lfs"]\n\tsmudge = x\n[diff "pdf"]\n\ttextconv = y\n[includeIf "gitdir:/"]\n\tpath = z\n'
        "[alias]\n\tx = !sh\n[Core]\n\tSSHCommand = s\n[pager]\n\tlog = p\n[credential]\n\thelper = h\n"
    )
    found = programs(config)
    assert found == [
        "filter.lfs.smudge",
        "diff.pdf.textconv",
        "includeif.gitdir:/.path",
        "alias.x",
        "core.sshcommand",
        "pager.log",
        "credential.helper",
    ]
    assert runs_program("core.fsmonitor", "echo x") and not runs_program("core.fsmonitor", "false")
    assert runs_program("submodule.x.update", "!sh") and not runs_program("submodule.x.update", "rebase")
    assert runs_program("trailer.sign.command", "sh -c x") and runs_program(
        "trailer.sign.cmd", "x"
    )  # --trailer


def test_the_sweep_reads_only_changed_folders_after_the_first_walk(tmp_path: Path) -> None:
    from agent_cli.tools.sandbox.gitdirs import GitDirWatch, now

    root = tmp_path / "ws"
    for i in range(30):
        (root / f"d{i}" / "e").mkdir(parents=True)
    watch = GitDirWatch(root)
    watch.seed()
    since = now()
    (root / "d3" / "e" / "bare" / "objects").mkdir(parents=True)
    (root / "d3" / "e" / "bare" / "refs").mkdir()
    (root / "d3" / "e" / "bare" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "d3" / "e" / "bare" / "config").write_text("[core]\n\teditor = vi\n")
    planted = watch.planted(since)
    assert [(p.where, p.keys) for p in planted] == [("d3/e/bare", ("core.editor",))]


async def test_a_background_command_that_never_started_does_not_widen_the_next_look(
    repo: Path, bwrap
) -> None:
    """Changes are judged from the start of the oldest command still running: one that failed to start
    must not count as running, or a repository the person makes between commands would be taken for
    one a command planted."""
    from agent_cli.tools.shells.manager import ShellManager

    ctx = session(repo)
    ctx.shells = ShellManager()  # with a store that keeps no files: a background start fails
    result = await BashTool().run({"command": "sleep 1", "run_in_background": True}, ctx)
    assert result.is_error and "background shells need a session directory" in result.output
    mine = repo / "a" / "b" / "c" / "mine"  # deeper than the sandbox binds read-only
    git(repo, "init", "-q", str(mine))
    git(mine, "config", "core.editor", "vim")
    before_the_next_command(mine / ".git" / "config")
    output = await bash(ctx, "echo ok")
    assert output == "ok\n" and (mine / ".git" / "config").exists()


def shipped(root: Path, folder: str, config: str) -> Path:
    """A folder as a repository may ship it: objects/ and refs/ (no HEAD: git ignores it) and a config."""
    path = root / folder
    (path / "objects").mkdir(parents=True)
    (path / "refs").mkdir()
    (path / "config").write_text(config)
    before_the_next_command(path / "config")
    return path


def watched(root: Path):
    from agent_cli.tools.sandbox.gitdirs import GitDirWatch, now

    watch = GitDirWatch(root)
    watch.seed()
    return watch, now()


def test_a_shipped_half_repository_finished_by_a_command_is_judged_whole(tmp_path: Path) -> None:
    """objects/, refs/ and a config shipped, HEAD written by a command: a git directory it made."""
    root = tmp_path / "ws"
    repo = shipped(root, "fixtures/repo", f'[core]\n\tworktree = .\n\tfsmonitor = "{PAYLOAD}"\n')
    watch, since = watched(root)
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    planted = watch.planted(since)
    assert [(p.where, p.files, p.keys) for p in planted] == [
        ("fixtures/repo", (repo / "config",), ("core.fsmonitor",))
    ]


def test_the_common_directory_a_new_worktree_names_is_judged_whole(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    common = shipped(root, "fixtures/common", f'[core]\n\tpager = "{PAYLOAD}"\n')
    (common / "hooks").mkdir()
    (common / "hooks" / "post-checkout").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    before_the_next_command(common / "hooks" / "post-checkout")
    watch, since = watched(root)
    (root / "fixtures" / "wt").mkdir()
    (root / "fixtures" / "wt" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "fixtures" / "wt" / "commondir").write_text("../common\n")
    files = {f for p in watch.planted(since) for f in p.files}
    assert files == {common / "config", common / "hooks" / "post-checkout"}


def test_a_new_dot_git_file_points_at_a_git_directory_the_walk_does_not_enter(tmp_path: Path) -> None:
    """`docs/.git` saying `gitdir: ../.git/logs/cache`: inside a git directory's logs, never walked."""
    root = tmp_path / "ws"
    git(tmp_path, "init", "-q", str(root))
    (root / "docs").mkdir()
    (root / "elsewhere").mkdir()
    before_the_next_command(root / "elsewhere")
    watch, since = watched(root)
    cache = root / ".git" / "logs" / "cache"
    (cache / "objects").mkdir(parents=True)
    (cache / "refs").mkdir()
    (cache / "HEAD").write_text("ref: refs/heads/main\n")
    (cache / "config").write_text(f'[core]\n\tfsmonitor = "{PAYLOAD}"\n')
    (root / "docs" / ".git").write_text("gitdir: ../.git/logs/cache\n")
    (root / "elsewhere" / ".git").write_text(f"gitdir: {tmp_path}\n")  # outside the workspace
    planted = watch.planted(since)
    assert {f: p.keys for p in planted for f in p.files} == {
        cache / "config": ("core.fsmonitor",),
        root / "elsewhere" / ".git": (),
    }
    assert "elsewhere/.git: a gitdir: pointer" in summary_of(planted)


def test_a_new_link_into_a_git_directory_is_set_aside(tmp_path: Path) -> None:
    """A bare repository built in `.git/logs/cache` (never walked) and a folder link `evil` to it:
    `cd evil && git status` would use it. A link a command made into a git directory is set aside; an
    ordinary link, or one that was there before the command, is left alone."""
    root = tmp_path / "ws"
    git(tmp_path, "init", "-q", str(root))
    (root / "build").mkdir()
    (root / "old").symlink_to(root / ".git")  # the person's, before the command
    before_the_next_command(root / "old")
    watch, since = watched(root)
    cache = root / ".git" / "logs" / "cache"
    (cache / "objects").mkdir(parents=True)
    (cache / "refs").mkdir()
    (cache / "HEAD").write_text("ref: refs/heads/main\n")
    (cache / "config").write_text(f'[core]\n\tfsmonitor = "{PAYLOAD}"\n')
    (root / "evil").symlink_to(".git/logs/cache")
    (root / "latest").symlink_to("build")
    planted = watch.planted(since)
    assert [f for p in planted for f in p.files] == [root / "evil"]
    assert "evil: a link into a git directory" in summary_of(planted)


def summary_of(planted) -> str:
    from agent_cli.tools.sandbox.gitdirs import summary

    return summary(planted)


async def test_a_worktree_a_command_adds_leaves_the_persons_own_config_alone(repo: Path, bwrap) -> None:
    """`git worktree add` makes `.git/worktrees/wt` (with `commondir` naming the person's `.git`) and a
    `wt/.git` pointer: the person's own config, naming their editor, is not judged whole for it."""
    nested = repo / "a" / "b" / "c" / "mine"  # deeper than the sandbox binds read-only
    git(repo, "init", "-q", str(nested))
    git(nested, "config", "core.editor", "vim")
    git(nested, "commit", "-q", "--allow-empty", "-m", "x")
    before_the_next_command(nested / ".git" / "config")
    ctx = session(repo)
    output = await bash(ctx, "git -C a/b/c/mine worktree add -q ../wt2 && echo ok")
    assert output == "ok\n", output
    assert (nested / ".git" / "config").exists() and not (repo / ".agent" / "quarantine").exists()
    assert git(repo / "a/b/c/wt2", "status", "--short") == ""
