"""`agent doctor` as a person runs it: what bash's sandbox enforces here, checked live, and what it
could not, with the fix; it touches nothing in the workspace and exits 0 (issue 18, item 3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy
from agent_cli.tools.sandbox.seccomp import unix_socket_filter
from tests.e2e import clean_env, run_agent


def doctor(workspace: Path, config: str = "") -> list[str]:
    if config:
        path = workspace / ".cfg" / "agent" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    out = run_agent(workspace, clean_env(workspace), "doctor")
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_doctor_checks_what_the_sandbox_enforces(workspace: Path) -> None:
    status = Sandbox(SandboxPolicy(), workspace).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")
    before = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
    lines = doctor(workspace)
    assert not [line for line in lines if "NOT ENFORCED" in line], lines
    text = "\n".join(lines)
    for promise in (
        "ok  every capability dropped in a new user namespace: a remount of / fails",
        "ok  no nested user namespace",
        "ok  outside the workspace, sandbox.writable and a private /tmp the filesystem is read-only",
        "ok  network: none",
        "ok  git's config and hooks are read-only",
        "ok  plan mode: the workspace too is read-only",
    ):
        assert promise in text, promise
    if unix_socket_filter().available:
        assert "ok  unix sockets refused by a seccomp filter" in text
    else:
        assert "NO  unix sockets are reachable" in text and "pyseccomp" in text
    after = sorted(
        p.relative_to(workspace) for p in workspace.rglob("*") if not p.is_relative_to(workspace / ".cfg")
    )
    assert after == before  # nothing of the workspace was touched


def test_doctor_says_what_it_could_not_and_the_fix(workspace: Path) -> None:
    lines = doctor(workspace, '[sandbox]\nbwrap = "/nonexistent/bin/bwrap"\n')
    assert any(line.startswith("  NO  no sandbox: bubblewrap (bwrap) is not installed") for line in lines), (
        lines
    )
    assert any("Fix: apt install bubblewrap" in line for line in lines)


def test_doctor_names_unix_sockets_the_person_allowed(workspace: Path) -> None:
    status = Sandbox(SandboxPolicy(), workspace).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")
    lines = doctor(workspace, "[sandbox]\nallow_unix_sockets = true\n")
    assert "  NO  unix sockets are reachable: sandbox.allow_unix_sockets = true in your config" in lines


def test_doctor_with_the_sandbox_off(workspace: Path) -> None:
    lines = doctor(workspace, 'sandbox = "off"\n')
    assert "  NO  bash runs unconfined: sandbox mode is off" in lines


def test_doctor_recommends_that_git_refuse_bare_repositories_it_was_not_pointed_at(workspace: Path) -> None:
    """Git runs the config of any folder shaped like a bare repository where a person runs it; git 2.38+
    refuses them with `safe.bareRepository = explicit` in the person's own config (finding H1)."""
    done = subprocess.run(["git", "--version"], capture_output=True, text=True)
    version = tuple(int(n) for n in done.stdout.split()[2].split(".")[:2])
    if version < (2, 38):
        pytest.skip(f"git {done.stdout.strip()} has no safe.bareRepository")
    (workspace / ".cfg" / "agent").mkdir(parents=True)
    (workspace / ".cfg" / "agent" / "config.toml").write_text('sandbox = "off"\n')
    gitconfig = workspace / ".cfg" / "gitconfig"
    gitconfig.write_text("[user]\n\tname = x\n")
    env = clean_env(workspace, GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1")
    lines = run_agent(workspace, env, "doctor").stdout.splitlines()
    advice = "  NO  git takes any folder holding HEAD, objects/ and refs/ for a repository"
    assert any(line.startswith(advice) for line in lines), lines
    assert any(line.endswith("git config --global safe.bareRepository explicit") for line in lines)
    gitconfig.write_text("[safe]\n\tbareRepository = explicit\n")
    lines = run_agent(workspace, env, "doctor").stdout.splitlines()
    assert (
        "  ok  git refuses bare repositories it was not pointed at (safe.bareRepository = explicit)" in lines
    )
    assert not any(line.startswith(advice) for line in lines)
