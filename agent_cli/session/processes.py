"""Commands a session started that may outlive it: each bash command's (and background shell's)
process group is recorded in `<session dir>/running/<pgid>.json` while it runs (with the leader's
start time from /proc, and the agent's own pid and start time), and the record is removed when it
ends. A record left behind by an agent that is gone means it died (`kill -9`) while the command ran:
the next agent process started in the workspace ends that group (`reap_abandoned`; resuming the
session does it too) — after checking the pgid still belongs to that command, so a recycled pid is
never killed. A record of an agent still running (a background shell kept across /clear) is left."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent_cli.core.files import PRIVATE_FILE, atomic_write

RUNNING = "running"
PROC = Path("/proc")


@dataclass(frozen=True)
class Stat:
    state: str  # R, S, D, Z (a zombie: dead, waiting to be reaped), ...
    pgrp: int
    start: int  # clock ticks after boot (field 22 of /proc/<pid>/stat)


def proc_stat(pid: int, proc: Path = PROC) -> Stat | None:
    try:
        raw = (proc / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
    try:
        return Stat(state=fields[0], pgrp=int(fields[2]), start=int(fields[19]))
    except (IndexError, ValueError):
        return None


class ProcessRecords:
    """Implements tools.base.ProcessRecorder for one session directory."""

    def __init__(self, session_dir: Path, proc: Path = PROC):
        self.dir = session_dir / RUNNING
        self.proc = proc

    def started(self, pgid: int, command: str) -> None:
        stat = proc_stat(pgid, self.proc)
        agent = proc_stat(os.getpid(), self.proc)
        record = {
            "pgid": pgid,
            "start": stat.start if stat else None,
            "command": command[:500],
            "agent_pid": os.getpid(),
            "agent_start": agent.start if agent else None,
            "ts": time.time(),
        }
        with contextlib.suppress(OSError):  # a record is a safety net: never fail the command for it
            atomic_write(self.dir / f"{pgid}.json", json.dumps(record), mode=PRIVATE_FILE)

    def ended(self, pgid: int) -> None:
        with contextlib.suppress(OSError):
            (self.dir / f"{pgid}.json").unlink()

    def reap(self) -> list[str]:
        """End the process groups earlier processes left running; one line per group, for the person."""
        if not self.dir.is_dir():
            return []
        notes = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                pgid, start = int(record["pgid"]), record.get("start")
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)
                continue
            if self.agent_alive(record):
                continue  # its agent runs on (a shell kept across /clear): not ours to end
            command = str(record.get("command", ""))[:80]
            if isinstance(start, int) and start > 0 and self.still_ours(pgid, start):
                _end_group(pgid)
                notes.append(
                    f"ended a command an earlier agent process left running (process group {pgid}: {command})"
                )
            path.unlink(missing_ok=True)
        return notes

    def agent_alive(self, record: dict) -> bool:
        """The agent process that wrote `record` still runs (the same pid with the same start time;
        a record without the start time, from an older version, counts as gone)."""
        pid, start = record.get("agent_pid"), record.get("agent_start")
        if not isinstance(pid, int) or not isinstance(start, int):
            return False
        stat = proc_stat(pid, self.proc)
        return stat is not None and stat.state != "Z" and stat.start == start

    def still_ours(self, pgid: int, start: int) -> bool:
        """The group is the recorded one: its leader has the recorded start time, or (the leader
        gone) members remain — a pid is not reused while a process group of that id exists."""
        leader = proc_stat(pgid, self.proc)
        if leader is not None and leader.state != "Z":
            return leader.start == start and leader.pgrp == pgid
        return any(stat.start >= start for stat in live_members(pgid, self.proc))


def has_records(session_dir: Path) -> bool:
    return (session_dir / RUNNING).is_dir()


def reap_abandoned(session_dirs: Iterable[Path], proc: Path = PROC) -> list[str]:
    """End what agents that are gone left running in any of `session_dirs` (one line per group)."""
    notes: list[str] = []
    for session_dir in session_dirs:
        if (session_dir / RUNNING).is_dir():
            notes += ProcessRecords(session_dir, proc).reap()
    return notes


def live_members(pgid: int, proc: Path = PROC) -> list[Stat]:
    """The processes of group `pgid` that are still running (zombies are dead already)."""
    found = []
    for entry in proc.iterdir() if proc.is_dir() else ():
        if entry.name.isdigit():
            stat = proc_stat(int(entry.name), proc)
            if stat is not None and stat.pgrp == pgid and stat.state != "Z":
                found.append(stat)
    return found


def _end_group(pgid: int, grace: float = 2.0) -> None:
    """SIGTERM the group, then SIGKILL whatever is still running after `grace` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not live_members(pgid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
