"""A batch file: one task a line, `{"id", "prompt", "repo", "ref"?, "options"?}` in JSON.

`repo` is a git URL (cloned fresh) or a path to a local repository (a worktree is added to it); a
relative path is read from the batch file's folder. `options` are the session options a task may set
for itself, over the batch's flags: the fields of `api.Options` that say how the agent runs, never
where (no `cwd`, `resume`, `script` or `demo`). A line that is not a task is reported with its number
and skipped; the others run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# what a task's "options" may set, and the JSON types each takes
TASK_OPTIONS: dict[str, tuple[type, ...]] = {
    "model": (str,),
    "provider": (str,),
    "permission_mode": (str,),
    "allowed_tools": (str, list),
    "disallowed_tools": (str, list),
    "max_turns": (int,),
    "budget_tokens": (int,),
    "trust_workspace": (bool,),
}
KEYS = {"id", "prompt", "repo", "ref", "options"}
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # a folder name and a branch name's last part
# scheme://…, a remote helper's transport::address, or scp-like user@host:path
URL = re.compile(r"^[a-z][a-z0-9+.-]*(://|::)|^[\w.-]+@[\w.-]+:")


@dataclass(frozen=True)
class Task:
    """One task: `repo` is a URL or an absolute path; `options` the keywords it sets (TASK_OPTIONS)."""

    id: str
    prompt: str
    repo: str
    ref: str | None = None
    options: tuple[tuple[str, Any], ...] = field(default=())
    line: int = 0

    @property
    def is_url(self) -> bool:
        return is_url(self.repo)

    @property
    def branch(self) -> str:
        return f"agent/batch/{self.id}"


@dataclass(frozen=True)
class Tasks:
    """What a batch file holds: the tasks, in order, and one line per line that is not a task."""

    tasks: tuple[Task, ...]
    problems: tuple[str, ...] = ()


class BadTask(ValueError):
    pass


def is_url(repo: str) -> bool:
    return bool(URL.match(repo))


def read_tasks(path: Path) -> Tasks:
    """The tasks of the batch file at `path`. Raises OSError when it cannot be read."""
    text = path.read_text(encoding="utf-8", errors="replace")
    base = path.resolve().parent
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            task = parse_task(line, number, base)
        except BadTask as exc:
            problems.append(f"{path.name} line {number}: {exc}; skipped")
            continue
        if task.id in seen:
            problems.append(
                f"{path.name} line {number}: id {task.id!r} is already on line {seen[task.id]}; skipped"
            )
            continue
        seen[task.id] = number
        tasks.append(task)
    return Tasks(tuple(tasks), tuple(problems))


def parse_task(line: str, number: int, base: Path) -> Task:
    """One line as a Task; BadTask says what is wrong with it."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadTask(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise BadTask("not a JSON object")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise BadTask(f"unknown key {unknown[0]!r} (a task has {', '.join(sorted(KEYS))})")
    task_id = data.get("id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not ID.fullmatch(task_id) or task_id.endswith((".lock", ".")):
        raise BadTask(
            f"id {task_id!r}: give letters, digits, '.', '_' or '-' (it names a branch and a folder)"
        )
    if ".." in task_id:
        raise BadTask(f"id {task_id!r}: '..' cannot be part of a branch name")
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise BadTask("no prompt (a non-empty string)")
    repo = data.get("repo")
    if not isinstance(repo, str) or not repo.strip():
        raise BadTask("no repo (a git URL or a path)")
    ref = data.get("ref")
    if ref is not None and (not isinstance(ref, str) or not ref.strip() or ref.startswith("-")):
        raise BadTask(f"ref {ref!r}: a branch, tag or commit")
    if not is_url(repo):
        repo = str((base / Path(repo).expanduser()).resolve())
    elif repo.startswith("-"):
        raise BadTask(f"repo {repo!r}: not a URL")
    return Task(task_id, prompt, repo, ref, _options(data.get("options")), number)


def _options(raw: object) -> tuple[tuple[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise BadTask("options: a JSON object")
    out: list[tuple[str, Any]] = []
    for key, value in raw.items():
        types = TASK_OPTIONS.get(key)
        if types is None:
            raise BadTask(f"options: {key!r} is not one a task may set ({', '.join(TASK_OPTIONS)})")
        if value is None:
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join("list of strings" if t is list else t.__name__ for t in types)
            raise BadTask(f"options: {key} takes a {names}")
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                raise BadTask(f"options: {key} takes strings")
            value = tuple(value)
        if key in ("max_turns", "budget_tokens") and value <= 0:
            raise BadTask(f"options: {key} must be positive")
        out.append((key, value))
    return tuple(out)
