"""As a person runs it: `agent -p --permission-mode yolo` against the local Messages-API server, with
bash in the real bubblewrap sandbox, and files that keep their encoding (issue 10, points 8 and 9);
protected paths, a sandbox that holds as root, and plan mode that cannot write (issue 18)."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy
from tests.e2e import agent, tool_results, user_config
from tests.e2e import denials as denials_of
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic


@pytest.fixture
def bwrap(workspace: Path) -> None:
    status = Sandbox(SandboxPolicy(), workspace).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")


@pytest.fixture
def home_file() -> Path:
    path = Path.home() / f"agent-e2e-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def connect(server: FakeAnthropic) -> str:
    port = urlparse(server.url).port
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"


def test_yolo_bash_is_confined(workspace, fake_anthropic, bwrap, home_file):
    server = fake_anthropic
    server.push(
        tool_call("bash", {"command": f"touch {home_file}"}),
        tool_call("bash", {"command": connect(server)}),  # the very server the agent talks to
        tool_call("bash", {"command": "echo built > out.txt && cat out.txt"}),
        text("done"),
    )
    out = agent(workspace, server, "-p", "try things", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    home, network, local = tool_results(server)
    assert "Read-only file system" in home and not home_file.exists()
    assert "Connection refused" in network and "connected" not in network
    assert local.startswith("built") and (workspace / "out.txt").read_text() == "built\n"


def test_network_true_in_the_config_lets_bash_connect(workspace, fake_anthropic, bwrap):
    user_config(workspace, "[sandbox]\nnetwork = true\n")
    fake_anthropic.push(tool_call("bash", {"command": connect(fake_anthropic)}), text("done"))
    out = agent(workspace, fake_anthropic, "-p", "connect", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert tool_results(fake_anthropic) == ["connected\n"]


def test_yolo_without_bwrap_refuses_bash_with_the_fix(workspace, fake_anthropic):
    user_config(workspace, '[sandbox]\nbwrap = "/nonexistent/bin/bwrap"\n')
    fake_anthropic.push(tool_call("bash", {"command": "touch made-anyway"}), text("done"))
    out = agent(
        workspace, fake_anthropic, "-p", "touch", "--permission-mode", "yolo", "--output-format", "json"
    )
    assert out.returncode == 0, out.stderr
    (result,) = tool_results(fake_anthropic)
    assert "bubblewrap" in result and "apt install bubblewrap" in result
    assert not (workspace / "made-anyway").exists()
    # said once up front, where a script looks (a CI job saw success and no word while nothing ran)
    said = [w for w in json.loads(out.stdout)["warnings"] if w.startswith("bash will be refused")]
    assert len(said) == 1 and "apt install bubblewrap" in said[0]
    assert "bash will be refused: yolo mode runs commands only in a sandbox" in out.stderr


def test_an_untrusted_workspace_cannot_switch_the_sandbox_off(workspace, fake_anthropic, bwrap, home_file):
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "config.toml").write_text('sandbox = "off"\n')
    fake_anthropic.push(tool_call("bash", {"command": f"touch {home_file}"}), text("done"))
    out = agent(workspace, fake_anthropic, "-p", "touch", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert ".agent/config.toml: ignored keys sandbox" in out.stderr
    assert not home_file.exists()


def test_a_latin1_file_edited_in_place_keeps_its_bytes(workspace, fake_anthropic):
    original = "Prix: 3 €\r\nCafé crème\r\n".encode("cp1252")
    (workspace / "menu.txt").write_bytes(original)
    fake_anthropic.push(
        tool_call("read_file", {"path": "menu.txt"}),
        tool_call("edit_file", {"path": "menu.txt", "old_string": "Café crème", "new_string": "Thé"}),
        text("done"),
    )
    out = agent(workspace, fake_anthropic, "-p", "edit", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    read, edit = tool_results(fake_anthropic)
    assert "Café crème" in read and "binary" not in read
    assert (workspace / "menu.txt").read_bytes() == "Prix: 3 €\r\nThé\r\n".encode("cp1252")


# -- issue 18: protected paths, a sandbox that holds as root, plan mode -------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    """The workspace as a real git repository with one commit."""
    shutil.rmtree(workspace / ".git")
    git(workspace, "init", "-q", "-b", "main")
    for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
        git(workspace, "config", key, value)
    git(workspace, "add", "app.py", "README.md")
    git(workspace, "commit", "-qm", "first")
    return workspace


def test_yolo_writes_to_protected_paths_are_denied_headless(repo, fake_anthropic):
    fake_anthropic.push(
        tool_call("write_file", {"path": ".agent/config.toml", "content": 'permission_mode = "yolo"\n'}),
        tool_call("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        tool_call("write_file", {"path": "notes.txt", "content": "fine\n"}),
        text("done"),
    )
    args = ("-p", "plant", "--permission-mode", "yolo", "--output-format", "json")
    out = agent(repo, fake_anthropic, *args)
    assert out.returncode == 0, out.stderr
    denials = denials_of(json.loads(out.stdout))
    assert len(denials) == 2 and all("protected path" in d for d in denials), denials
    assert ".agent/config.toml" in denials[0] and ".git/hooks/pre-commit" in denials[1]
    assert not (repo / ".agent" / "config.toml").exists()
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert (repo / "notes.txt").read_text() == "fine\n"  # yolo still writes ordinary files


def test_as_root_bash_cannot_plant_hooks_or_config_or_remount(repo, fake_anthropic, bwrap):
    shutil.rmtree(repo / ".git" / "hooks")  # a missing hooks folder must not be creatable either
    config = (repo / ".git" / "config").read_text()
    etc = Path("/etc") / f"agent-e2e-{uuid.uuid4().hex}"
    fake_anthropic.push(
        tool_call(
            "bash", {"command": "mkdir -p .git/hooks && echo 'touch pwned' | tee .git/hooks/pre-commit"}
        ),
        tool_call("bash", {"command": "git config core.hooksPath /tmp/hooks"}),
        tool_call("bash", {"command": f"mount -o remount,rw / ; touch {etc}"}),
        text("done"),
    )
    out = agent(repo, fake_anthropic, "-p", "try", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    hooks, hooks_path, remount = tool_results(fake_anthropic)
    assert "Read-only file system" in hooks and list((repo / ".git" / "hooks").iterdir()) == []
    assert "could not write config file" in hooks_path and (repo / ".git" / "config").read_text() == config
    assert "permission denied" in remount and not etc.exists()


def test_bash_cannot_plant_code_in_a_repository_inside_the_workspace(repo, fake_anthropic, bwrap):
    """A nested clone's config and hooks run at the person's (or an editor's) next git command there,
    and so does its hook managers' config (pre-commit's, lefthook's, husky's) at the next commit."""
    subprocess.run(["git", "init", "-q", str(repo / "sub")], check=True)
    config = (repo / "sub" / ".git" / "config").read_text()
    fake_anthropic.push(
        tool_call("bash", {"command": "git -C sub config core.fsmonitor 'touch pwned'"}),
        tool_call("bash", {"command": "echo 'touch pwned' | tee sub/.git/hooks/pre-commit"}),
        tool_call("bash", {"command": "echo 'repos: []' | tee sub/.pre-commit-config.yaml"}),
        tool_call("bash", {"command": "git -C sub status --short && echo read"}),
        text("done"),
    )
    out = agent(repo, fake_anthropic, "-p", "try", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    fsmonitor, hook, pre_commit, status = tool_results(fake_anthropic)
    assert (
        "could not write config file" in fsmonitor
        and (repo / "sub" / ".git" / "config").read_text() == config
    )
    assert "Read-only file system" in hook and not (repo / "sub" / ".git" / "hooks" / "pre-commit").exists()
    assert "moved aside" in pre_commit and not (repo / "sub" / ".pre-commit-config.yaml").exists()
    assert status.endswith("read\n")  # git still reads the nested repository


def test_git_add_commit_and_checkout_b_work_in_the_sandbox(repo, fake_anthropic, bwrap):
    command = (
        "echo 'def sub(a, b):' >> app.py && git add app.py && git commit -qm 'add sub' "
        "&& git checkout -q -b feature && git log --format=%s"
    )
    fake_anthropic.push(tool_call("bash", {"command": command}), text("done"))
    out = agent(repo, fake_anthropic, "-p", "commit", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert tool_results(fake_anthropic) == ["add sub\nfirst\n"]
    assert git(repo, "branch", "--show-current").strip() == "feature"
    assert git(repo, "log", "--format=%s", "main").split("\n")[0] == "add sub"


def test_plan_mode_bash_cannot_write_even_when_a_rule_allows_it(repo, fake_anthropic, bwrap):
    (repo / "app.py").write_text("def add(a, b):\n    return a + b\n")
    fake_anthropic.push(
        tool_call("bash", {"command": "git diff --output=patch.diff"}),
        tool_call("bash", {"command": "git diff --output=escaped.diff", "dangerously_disable_sandbox": True}),
        text("the plan"),
    )
    args = ("-p", "plan it", "--permission-mode", "plan", "--allowed-tools", "Bash(git diff:*)")
    out = agent(repo, fake_anthropic, *args, "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert not (repo / "patch.diff").exists() and not (repo / "escaped.diff").exists()
    results = tool_results(fake_anthropic)
    assert "Read-only file system" in results[0] or "Permission denied" in results[0], results
    assert "plan mode" in results[1]
    assert json.loads(out.stdout)["is_error"] is False
