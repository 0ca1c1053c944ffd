"""`agent doctor`: what bash's sandbox enforces on this machine and what it could not, in plain lines.

Each promise is checked by running a small script in the very sandbox bash gets (the person's own
`[sandbox]`, built by `api/compose.make_sandbox`), over a scratch workspace, and reading back what it
could do: nothing of the person's workspace is touched. A check that cannot run says so.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli.tools.sandbox.protected import layout
from agent_cli.tools.sandbox.seccomp import filter_fd, unix_socket_filter

if TYPE_CHECKING:
    from agent_cli.settings.config import Config
    from agent_cli.tools.sandbox.bwrap import Sandbox

OK, NO = "  ok  ", "  NO  "
CHECK_TIMEOUT = 30.0
# Run inside the sandbox; one `name=yes|no` line per check. $1: a host path outside every writable
# root, $2: a TCP port listening on the host, $3: a unix socket's path, $4: the Python to use.
SCRIPT = r"""
grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status && echo caps_dropped=yes || echo caps_dropped=no
mount -o remount,rw / 2>/dev/null && echo remount=yes || echo remount=no
unshare -U true 2>/dev/null && echo nested_userns=yes || echo nested_userns=no
touch "$1" 2>/dev/null && echo write_outside=yes || echo write_outside=no
(exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null && echo network=yes || echo network=no
echo x 2>/dev/null > .git/hooks/pre-commit && echo write_hooks=yes || echo write_hooks=no
git config core.fsmonitor x >/dev/null 2>&1 && echo write_git_config=yes || echo write_git_config=no
mv .git .git-moved 2>/dev/null && echo move_git=yes || echo move_git=no
"$4" -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('$3')" 2>/dev/null \
  && echo unix_socket=yes || echo unix_socket=no
"""


def doctor(config: Config, workspace: Path) -> list[str]:
    """The report, one line each."""
    from agent_cli.api.compose import make_sandbox

    sandbox = make_sandbox(config, workspace)
    policy = sandbox.policy
    lines = ["bash's sandbox on this machine (agent doctor)"]
    lines += [f"note: {warning}" for warning in config.warnings]
    lines.append(f"mode: {policy.mode} (from your own config; a workspace cannot change it)")
    lines += git_bare_repositories()
    if policy.mode == "off":
        return [*lines, f"{NO}bash runs unconfined: sandbox mode is off"]
    probe = sandbox.probe()
    if probe.problem:
        fix = sandbox.status().fix
        where = "bash is refused" if policy.mode == "on" else "bash runs unconfined, asking first"
        lines.append(f"{NO}no sandbox: {probe.problem}. Fix: {fix}.")
        lines.append(f"{NO}yolo mode refuses bash; in ask and auto-edit modes {where}")
        return lines
    lines.append(f"bubblewrap: {probe.path} ({probe.version or 'version unknown'})")
    lines.append(f"runs as: uid {os.getuid()}{' (root)' if os.getuid() == 0 else ''}")
    lines += _checked(sandbox)
    lines.append(f"{OK}plan mode: the workspace too is read-only for bash, and there is no way out")
    return lines


def _checked(sandbox: Sandbox) -> list[str]:
    from agent_cli.tools.sandbox.bwrap import Sandbox

    filtered = unix_socket_filter()
    with _scratch() as (scratch, outside, port, sock):
        launch = Sandbox(sandbox.policy, scratch, home=sandbox.home).launch("ask", False)
        fd = filter_fd(launch.seccomp) if launch.seccomp else None
        argv = [*launch.prefix, *(("--seccomp", str(fd)) if fd is not None else ())]
        argv += ["/bin/bash", "-c", SCRIPT, "doctor", str(outside), str(port), sock, _interpreter()]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=CHECK_TIMEOUT,
                stdin=subprocess.DEVNULL,
                pass_fds=(fd,) if fd is not None else (),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [f"{NO}the checks could not run in the sandbox ({exc})"]
        finally:
            if fd is not None:
                os.close(fd)
        seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        wrote_outside = outside.exists()
    caps = seen.get("caps_dropped") == "yes" and seen.get("remount") == "no"
    network = sandbox.policy.network
    extra = [sandbox.sessions] if sandbox.sessions else []
    protected = layout([sandbox.workspace, *sandbox.writable_paths()], sandbox.home, extra, create=False)
    bound = ", ".join(_shown(p, sandbox.workspace) for p in protected.read_only) or "none yet"
    out = [
        _line(caps, "every capability dropped in a new user namespace: a remount of / fails, as root too"),
        _line(seen.get("nested_userns") == "no", "no nested user namespace (no capabilities to get back)"),
        _line(
            seen.get("write_outside") == "no" and not wrote_outside,
            "outside the workspace, sandbox.writable and a private /tmp the filesystem is read-only",
        ),
        _line(
            (seen.get("network") == "no") != network,
            "network: " + ("on (sandbox.network)" if network else "none"),
        ),
        _line(
            all(seen.get(k) == "no" for k in ("write_hooks", "write_git_config", "move_git")),
            "git's config and hooks are read-only and .git cannot be swapped (git add, commit, checkout work)",
        ),
        f"{OK}protected paths here, read-only for bash: {bound}",
        f"{OK}{len(protected.watched)} protected paths that do not exist yet (.mcp.json, .claude, .vscode, "
        "shell start-up files …) are watched: what a command makes there is set aside into .agent/quarantine",
    ]
    if sandbox.sessions is not None:
        out.append(f"{OK}the sessions folder is read-only for bash: {sandbox.sessions}")
    if sandbox.policy.allow_unix_sockets:
        out.append(f"{NO}unix sockets are reachable: sandbox.allow_unix_sockets = true in your config")
    elif not filtered.available:
        out.append(f"{NO}unix sockets are reachable (Docker's, D-Bus's, an ssh agent's): {filtered.problem}")
    else:
        out.append(
            _line(
                seen.get("unix_socket") == "no",
                "unix sockets refused by a seccomp filter (pyseccomp, libseccomp)",
            )
        )
    return out


def git_bare_repositories() -> list[str]:
    """Whether the person's git refuses a bare repository it finds by itself (`safe.bareRepository =
    explicit`, git 2.38+): without it, any folder holding HEAD, objects/ and refs/ that a repository
    ships or a command plants is a repository at their next `git status` there, its config's
    core.fsmonitor run. The sandbox sets aside what a command plants; this setting is the root fix."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k.startswith("GIT_CONFIG")}

    def git(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", *args], cwd="/", env=env, capture_output=True, text=True, timeout=CHECK_TIMEOUT
            )
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip()

    version = git("--version").removeprefix("git version ")
    numbers = tuple(int(n) for n in version.split(".")[:2] if n.isdigit())
    if not version or len(numbers) < 2 or numbers < (2, 38):
        return []  # no git, or one without the setting: nothing to recommend
    if git("config", "--get", "safe.bareRepository").lower() == "explicit":
        return [f"{OK}git refuses bare repositories it was not pointed at (safe.bareRepository = explicit)"]
    return [
        f"{NO}git takes any folder holding HEAD, objects/ and refs/ for a repository and runs its config "
        "(a planted core.fsmonitor) at your next git command there; to refuse them: "
        "git config --global safe.bareRepository explicit"
    ]


def _shown(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


def _line(held: bool, what: str) -> str:
    return f"{OK}{what}" if held else f"{NO}NOT ENFORCED: {what}"


@contextmanager
def _scratch() -> Iterator[tuple[Path, Path, int, str]]:
    """A scratch workspace with a `.git`, a host path outside every writable root, a listening TCP
    port and a listening unix socket; all removed after."""
    outside_dir = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    outside = outside_dir / f"agent-doctor-{uuid.uuid4().hex}"
    server = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    with tempfile.TemporaryDirectory(prefix="agent-doctor-", dir=outside_dir) as tmp:
        scratch = Path(tmp) / "ws"
        for folder in ("hooks", "objects", "refs"):
            (scratch / ".git" / folder).mkdir(parents=True)
        (scratch / ".git" / "config").write_text("[core]\n\tbare = false\n")
        (scratch / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        unix.bind(str(scratch / "s.sock"))
        unix.listen()
        try:
            yield scratch, outside, server.getsockname()[1], "s.sock"
        finally:
            server.close()
            unix.close()
            outside.unlink(missing_ok=True)


def _interpreter() -> str:
    """The Python the check script runs: the interpreter itself, not a venv's link to it (a venv
    under /tmp is hidden by the sandbox's private /tmp)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))
