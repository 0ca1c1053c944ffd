"""bash's sandbox: bubblewrap (`bwrap`) with the workspace and a private /tmp writable, the rest of the
filesystem read-only, and no network unless the config says so.

`Sandbox` builds the argv prefix and knows whether bwrap works here (probed once per process).
`Sandbox.launch` decides, for one command, how it runs — confined, unconfined, or refused — from the
sandbox mode (auto|on|off), the permission mode (yolo has no way out) and whether the model asked to
run outside the sandbox (which the permission layer turns into a question to the person).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SANDBOX_MODES = ("auto", "on", "off")  # auto: bubblewrap when it works here; on: required; off: never
ESCAPE_PARAM = "dangerously_disable_sandbox"
FIX = "apt install bubblewrap"
FIX_NAMESPACES = (
    "allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or a less strict container)"
)
OPT_OUT = 'sandbox = "off" in ~/.config/agent/config.toml'
NOT_INSTALLED = "bubblewrap (bwrap) is not installed"
PROBE_TIMEOUT = 10.0
# Inside the writable workspace, kept read-only for bash: the session log and config, and git hooks
# (a hook written by a confined command would run unconfined at the person's next commit).
PROTECTED = (".agent", ".git/hooks")
_BLOCKED_WRITE = ("Read-only file system",)
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
    """How one command runs: under `prefix` (empty: unconfined), or not at all (`refusal`)."""

    prefix: tuple[str, ...] = ()
    refusal: str = ""
    confined: bool = False


class Sandbox:
    def __init__(self, policy: SandboxPolicy, workspace: Path) -> None:
        self.policy = policy
        self.workspace = Path(workspace).absolute()

    def status(self) -> SandboxStatus:
        if self.policy.mode == "off":
            return SandboxStatus("off", False)
        problem = _probe(self.policy.bwrap, self.policy.network)
        return SandboxStatus(self.policy.mode, not problem, problem)

    def launch(self, permission_mode: str, escape: bool) -> Launch:
        """How a command runs now. `escape`: the model asked to run it outside the sandbox (the
        permission layer has asked the person by then; yolo and mode "on" never allow it)."""
        mode = self.policy.mode
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
            return Launch(tuple(self.prefix()), confined=True)
        if mode == "on":
            return Launch(
                refusal=f'bash refused: sandbox mode is "on" but {status.problem}. Fix: {status.fix}.'
            )
        if permission_mode == "yolo":
            return Launch(
                refusal=(
                    f"bash refused: yolo mode runs commands only in a sandbox, and {status.problem}. "
                    f"Fix: {status.fix} (or set {OPT_OUT} to run commands unconfined)."
                )
            )
        return Launch()  # ask / auto-edit: the person approves each command, as without a sandbox

    def prefix(self, cwd: Path | None = None) -> list[str]:
        """The bwrap argv that goes before `/bin/bash -c …`. Mounts apply left to right: /tmp's
        tmpfs comes before the workspace bind, or a workspace under /tmp would be hidden."""
        workspace = str(self.workspace)
        argv = [_resolve(self.policy.bwrap) or self.policy.bwrap, "--die-with-parent", "--unshare-pid"]
        if not self.policy.network:
            argv.append("--unshare-net")
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        argv += ["--bind", workspace, workspace]
        for path in self.writable_paths():
            argv += ["--bind", str(path), str(path)]
        for name in PROTECTED:
            protected = self.workspace / name
            if protected.exists() and not protected.is_symlink():
                argv += ["--ro-bind", str(protected), str(protected)]
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
        if not blocked:
            return ""
        what = (
            "outside the workspace and /tmp the filesystem is read-only"
            + ("" if self.policy.network else ", and there is no network")
            + f" ({blocked[0]!r} above may come from that)"
        )
        if permission_mode == "yolo" or self.policy.mode == "on":
            return (
                f"[sandbox: {what}. There is no way out of it here; the person can list paths in "
                "sandbox.writable or set sandbox.network = true in the config.]"
            )
        return (
            f"[sandbox: {what}. If this command really needs to write there or reach the network, call "
            f"bash again with {ESCAPE_PARAM}: true — the person is asked first (never in headless mode).]"
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
def _probe(program: str, network: bool) -> str:
    """'' when bwrap runs a trivial command here with the flags we use, else what is wrong. Cached:
    it costs a few milliseconds and the answer does not change while the process lives."""
    path = _resolve(program)
    if path is None:
        where = "on PATH" if os.sep not in program else f"at {program}"
        return f"{NOT_INSTALLED} (not found {where})"
    argv: Sequence[str] = [path, "--die-with-parent", "--unshare-pid"]
    if not network:
        argv = [*argv, "--unshare-net"]
    argv = [*argv, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not work here ({exc})"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit code {done.returncode}"
        return f"bwrap does not work here ({reason}; user namespaces may be disabled in this container)"
    return ""
