"""bash under bubblewrap: the workspace and a private /tmp writable, the rest read-only, no network;
yolo has no way out; a missing bwrap refuses yolo with the fix (issue 10, point 8).

These run the real bwrap (.ci/run installs it); they skip only where it cannot run at all."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.context.store import MemoryStore
from agent_cli.tools.base import Tool, ToolContext
from agent_cli.tools.bash import BashTool
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.sandbox.bwrap import (
    ESCAPE_PARAM,
    Sandbox,
    SandboxPolicy,
    permission_note,
)
from agent_cli.tools.sandbox.seccomp import unix_socket_filter
from agent_cli.tools.shells.manager import command_started

MISSING = "/nonexistent/bin/bwrap"

# the interpreter itself, not a venv's link to it: a venv under /tmp is hidden by the sandbox's private /tmp
BASE_PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def confined(ws: Path, permission: str = "yolo", **policy) -> ToolContext:
    sandbox = Sandbox(SandboxPolicy(**policy), ws)
    return ToolContext(ws, store=MemoryStore(), sandbox=sandbox, permission_mode=lambda: permission)


@pytest.fixture
def bwrap(ws: Path) -> None:
    status = Sandbox(SandboxPolicy(), ws).status()
    if not status.available:
        pytest.skip(f"bubblewrap cannot run here: {status.problem}")


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on the host's 127.0.0.1 that accepts connections; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


async def bash(ctx: ToolContext, command: str, **extra):
    return await BashTool().run({"command": command, **extra}, ctx)


async def test_yolo_bash_cannot_write_outside_the_workspace(ws: Path, bwrap) -> None:
    name = f"agent-sandbox-{uuid.uuid4().hex}"
    targets = [Path.home() / name, Path("/etc") / name, Path("/usr") / name]
    command = "; ".join(f"touch {t}" for t in targets) + "; echo done"
    result = await bash(confined(ws), command)
    assert result.meta["sandboxed"] is True
    refused = [line for line in result.output.splitlines() if line.startswith("touch:")]
    assert len(refused) == 3 and all(line.endswith("Read-only file system") for line in refused)
    assert not any(t.exists() for t in targets)
    assert "[sandbox:" in result.output and "no way out" in result.output


async def test_workspace_and_a_private_tmp_are_writable(ws: Path, bwrap, tmp_path: Path) -> None:
    assert str(ws).startswith("/tmp/")  # a workspace under /tmp stays visible over the private /tmp
    name = f"agent-sandbox-{uuid.uuid4().hex}"
    result = await bash(
        confined(ws), f"echo made > made.txt && echo scratch > /tmp/{name} && cat /tmp/{name} made.txt"
    )
    assert not result.is_error, result.output
    assert result.output == "scratch\nmade\n"
    assert (ws / "made.txt").read_text() == "made\n"
    assert not (Path("/tmp") / name).exists()  # the sandbox's /tmp is its own


async def test_no_network_unless_configured(ws: Path, bwrap, listener: int) -> None:
    command = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    closed = await bash(confined(ws), command)
    assert closed.is_error and "connected" not in closed.output
    assert "Connection refused" in closed.output and "no network" in closed.output

    opened = await bash(confined(ws, network=True), command)
    assert not opened.is_error, opened.output
    assert opened.output == "connected\n"


async def test_extra_writable_paths_and_a_read_only_session_dir(ws: Path, bwrap, tmp_path: Path) -> None:
    extra = tmp_path / "cache"
    extra.mkdir()
    (ws / ".agent").mkdir()
    ctx = confined(ws, writable=(str(extra), "~/definitely-missing-dir"))
    result = await bash(ctx, f"echo kept > {extra}/c.txt; echo forged > .agent/events.jsonl; echo end")
    assert (extra / "c.txt").read_text() == "kept\n"
    assert not (ws / ".agent" / "events.jsonl").exists()
    assert "Read-only file system" in result.output


async def test_timeout_ends_everything_the_sandboxed_command_started(ws: Path, bwrap) -> None:
    marker = str(900_000 + os.getpid() % 99_999)  # an unusual sleep length names our processes
    result = await bash(confined(ws), f"sleep {marker} & sleep {marker}", timeout=1)
    assert result.is_error and result.meta["timed_out"]
    assert await _gone(marker), "a process of the sandboxed command outlived its timeout"


async def test_interrupt_ends_the_sandboxed_command(ws: Path, bwrap) -> None:
    marker = str(800_000 + os.getpid() % 99_999)
    task = asyncio.ensure_future(bash(confined(ws), f"sleep {marker} & sleep {marker}"))
    deadline = time.monotonic() + 30
    while not _running(marker):
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone(marker)


async def test_yolo_without_bwrap_is_refused_with_the_fix(ws: Path) -> None:
    result = await bash(confined(ws, bwrap=MISSING), "touch should-not-exist")
    assert result.is_error
    assert "apt install bubblewrap" in result.output and 'sandbox = "off"' in result.output
    assert not (ws / "should-not-exist").exists()


async def test_without_bwrap_ask_mode_runs_unconfined_and_mode_on_refuses(ws: Path) -> None:
    asked = await bash(confined(ws, "ask", bwrap=MISSING), "echo ran")
    assert not asked.is_error and asked.output == "ran\n" and asked.meta["sandboxed"] is False
    required = await bash(confined(ws, "ask", bwrap=MISSING, mode="on"), "echo ran")
    assert required.is_error and "apt install bubblewrap" in required.output and "ran" not in required.output


async def test_mode_off_runs_unconfined_in_yolo(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    result = await bash(confined(ws, bwrap=MISSING, mode="off"), f"echo x > {outside}")
    assert not result.is_error and outside.exists()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A path outside the workspace that the host can see (under /tmp the sandbox has its own)."""
    path = Path.home() / f"agent-sandbox-{uuid.uuid4().hex}.txt"
    yield path
    path.unlink(missing_ok=True)


async def test_a_blocked_command_may_run_outside_only_when_asked_and_never_in_yolo(
    ws: Path, bwrap, outside: Path
) -> None:
    command = f"echo x > {outside}"
    blocked = await bash(confined(ws, "ask"), command)
    assert not outside.exists() and ESCAPE_PARAM in blocked.output  # the model is told the way out

    refused = await bash(confined(ws, "yolo"), command, **{ESCAPE_PARAM: True})
    assert refused.is_error and "no way out" in refused.output and not outside.exists()

    escaped = await bash(confined(ws, "ask"), command, **{ESCAPE_PARAM: True})
    assert not escaped.is_error and outside.read_text() == "x\n" and escaped.meta["sandboxed"] is False


def test_running_outside_the_sandbox_always_asks_the_person(ws: Path) -> None:
    tool: Tool = BashTool()
    escape = {"command": "echo hi", ESCAPE_PARAM: True}
    permissions = Permissions("ask", ws)
    permissions.allow_always(tool, {"command": "echo hi"})
    assert permissions.decide(tool, {"command": "echo hi"}).action == "allow"
    assert permissions.decide(tool, escape).action == "ask"
    assert tool.target(escape) == "[outside the sandbox] echo hi"
    sandbox = Sandbox(SandboxPolicy(), ws)
    assert "OUTSIDE the sandbox" in permission_note("bash", escape, sandbox)
    missing = Sandbox(SandboxPolicy(bwrap=MISSING), ws)
    assert "apt install bubblewrap" in permission_note("bash", {"command": "ls"}, missing)
    assert permission_note("read_file", {"path": "x"}, sandbox) == ""


def test_mounts_go_in_the_order_that_keeps_the_workspace_visible(ws: Path) -> None:
    argv = Sandbox(SandboxPolicy(bwrap="/usr/bin/bwrap"), ws).prefix()
    assert argv.index("--tmpfs") < argv.index("--bind")
    assert argv[argv.index("--bind") + 1 :][:2] == [str(ws), str(ws)]
    assert "--unshare-net" in argv and "--die-with-parent" in argv and "--unshare-pid" in argv
    assert "--unshare-net" not in Sandbox(SandboxPolicy(network=True), ws).prefix()


def _running(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\x00")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", marker.encode()] and state != "Z":
            return True
    return False


async def _gone(marker: str) -> bool:
    deadline = time.monotonic() + 15
    while _running(marker):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_a_bwrap_that_cannot_create_namespaces_degrades_clearly(ws: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    status = Sandbox(SandboxPolicy(bwrap=str(fake)), ws).status()
    assert not status.available and "No permissions to creating new namespace" in status.problem
    result = await bash(confined(ws, bwrap=str(fake)), "echo ran")
    assert result.is_error and "user namespaces" in result.output and "ran" not in result.output
    assert "apt install" not in result.output  # it is installed; installing it again would not help


# -- issue 18: a sandbox that holds as root, protected paths, plan mode ------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(ws: Path) -> Path:
    """A real git repository with one commit."""
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "T")
    git(ws, "config", "commit.gpgsign", "false")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "first")
    return ws


async def test_git_hooks_and_config_stay_read_only_even_when_hooks_is_missing(repo: Path, bwrap) -> None:
    shutil.rmtree(repo / ".git" / "hooks")
    config = (repo / ".git" / "config").read_text()
    attempts = [
        "mkdir -p .git/hooks",
        "echo 'touch pwned' > .git/hooks/pre-commit",
        "echo 'touch pwned' | tee .git/hooks/post-checkout",
        "git config core.hooksPath /tmp/hooks",
        "git config core.fsmonitor 'touch pwned'",
        "mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ && echo ../evil > .git/commondir",
        "echo end",
    ]
    result = await bash(confined(repo), "; ".join(attempts))
    assert "end" in result.output
    assert list((repo / ".git" / "hooks").iterdir()) == []
    assert (repo / ".git" / "config").read_text() == config
    assert not (repo / ".git" / "commondir").exists() and "moved aside" in result.output


async def test_a_nested_repositorys_hook_manager_config_stays_read_only(ws: Path, bwrap) -> None:
    """lefthook, pre-commit or husky installed in `sub` run what these say at the next commit there."""
    git(ws, "init", "-q", "sub")
    (ws / "sub" / "lefthook.yml").write_text("pre-commit: {}\n")
    attempts = [
        "echo 'repos: []' > sub/.pre-commit-config.yaml",
        "echo 'pre-commit: {commands: {x: {run: touch pwned}}}' >> sub/lefthook.yml",
        "mkdir -p sub/.husky && echo 'touch pwned' > sub/.husky/pre-commit",
        "echo end",
    ]
    result = await bash(confined(ws), "; ".join(attempts))
    assert "end" in result.output and "Read-only file system" in result.output, result.output
    assert (ws / "sub" / "lefthook.yml").read_text() == "pre-commit: {}\n"
    assert not (ws / "sub" / ".pre-commit-config.yaml").exists() and not (ws / "sub" / ".husky").exists()
    assert "sub/.pre-commit-config.yaml -> .agent/quarantine/" in result.output


async def test_git_cannot_be_swapped_for_a_planted_one(repo: Path, bwrap) -> None:
    head = git(repo, "rev-parse", "HEAD")
    command = "mv .git .git-old; mkdir -p .git/hooks; echo 'touch pwned' > .git/hooks/pre-commit; echo end"
    result = await bash(confined(repo), command)
    assert "end" in result.output and "Device or resource busy" in result.output
    assert not (repo / ".git-old").exists() and git(repo, "rev-parse", "HEAD") == head


async def test_git_keeps_working_in_the_sandbox(repo: Path, bwrap) -> None:
    command = (
        "echo b >> a.txt && git add a.txt && git commit -qm second && git checkout -q -b feature "
        "&& echo c > c.txt && git add c.txt && git commit -qm third && git status --short && echo ok"
    )
    result = await bash(confined(repo), command)
    assert not result.is_error and result.output == "ok\n", result.output
    assert git(repo, "log", "--format=%s").split() == ["third", "second", "first"]
    assert git(repo, "branch", "--show-current").strip() == "feature"


async def test_a_remount_fails_even_as_root(ws: Path, bwrap) -> None:
    target = Path("/etc") / f"agent-sandbox-{uuid.uuid4().hex}"
    command = (
        f"mount -o remount,rw / ; mount -o remount,rw,bind {ws} / ; touch {target}; "
        "grep CapEff /proc/self/status; unshare -U true || echo nested refused"
    )
    result = await bash(confined(ws), command)
    assert not target.exists()
    assert "CapEff:\t0000000000000000" in result.output and "nested refused" in result.output


@pytest.fixture
def unix_server(ws: Path) -> Iterator[str]:
    """A unix socket listening in the workspace (reachable by path from the sandbox)."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws / "s.sock"))
    server.listen()
    yield "s.sock"
    server.close()


async def test_unix_sockets_are_refused_unless_the_person_allows_them(ws: Path, bwrap, unix_server) -> None:
    if not unix_socket_filter().available:
        pytest.skip(f"no seccomp filter here: {unix_socket_filter().problem}")
    connect = (
        f'{BASE_PYTHON} -c "import socket; s = socket.socket(socket.AF_UNIX); '
        f"s.connect('{unix_server}'); print('connected')\""
    )
    refused = await bash(confined(ws), connect)
    assert refused.is_error and "Operation not permitted" in refused.output
    allowed = await bash(confined(ws, allow_unix_sockets=True), connect)
    assert not allowed.is_error and allowed.output == "connected\n", allowed.output


async def test_what_a_command_creates_at_a_missing_protected_path_is_set_aside(ws: Path, bwrap) -> None:
    command = "echo '{}' > .mcp.json; mkdir -p .claude/commands && echo run > .claude/commands/x.md; echo end"
    result = await bash(confined(ws, "ask"), command)
    assert not (ws / ".mcp.json").exists() and not (ws / ".claude").exists()
    assert "moved aside" in result.output and ".mcp.json -> .agent/quarantine/" in result.output
    kept = {p.name for p in (ws / ".agent" / "quarantine").rglob("*") if p.is_file()}
    assert kept == {".mcp.json", "x.md"}  # set aside, not deleted


async def test_the_sessions_folder_is_read_only_wherever_it_lives(ws: Path, bwrap, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    sessions = shared / "sessions"
    sessions.mkdir(parents=True)
    sandbox = Sandbox(SandboxPolicy(writable=(str(shared),)), ws, sessions=sessions)
    ctx = ToolContext(ws, store=MemoryStore(), sandbox=sandbox, permission_mode=lambda: "yolo")
    await bash(ctx, f"echo ok > {shared}/ok.txt; echo forged > {sessions}/events.jsonl")
    assert (shared / "ok.txt").read_text() == "ok\n"
    assert not (sessions / "events.jsonl").exists()


async def test_plan_mode_bash_cannot_write_the_workspace(repo: Path, bwrap, outside: Path) -> None:
    (repo / "a.txt").write_text("changed\n")
    command = "touch made.txt; git diff --output=diff.txt; echo ${x:-$(touch sub.txt)}; echo end"
    result = await bash(confined(repo, "plan"), command)
    assert "end" in result.output and "Read-only file system" in result.output
    assert not any((repo / name).exists() for name in ("made.txt", "diff.txt", "sub.txt"))
    escaped = await bash(confined(repo, "plan"), f"echo x > {outside}", **{ESCAPE_PARAM: True})
    assert escaped.is_error and "plan mode" in escaped.output and not outside.exists()


async def test_an_escape_is_refused_when_the_sandbox_mode_is_on(ws: Path, bwrap, outside: Path) -> None:
    command = f"echo x > {outside}"
    refused = await bash(confined(ws, "ask", mode="on"), command, **{ESCAPE_PARAM: True})
    assert refused.is_error and 'sandbox mode "on"' in refused.output and not outside.exists()
    auto = await bash(confined(ws, "ask", mode="auto"), command, **{ESCAPE_PARAM: True})
    assert not auto.is_error and outside.exists()  # the same request in mode "auto" (the person said yes)


async def test_relative_writable_paths_are_taken_from_the_workspace(
    ws: Path, bwrap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = ws.parent / "shared"
    shared.mkdir()
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # where `agent` was started from must not matter
    ctx = confined(ws, writable=("../shared",))
    assert ctx.sandbox is not None and ctx.sandbox.writable_paths() == [shared]
    result = await bash(ctx, "echo kept > ../shared/f.txt && echo ok")
    assert result.output == "ok\n" and (shared / "f.txt").read_text() == "kept\n"


async def test_two_commands_at_once_cannot_hand_a_protected_path_to_each_other(ws: Path, bwrap) -> None:
    """A starts while .mcp.json is missing; A makes it; B starts (it now exists) and must still watch
    it, or after A's set-aside B could make it again and keep it."""
    sandbox = Sandbox(SandboxPolicy(), ws)
    first = sandbox.launch("yolo", False)
    (ws / ".mcp.json").write_text("{made by A}")
    second = sandbox.launch("yolo", False)
    assert "moved aside" in sandbox.settle(first) and not (ws / ".mcp.json").exists()
    (ws / ".mcp.json").write_text("{made by B}")
    assert "moved aside" in sandbox.settle(second) and not (ws / ".mcp.json").exists()
    (ws / ".mcp.json").write_text("{the person's}")  # made while no command ran: theirs, and kept
    assert sandbox.settle(sandbox.launch("yolo", False)) == ""
    assert (ws / ".mcp.json").read_text() == "{the person's}"


def test_a_group_of_bwrap_processes_alone_has_not_started_its_command(tmp_path: Path):
    """tools/shells/manager.py records a confined background shell only once its command runs:
    a group holding only processes named bwrap is still setting its sandbox up."""
    fake = tmp_path / "bwrap"  # a process named bwrap (comm), not the real one
    shutil.copy(shutil.which("sleep") or "/bin/sleep", fake)
    setting_up = subprocess.Popen([str(fake), "30"], start_new_session=True)
    running = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert not command_started(setting_up.pid)
        assert command_started(running.pid)
        assert not command_started(2**22 + 17)  # no such group
    finally:
        for proc in (setting_up, running):
            proc.kill()
            proc.wait()
