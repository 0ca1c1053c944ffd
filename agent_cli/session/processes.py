"""Commands a session started that may outlive it: each bash command's process group is recorded in
`<session dir>/running/<pgid>.json` while it runs (with the leader's start time from /proc), and the
record is removed when it ends. A record left behind means the agent died (`kill -9`) while the
command ran: the next process to open the session ends that group — after checking the pgid still
belongs to that command, so a recycled pid is never killed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
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
        record = {
            "pgid": pgid,
            "start": stat.start if stat else None,
            "command": command[:500],
            "agent_pid": os.getpid(),
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
            command = str(record.get("command", ""))[:80]
            if start is not None and self.still_ours(pgid, int(start)):
                _end_group(pgid)
                notes.append(
                    f"ended a command an earlier agent process left running (process group {pgid}: {command})"
                )
            path.unlink(missing_ok=True)
        return notes

    def still_ours(self, pgid: int, start: int) -> bool:
        """The group is the recorded one: its leader has the recorded start time, or (the leader
        gone) members remain — a pid is not reused while a process group of that id exists."""
        leader = proc_stat(pgid, self.proc)
        if leader is not None and leader.state != "Z":
            return leader.start == start and leader.pgrp == pgid
        return any(stat.start >= start for stat in live_members(pgid, self.proc))


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
