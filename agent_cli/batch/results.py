"""The results file: one JSON object a line, appended by the driver alone as each task finishes.

A task with a result there is done: a second run skips it (with `--retry-failed`, one whose last
result is an error runs again). A task that was interrupted has no result, so the next run takes it
up again, in the same worktree and session.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.core.types import Usage


@dataclass(frozen=True)
class Row:
    """One task's result. The first keys are those of `agent -p --output-format json` that say how
    the run went; then where its work is (`branch`, `diff_stat`, `session_dir`) and ours."""

    id: str
    is_error: bool
    result: str
    num_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    total_cost_usd: float = 0.0
    duration_ms: int = 0  # the whole task: checkout, agent, commit
    branch: str = ""
    diff_stat: str = ""
    session_dir: str = ""
    session_id: str = ""
    subtype: str = "error_during_execution"
    stop_reason: str = ""
    cache_hit_rate: float = 0.0
    repo: str = ""
    base: str = ""  # the commit the branch started from
    commit: str = ""  # the branch's head once the work was committed
    worktree: str = ""
    attempts: int = 1
    permission_denials: tuple[dict[str, Any], ...] = ()  # as -p's: {tool_name, tool_use_id, tool_input, …}
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "is_error": self.is_error,
            "result": self.result,
            "num_turns": self.num_turns,
            "usage": self.usage.to_json(),
            "total_cost_usd": self.total_cost_usd,
            "duration_ms": self.duration_ms,
            "branch": self.branch,
            "diff_stat": self.diff_stat,
            "session_dir": self.session_dir,
            "session_id": self.session_id,
            "subtype": self.subtype,
            "stop_reason": self.stop_reason,
            "cache_hit_rate": self.cache_hit_rate,
            "repo": self.repo,
            "base": self.base,
            "commit": self.commit,
            "worktree": self.worktree,
            "attempts": self.attempts,
            "permission_denials": list(self.permission_denials),
            "errors": list(self.errors),
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        def number(key: str) -> float:
            value = data.get(key)
            return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

        usage = data.get("usage")
        denials = data.get("permission_denials")  # a count in rows written before it was the list
        denials = denials if isinstance(denials, list) else []
        return cls(
            id=str(data.get("id", "")),
            is_error=bool(data.get("is_error", True)),
            result=text("result"),
            num_turns=int(number("num_turns")),
            usage=Usage.from_json(usage if isinstance(usage, dict) else None),
            total_cost_usd=float(number("total_cost_usd")),
            duration_ms=int(number("duration_ms")),
            branch=text("branch"),
            diff_stat=text("diff_stat"),
            session_dir=text("session_dir"),
            session_id=text("session_id"),
            subtype=text("subtype"),
            stop_reason=text("stop_reason"),
            cache_hit_rate=float(number("cache_hit_rate")),
            repo=text("repo"),
            base=text("base"),
            commit=text("commit"),
            worktree=text("worktree"),
            attempts=int(number("attempts")) or 1,
            permission_denials=tuple(d for d in denials if isinstance(d, dict)),
        )


@dataclass(frozen=True)
class Earlier:
    """What a results file says already: each task's last row, and the lines it could not read."""

    rows: dict[str, Row]
    problems: tuple[str, ...] = ()

    def skip(self, task_id: str, *, retry_failed: bool) -> bool:
        row = self.rows.get(task_id)
        return row is not None and not (retry_failed and row.is_error)


def read_results(path: Path) -> Earlier:
    """The rows of the results file at `path` (none when it does not exist yet). A line that is not
    a row — a crash tore it — is named, and its task runs again."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return Earlier({})
    rows: dict[str, Row] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            problems.append(f"{path.name} line {number}: not a result; ignored (its task runs again)")
            continue
        rows[data["id"]] = Row.from_json(data)
    return Earlier(rows, tuple(problems))


class ResultsFile:
    """Appends rows, each one whole line, flushed and synced before the next task is counted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - open for the batch's length
        self._fh.seek(0, os.SEEK_END)
        if self._fh.tell() > 0:
            self._fh.seek(self._fh.tell() - 1)
            last = self._fh.read(1)
            self._fh.seek(0, os.SEEK_END)
            if last != "\n":  # a torn last line: the next row starts on a line of its own
                self._fh.write("\n")

    def append(self, row: Row) -> None:
        self._fh.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()
