"""bash's sandbox: bubblewrap (`bwrap`) with the workspace and a private /tmp writable, the rest of the
filesystem read-only, and no network unless the config says so. It holds as root: a new user namespace
with every capability dropped (a remount of / fails), no nested user namespaces, the protected paths
(tools/sandbox/protected.py) read-only inside the workspace, and a seccomp filter that refuses unix sockets
(tools/sandbox/seccomp.py) unless the person allows them. In plan mode the workspace itself is read-only.

`Sandbox` builds the argv prefix and knows whether bwrap works here (probed once per process).
`Sandbox.launch` decides, for one command, how it runs — confined, unconfined, or refused — from the
sandbox mode (auto|on|off), the permission mode (yolo and plan have no way out) and whether the model
asked to run outside the sandbox (which the permission layer turns into a question to the person).
`Sandbox.settle` runs after the command: it sets aside what it created at a protected path that did
not exist yet (bwrap cannot bind a missing path without creating it on the host), and the config and
hooks of a git directory it planted anywhere in the workspace that would run a program (gitdirs.py).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.tools.sandbox.gitdirs import GitDirWatch, now, summary
from agent_cli.tools.sandbox.protected import Layout, Watch, layout, set_aside
from agent_cli.tools.sandbox.seccomp import unix_socket_filter

SANDBOX_MODES = ("auto", "on", "off")  # auto: bubblewrap when it works here; on: required; off: never
ESCAPE_PARAM = "dangerously_disable_sandbox"
FIX = "apt install bubblewrap"
FIX_NAMESPACES = (
    "allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or a less strict container)"
)
OPT_OUT = 'sandbox = "off" in ~/.config/agent/config.toml'
NOT_INSTALLED = "bubblewrap (bwrap) is not installed"
PROBE_TIMEOUT = 10.0
# A new user namespace with every capability dropped, and no nested one (in which a process would get
# capabilities back and could mount over the read-only binds); weaker sets when bwrap cannot do that.
ISOLATION = (
    ("--unshare-user", "--disable-userns", "--cap-drop", "ALL"),
    ("--unshare-user", "--cap-drop", "ALL"),
    ("--cap-drop", "ALL"),
)
PLAN_NO_WAY_OUT = (
    "bash refused: in plan mode there is no way out of the sandbox, and the workspace is read-only. "
    "Finish the plan; the person approves it before anything is changed."
)
_BLOCKED_WRITE = ("Read-only file system", "Device or resource busy")
_BLOCKED_SOCKET = "Operation not permitted"  # what socket(AF_UNIX, …) gets from the seccomp filter
_BLOCKED_NET = (
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "Connection refused",
    "Couldn't connect to server",
    "EAI_AGAIN",
    "ENETUNREACH",
    "ECONNREFUSED",
)


@dataclass(frozen=True)
class SandboxPolicy:
    """What the person configured (`[sandbox]`); `bwrap` is the program to run (a name on PATH or a path)."""

    mode: str = "auto"
    network: bool = False
    writable: tuple[str, ...] = ()  # extra writable paths besides the workspace and a private /tmp
    bwrap: str = "bwrap"
    allow_unix_sockets: bool = False  # no seccomp filter on socket(AF_UNIX, …)

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise ValueError(f"sandbox mode {self.mode!r}: use one of {', '.join(SANDBOX_MODES)}")


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands can be confined here; `problem` says why not (bwrap missing or unusable)."""

    mode: str
    available: bool
    problem: str = ""

    @property
    def fix(self) -> str:
        return FIX if self.problem.startswith(NOT_INSTALLED) else FIX_NAMESPACES


@dataclass(frozen=True)
class Launch:
    """How one command runs: under `prefix` (empty: unconfined), or not at all (`refusal`). `seccomp`
    is the BPF program bwrap loads (`--seccomp FD`, added when the command starts); `watched` are the
    protected paths that did not exist when it started (`Sandbox.settle` looks at them after)."""

    prefix: tuple[str, ...] = ()
    refusal: str = ""
    confined: bool = False
    seccomp: bytes = b""
    watched: tuple[Watch, ...] = ()
    started: int = 0  # when it started (gitdirs.now), 0: nothing to sweep (plan mode: all read-only)
    bound: tuple[Path, ...] = ()  # what it could not change (bound read-only)


@dataclass(frozen=True)
class Probe:
    """What bwrap can do here: `problem` when it cannot run at all, else the isolation flags it took."""

    problem: str = ""
    isolation: tuple[str, ...] = ISOLATION[0]
    version: str = ""
    path: str = ""  # the bwrap program found


class Sandbox:
    def __init__(
        self,
        policy: SandboxPolicy,
        workspace: Path,
        *,
        sessions: Path | None = None,
        home: Path | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = Path(workspace).absolute()
        self.sessions = Path(sessions).absolute() if sessions is not None else None
        self.home = home or Path.home()
        base = self.sessions.parent if self.sessions is not None else self.workspace / ".agent"
        self.quarantine = base / "quarantine"
        self._in_flight: dict[Path, int] = {}  # watched paths of commands still running
        self._started: list[int] = []  # when the confined commands still running started
        self._git_dirs: GitDirWatch | None = None  # the workspace's folders and git directories

    def status(self) -> SandboxStatus:
        if self.policy.mode == "off":
            return SandboxStatus("off", False)
        problem = self.probe().problem
        return SandboxStatus(self.policy.mode, not problem, problem)

    def probe(self) -> Probe:
        return _probe(self.policy.bwrap, self.policy.network)

    def refusal_at_start(self, permission_mode: str) -> str:
        """One line when every bash call will be refused whatever the command (yolo, or mode "on",
        without a usable bwrap): said at the start, not only in each call's result; "" otherwise."""
        if self.policy.mode == "off" or (self.policy.mode == "auto" and permission_mode != "yolo"):
            return ""  # nothing to refuse: no probe at start-up
        status = self.status()
        refusal = "" if status.available else self._unconfinable(permission_mode, status)
        return refusal.replace("bash refused: ", "bash will be refused: ", 1)

    def _unconfinable(self, permission_mode: str, status: SandboxStatus) -> str:
        """The refusal every command meets when bwrap cannot run here ("" in ask and auto-edit: the
        person approves each command, as without a sandbox)."""
        if self.policy.mode == "on":
            return f'bash refused: sandbox mode is "on" but {status.problem}. Fix: {status.fix}.'
        if permission_mode == "yolo":
            return (
                f"bash refused: yolo mode runs commands only in a sandbox, and {status.problem}. "
                f"Fix: {status.fix} (or set {OPT_OUT} to run commands unconfined)."
            )
        return ""

    def launch(self, permission_mode: str, escape: bool) -> Launch:
        """How a command runs now. `escape`: the model asked to run it outside the sandbox (the
        permission layer has asked the person by then; yolo, plan and mode "on" never allow it)."""
        mode = self.policy.mode
        if escape and permission_mode == "plan":
            return Launch(refusal=PLAN_NO_WAY_OUT)
        if mode == "off":
            return Launch()
        if escape:
            if permission_mode == "yolo":
                return Launch(refusal=_no_way_out("in yolo mode"))
            if mode == "on":
                return Launch(refusal=_no_way_out('with sandbox mode "on"'))
            return Launch()
        status = self.status()
        if status.available:
            return self._confined(read_only=permission_mode == "plan")
        return Launch(refusal=self._unconfinable(permission_mode, status))

    def _confined(self, read_only: bool) -> Launch:
        """A confined launch; the protected paths that do not exist yet are watched until `settle`."""
        protected = self.layout(read_only)
        pending = [w.path for w in protected.watched if w.link is None]
        known = {w.path for w in protected.watched}
        # a path another running command is watching may exist now because that command made it
        extra = tuple(Watch(p) for p in self._in_flight if p not in known)
        for path in [*pending, *(w.path for w in extra)]:
            self._in_flight[path] = self._in_flight.get(path, 0) + 1
        filtered = unix_socket_filter() if not self.policy.allow_unix_sockets else None
        started = 0
        if not read_only:
            self.git_dirs().seed()  # the first command's: a walk of every folder, once
            started = now()
            self._started.append(started)
        return Launch(
            tuple(self.prefix(read_only=read_only, layout=protected)),
            confined=True,
            seccomp=filtered.bpf if filtered is not None else b"",
            watched=protected.watched + extra,
            started=started,
            bound=protected.read_only,
        )

    def git_dirs(self) -> GitDirWatch:
        if self._git_dirs is None:
            skip = [self.workspace / ".agent", *([self.sessions] if self.sessions is not None else [])]
            real = Path(os.path.realpath(self.workspace))
            self._git_dirs = GitDirWatch(real, tuple(Path(os.path.realpath(p)) for p in skip))
        return self._git_dirs

    def settle(self, launch: Launch) -> str:
        """After a confined command: set aside what it made at a watched protected path. A note for
        the model and the person ("" when nothing was there)."""
        for watch in launch.watched:
            count = self._in_flight.get(watch.path, 0) - 1
            if count > 0:
                self._in_flight[watch.path] = count
            else:
                self._in_flight.pop(watch.path, None)
        note = self.sweep(launch)
        if launch.started in self._started:
            self._started.remove(launch.started)
        return note

    def sweep(self, launch: Launch) -> str:
        """Set aside what a confined command made at a watched protected path so far; `settle` does it
        at its end, and a background shell's watcher every second while it runs."""
        moved = set_aside(launch.watched, self.quarantine, self.workspace)
        notes = [self._git_sweep(launch)]
        if moved:
            notes.insert(
                0,
                f"[sandbox: this command created protected paths, which were moved aside ({'; '.join(moved)}). "
                "Those files run code later (git hooks and config, agent and editor settings, shell "
                "start-up files); change them with write_file or edit_file, which ask the person.]",
            )
        return "\n".join(n for n in notes if n)

    def _git_sweep(self, launch: Launch) -> str:
        """Set aside the config that runs a program, and the hooks, of each git directory a command
        running since this one started planted (a `git init` plus `git config core.fsmonitor`, a bare
        repository's HEAD, objects/, refs/ and config made with mkdir and printf)."""
        if not launch.started or self._git_dirs is None:
            return ""
        since = min([launch.started, *self._started])
        planted = self._git_dirs.planted(since, launch.bound)
        moved = set_aside([Watch(f) for p in planted for f in p.files], self.quarantine, self.workspace)
        if not moved:
            return ""
        return (
            f"[sandbox: this command left git settings that run a program ({summary(planted)}); "
            f"git would run them outside the sandbox at the person's next git command there, so they were "
            f"moved aside ({'; '.join(moved)}). Change a repository's config or hooks with write_file or "
            "edit_file, which ask the person.]"
        )

    def layout(self, read_only: bool = False) -> Layout:
        """The protected paths under the writable roots (none in plan mode: nothing is writable)."""
        if read_only:
            return Layout()
        extra = [self.sessions] if self.sessions is not None else []
        return layout([self.workspace, *self.writable_paths()], self.home, extra)

    def prefix(
        self, cwd: Path | None = None, *, read_only: bool = False, layout: Layout | None = None
    ) -> list[str]:
        """The bwrap argv that goes before `/bin/bash -c …`. Mounts apply left to right: /tmp's
        tmpfs comes before the workspace bind, or a workspace under /tmp would be hidden; the folders
        that hold protected paths are bound over themselves (so they cannot be renamed away) before
        the protected paths are bound read-only. `read_only`: plan mode, the workspace too."""
        workspace = str(self.workspace)
        probe = self.probe()
        argv = [_resolve(self.policy.bwrap) or self.policy.bwrap, "--die-with-parent", "--unshare-pid"]
        if not self.policy.network:
            argv.append("--unshare-net")
        argv += probe.isolation
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        bind = "--ro-bind" if read_only else "--bind"
        argv += [bind, workspace, workspace]
        for path in self.writable_paths():
            argv += [bind, str(path), str(path)]
        protected = layout if layout is not None else self.layout(read_only)
        for path in protected.anchors:
            argv += ["--bind", str(path), str(path)]
        for path in protected.read_only:
            argv += ["--ro-bind", str(path), str(path)]
        argv += ["--chdir", str(cwd or self.workspace)]
        return argv

    def writable_paths(self) -> list[Path]:
        """The extra writable paths that exist (bwrap cannot bind a missing one), `~` expanded,
        relative ones taken from the workspace."""
        out: list[Path] = []
        for raw in self.policy.writable:
            path = Path(os.path.expanduser(raw))
            path = path if path.is_absolute() else self.workspace / path
            if path.exists():
                out.append(Path(os.path.normpath(path)))
        return out

    def hint(self, output: str, launch: Launch, permission_mode: str) -> str:
        """A note for the model when a confined command's output looks like the sandbox stopped it."""
        if not launch.confined:
            return ""
        blocked = [m for m in _BLOCKED_WRITE if m in output]
        if not self.policy.network:
            blocked += [m for m in _BLOCKED_NET if m in output]
        if launch.seccomp and _BLOCKED_SOCKET in output:
            blocked.append(_BLOCKED_SOCKET)
        if not blocked:
            return ""
        what = (
            "outside the workspace and /tmp the filesystem is read-only"
            + (", and so is the workspace in plan mode" if permission_mode == "plan" else "")
            + "; inside it git's config and hooks, .agent, .claude, .vscode, .idea, .mcp.json and "
            "shell start-up files are read-only (protected: change them with write_file or edit_file, "
            "which ask the person)"
            + ("" if self.policy.network else "; there is no network")
            + ("; unix sockets cannot be opened" if launch.seccomp else "")
            + f" ({blocked[0]!r} above may come from that)"
        )
        settings = "sandbox.writable, sandbox.network = true or sandbox.allow_unix_sockets = true"
        if permission_mode in ("yolo", "plan") or self.policy.mode == "on":
            return f"[sandbox: {what}. There is no way out of it here; the person can set {settings}.]"
        return (
            f"[sandbox: {what}. If this command really needs to write there, reach the network or a unix "
            f"socket, call bash again with {ESCAPE_PARAM}: true — the person is asked first (never in "
            "headless mode).]"
        )


def wants_escape(input: dict[str, Any]) -> bool:
    """Whether a bash call asks to run outside the sandbox (the permission layer always asks then)."""
    return input.get(ESCAPE_PARAM) is True


def permission_note(tool: str, input: dict[str, Any], sandbox: Sandbox | None) -> str:
    """A line for the permission modal or a denial: where a bash command would run."""
    if tool != "bash" or sandbox is None:
        return ""
    if wants_escape(input):
        return "⚠ runs OUTSIDE the sandbox: it can write anywhere you can and reach the network"
    status = sandbox.status()
    if status.mode == "off":
        return ""
    if status.available:
        net = "with network" if sandbox.policy.network else "no network"
        return f"runs in the sandbox (workspace and a private /tmp writable, {net})"
    return f"⚠ no sandbox ({status.problem}): runs unconfined; to confine bash: {status.fix}"


def _no_way_out(where: str) -> str:
    return (
        f"bash refused: {where} there is no way out of the sandbox. Do the task inside the workspace, "
        "or ask the person to list the path in sandbox.writable or set sandbox.network = true."
    )


def _resolve(program: str) -> str | None:
    if os.sep in program:
        return program if os.access(program, os.X_OK) and Path(program).is_file() else None
    return shutil.which(program)


@functools.cache
def _probe(program: str, network: bool) -> Probe:
    """Whether bwrap runs a trivial command here with the flags we use, and the strongest isolation it
    takes (a bwrap that cannot make a user namespace still drops every capability). Cached: it costs
    a few milliseconds and the answer does not change while the process lives."""
    path = _resolve(program)
    if path is None:
        where = "on PATH" if os.sep not in program else f"at {program}"
        return Probe(f"{NOT_INSTALLED} (not found {where})")
    base = [path, "--die-with-parent", "--unshare-pid", *([] if network else ["--unshare-net"])]
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"]
    problem = ""
    for isolation in ISOLATION:
        try:
            done = subprocess.run(
                [*base, *isolation, *mounts],
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Probe(f"bwrap does not work here ({exc})")
        if done.returncode == 0:
            return Probe(isolation=isolation, version=_version(path), path=path)
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit code {done.returncode}"
        problem = problem or (
            f"bwrap does not work here ({reason}; user namespaces may be disabled in this container)"
        )
    return Probe(problem)


def _version(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, timeout=PROBE_TIMEOUT, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()
