"""Protected paths (issue 18, item 2): a write to git's config or hooks, .agent/, .claude/, .mcp.json,
.vscode/, shell start-up files … asks in every mode — yolo too, and headless that is a denial — unless
an allow rule names the protected path; symlinks are judged by their target."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.tools.bash import BashTool
from agent_cli.tools.edit import EditTool
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.sandbox.protected import (
    HOOK_MANAGER_ENTRIES,
    WORKSPACE_ENTRIES,
    is_protected,
    layout,
    set_aside,
)
from agent_cli.tools.write import WriteTool

HOME = Path("/home/someone")


@pytest.fixture
def nested(ws: Path) -> Path:
    """A workspace with repositories inside it: `sub` and `sub/inner` (git folders), `mod` (a `gitdir:`
    pointer), `a/b/c/deep`; `plain` is no repository."""
    for repo in ("sub", "sub/inner", "a/b/c/deep"):
        (ws / repo / ".git").mkdir(parents=True)
    (ws / "mod").mkdir()
    (ws / "mod" / ".git").write_text("gitdir: ../.git/modules/mod\n")
    (ws / "plain").mkdir()
    return ws


def decide(ws: Path, mode: str, tool, input: dict, allow: tuple[str, ...] = ()):
    permissions = Permissions(mode, ws, home=HOME)  # type: ignore[arg-type]
    for rule in allow:
        permissions.add_rule(rule, "allow", "--allowed-tools")
    return permissions.decide(tool, input)


def write(path: str) -> dict:
    return {"path": path, "content": "x"}


@pytest.mark.parametrize(
    "path",
    [
        ".agent/config.toml",
        ".agent/sessions/abc/checkpoints/config",
        ".git/config",
        ".git/hooks/pre-commit",
        ".git/hooks",
        ".git/commondir",  # git would read its config from where this points
        ".git/worktrees/x/commondir",
        ".gitmodules",
        ".claude/settings.json",
        ".claude/commands/x.md",
        ".claude/agents/x.md",
        ".mcp.json",
        ".vscode/tasks.json",
        ".idea/workspace.xml",
        ".bashrc",
        ".zshrc",
        ".profile",
        ".gitconfig",
        "sub/../.git/hooks/post-checkout",
        ".VSCode/tasks.json",  # a case-insensitive filesystem would take it for .vscode
        "sub/.git/config",  # a repository inside the workspace: git there (or an editor's scan) runs it
        "sub/.git/hooks/pre-commit",
        "a/b/c/.Git/CONFIG",
        "vendor/lib/.git",  # a `gitdir:` pointer sends git to a config anywhere
        ".pre-commit-config.yaml",  # its `repo: local` hooks run at the next `git commit`
        ".husky/pre-commit",  # husky's hooksPath (.husky/_) runs these at the next `git commit`
        ".husky/_/h",
        ".envrc",  # direnv runs it on the next `cd` into the workspace (where it is whitelisted)
        "lefthook.yml",  # lefthook's installed hooks read it at every `git commit`
        ".lefthook-local.json",
        ".config/lefthook.toml",
        ".lefthook/pre-commit/run.sh",
        # a repository inside the workspace: its installed hook managers read their config there
        "sub/lefthook.yml",
        "sub/.pre-commit-config.yaml",
        "sub/.husky/pre-commit",
        "sub/.lefthook/pre-commit/x.sh",
        "sub/.config/lefthook-local.yaml",
        "sub/.envrc",
        "sub/inner/.Husky/pre-push",  # the nearest repository's
        "mod/lefthook.yml",  # a submodule or linked worktree: `.git` is a `gitdir:` pointer
        "a/b/c/deep/.pre-commit-config.yaml",  # deeper than the sandbox looks: the write tools still ask
        # anything in a `.git` folder: the write tools have no business there
        ".git/HEAD",  # a broken HEAD sends git to the folder above, taken as a bare repository
        ".git/objects/ab/cdef",
        ".git/refs/heads/x",
        ".git/info/exclude",
        ".git",
        "sub/.git/objects/ab",
        "a/b/.GIT/x",
    ],
)
@pytest.mark.parametrize("mode", ["ask", "auto-edit", "yolo"])
def test_a_write_to_a_protected_path_asks_in_every_mode(nested: Path, mode: str, path: str) -> None:
    ws = nested
    decision = decide(ws, mode, WriteTool(), write(path))
    assert decision.action == "ask" and "protected path" in decision.reason, decision
    assert decide(ws, mode, EditTool(), {"path": path, "old_string": "a", "new_string": "b"}).action == "ask"


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "agent.md",
        "sub/git/config",
        "objects/x.py",  # one of a git directory's names alone is no git directory
        "refs/README.md",
        "src/HEAD",
        ".npmrc",  # npm runs the project's own scripts anyway: package.json is no more protected
        "docs/pre-commit-config.yaml",
        ".config/tool.yml",  # only lefthook's names in `.config/` are protected
        "docs/lefthook.yml",
        "sub/docs/lefthook.yml",  # a hook manager reads its config at the repository's root
        "sub/.vscode/tasks.json",  # an editor opens the workspace, not the repositories inside it
        "sub/.idea/workspace.xml",
        "plain/lefthook.yml",  # no repository there
        "plain/.pre-commit-config.yaml",
    ],
)
def test_ordinary_paths_are_not_protected(nested: Path, path: str) -> None:
    ws = nested
    assert decide(ws, "yolo", WriteTool(), write(path)).action == "allow"
    assert decide(ws, "auto-edit", WriteTool(), write(path)).action == "allow"


def test_a_symlink_is_judged_by_its_target(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / "src").mkdir()
    os.symlink("../.git/config", ws / "src" / "x")
    os.symlink("../.git", ws / "src" / "g")
    decision = decide(ws, "yolo", EditTool(), {"path": "src/x", "old_string": "a", "new_string": "b"})
    assert decision.action == "ask" and ".git/config" in decision.reason
    assert decide(ws, "yolo", WriteTool(), write("src/g/hooks/pre-push")).action == "ask"
    assert is_protected(ws / "src" / "x", ws) == ".git/config"


def test_only_a_rule_that_names_the_protected_path_is_a_yes(ws: Path) -> None:
    hook = write(".git/hooks/pre-commit")
    for broad in ("Edit", "Write", "Edit(**)", "Edit(*)", "Edit(.git/**)", "Edit(**/pre-commit)"):
        assert decide(ws, "ask", WriteTool(), hook, (broad,)).action == "ask", broad
    for named in ("Edit(.git/hooks/**)", "Edit(.git/hooks/pre-commit)", "Write(/.git/hooks/*)"):
        assert decide(ws, "ask", WriteTool(), hook, (named,)).action == "allow", named
    # a rule naming one protected path is no yes for another
    assert decide(ws, "ask", WriteTool(), write(".mcp.json"), ("Edit(.git/hooks/**)",)).action == "ask"


def test_deny_still_beats_a_named_yes(ws: Path) -> None:
    permissions = Permissions("yolo", ws, home=HOME)
    permissions.add_rule("Edit(.agent/**)", "allow")
    permissions.add_rule("Edit(.agent/config.toml)", "deny")
    assert permissions.decide(WriteTool(), write(".agent/config.toml")).action == "deny"


def test_a_bash_redirect_to_a_protected_path_asks_even_in_yolo(nested: Path) -> None:
    ws, bash = nested, BashTool()
    redirects = ("echo x > .git/hooks/pre-commit", "echo '{}' >> .mcp.json", "cat a 2> .bashrc")
    for command in (*redirects, "echo x > sub/.pre-commit-config.yaml", "echo x >> mod/.envrc"):
        decision = decide(ws, "yolo", bash, {"command": command}, ("Bash(echo:*)", "Bash(cat:*)"))
        assert decision.action == "ask" and "protected path" in decision.reason, command
    assert decide(ws, "yolo", bash, {"command": "echo x > notes.txt"}).action == "allow"
    named = decide(ws, "ask", bash, {"command": "echo x > .mcp.json"}, ("Bash(echo:*)", "Edit(/.mcp.json)"))
    assert named.action == "allow"


def test_plan_mode_still_refuses_rather_than_asks(ws: Path) -> None:
    assert decide(ws, "plan", WriteTool(), write(".git/config")).action == "deny"


def test_home_start_up_files_and_the_persons_config_are_protected(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    for name in (".bashrc", ".config/agent/config.toml", ".ssh/config", ".claude/settings.json"):
        assert is_protected(home / name, ws, home), name
    assert not is_protected(home / "notes.txt", ws, home)


def test_the_persons_config_folder_is_protected_where_the_environment_moves_it(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ws / "cfg"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(ws / "claude-home"))
    assert decide(ws, "yolo", WriteTool(), write("cfg/agent/config.toml")).action == "ask"
    assert decide(ws, "yolo", WriteTool(), write("claude-home/settings.json")).action == "ask"
    assert decide(ws, "yolo", WriteTool(), write("cfg/other/x.toml")).action == "allow"


def test_core_hooks_path_in_the_tree_is_protected(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text(
        '[core]\n\tbare = false\n\thooksPath = ".githooks"\n[user]\n\tname = x\n'
    )
    assert is_protected(ws / ".githooks" / "pre-commit", ws) == ".githooks (core.hooksPath)"
    assert not is_protected(ws / "githooks" / "pre-commit", ws)
    (ws / "libs" / "sub" / ".git").mkdir(parents=True)  # a repository inside: the sandbox binds its hooksPath
    (ws / "libs" / "sub" / ".git" / "config").write_text("[core]\n\thooksPath = githooks\n")
    hook = ws / "libs" / "sub" / "githooks" / "pre-commit"
    assert is_protected(hook, ws) == "libs/sub/githooks (core.hooksPath)"
    assert decide(ws, "yolo", WriteTool(), write(str(hook))).action == "ask"
    assert not is_protected(ws / "libs" / "githooks" / "pre-commit", ws)


def test_the_layout_binds_what_exists_anchors_git_and_watches_what_does_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    (ws / ".vscode").mkdir()
    home = tmp_path / "home"
    plan = layout([ws], home)
    assert plan.anchors == (ws / ".git",)
    assert (ws / ".git" / "hooks").is_dir()  # made empty when missing: bound read-only like any hook dir
    assert {ws / ".git" / "config", ws / ".git" / "hooks", ws / ".vscode"} <= set(plan.read_only)
    watched = {w.path for w in plan.watched}
    assert {ws / ".mcp.json", ws / ".claude", ws / ".agent", ws / ".bashrc"} <= watched
    assert not any(str(p).startswith(str(home)) for p in watched)  # home is not a writable root here
    assert {ws / n for n in WORKSPACE_ENTRIES} <= set(plan.read_only) | watched


def test_what_a_command_made_at_a_watched_path_is_set_aside_not_deleted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink("elsewhere.json", ws / ".mcp.json")
    plan = layout([ws], tmp_path / "home")
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "tasks.json").write_text("{}")
    (ws / ".mcp.json").unlink()
    (ws / ".mcp.json").write_text("{evil}")
    moved = set_aside(plan.watched, ws / ".agent" / "quarantine", ws)
    assert len(moved) == 2 and all("quarantine" in m for m in moved)
    assert not (ws / ".vscode").exists()
    assert os.readlink(ws / ".mcp.json") == "elsewhere.json"  # the symlink it replaced is back
    kept = sorted(p.relative_to(ws).as_posix() for p in (ws / ".agent").rglob("*") if p.is_file())
    assert len(kept) == 2 and {k.rsplit("/", 2)[-2:][-1] for k in kept} == {"tasks.json", ".mcp.json"}


def test_the_layout_binds_the_git_config_and_hooks_of_repositories_inside_the_workspace(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    for repo in ("sub", "libs/vendored", "a/b/deep"):
        (ws / repo / ".git" / "hooks").mkdir(parents=True)
        (ws / repo / ".git" / "config").write_text("[core]\n\thooksPath = githooks\n")
    (ws / "mod").mkdir()
    (ws / "mod" / ".git").write_text("gitdir: ../.git/modules/mod\n")
    (ws / "outside").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere" / "r" / ".git").mkdir(parents=True)
    (ws / "sub" / "lefthook.yml").write_text("pre-commit:\n")
    (ws / "sub" / ".husky").mkdir()
    plan = layout([ws], tmp_path / "home")
    bound, watched = set(plan.read_only), {w.path for w in plan.watched}
    for repo in ("sub", "libs/vendored"):
        assert {ws / repo / ".git" / "config", ws / repo / ".git" / "hooks"} <= bound, repo
        assert ws / repo / ".git" / "modules" in watched and ws / repo / "githooks" in watched
    assert ws / "mod" / ".git" in bound
    # their hook managers' config: bound when it exists, watched when it does not
    assert {ws / "sub" / "lefthook.yml", ws / "sub" / ".husky"} <= bound
    for repo in ("sub", "libs/vendored", "mod"):
        assert {ws / repo / name for name in HOOK_MANAGER_ENTRIES} <= bound | watched, repo
    assert ws / "sub" / ".vscode" not in watched  # an editor opens the workspace's root
    assert not any("deep" in str(p) for p in bound | watched)  # deeper than NESTED_DEPTH: not looked for
    assert not any("elsewhere" in str(p) or "outside" in str(p) for p in bound | watched)


@pytest.mark.parametrize("folder", ["", "tests/fixtures/"])
def test_a_git_directory_shape_asks_for_its_last_piece_whatever_the_order(ws: Path, folder: str) -> None:
    """Git takes a folder holding HEAD, objects/ and refs/ for a (bare) repository and, at the person's
    next `git status` there, runs what its `config` names (core.fsmonitor): written piece by piece,
    the piece that completes the shape asks, and so does anything written into it after."""
    orders = {  # the pieces in the order written; which of them completes the shape
        ("config", "objects/README", "refs/README", "HEAD"): "HEAD",  # the config first, HEAD last
        ("HEAD", "refs/README", "config", "objects/pack/x"): "objects/pack/x",
        ("refs/a", "HEAD", "objects", "config"): "objects",
    }
    for n, (order, last) in enumerate(orders.items()):
        asked = []
        for piece in order:
            path = f"try{n}/{folder}{piece}"
            decision = decide(ws, "auto-edit", WriteTool(), write(path))
            if decision.action == "allow":
                (ws / path).parent.mkdir(parents=True, exist_ok=True)
                (ws / path).write_text("x")
            else:
                assert "protected path" in decision.reason and "git directory" in decision.reason
                asked.append(piece)
        assert asked == [last], (order, asked)
    # once it is one, a write into it asks, in every mode, and a redirect too
    (ws / "bare" / "objects").mkdir(parents=True)
    (ws / "bare" / "refs").mkdir()
    (ws / "bare" / "HEAD").write_text("ref: refs/heads/main\n")
    for mode in ("ask", "auto-edit", "yolo"):
        for path in ("bare/config", "bare/hooks/post-checkout", "bare/info/attributes"):
            assert decide(ws, mode, WriteTool(), write(path)).action == "ask", (mode, path)
    decision = decide(ws, "yolo", BashTool(), {"command": "echo '[core]' > bare/config"}, ("Bash(echo:*)",))
    assert decision.action == "ask" and "bare (a git directory's shape)" in decision.reason
    assert is_protected(ws / "bare" / "config", ws) == "bare (a git directory's shape)"
    # a linked worktree's git folder: HEAD and a `commondir` naming where its config is
    (ws / "wt").mkdir()
    (ws / "wt" / "HEAD").write_text("ref: refs/heads/x\n")
    assert decide(ws, "yolo", WriteTool(), write("wt/commondir")).action == "ask"


def test_a_rule_naming_the_git_folder_is_a_yes_for_it_not_for_its_hooks(ws: Path) -> None:
    (ws / ".git").mkdir()
    for path in (".git/info/exclude", ".git/objects/x"):
        assert decide(ws, "ask", WriteTool(), write(path), ("Edit(.git/**)",)).action == "allow", path
    for path in (".git/hooks/pre-commit", ".git/config"):
        assert decide(ws, "ask", WriteTool(), write(path), ("Edit(.git/**)",)).action == "ask", path
