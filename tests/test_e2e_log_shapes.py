"""A session log line that is JSON but not of the shape it was written in (a field of the wrong type)
is a corrupt line: `--resume` skips it with one warning naming it, mends what it leaves unpaired,
and goes on — never a traceback. Each case changes one field of a real recorded session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e import clean_env, run_agent

SCRIPT = {
    "responses": [
        {
            "text": "Reading.",
            "tool_calls": [
                {"name": "read_file", "input": {"path": "app.py"}},
                {"name": "bash", "input": {"command": "echo hi"}},
            ],
            "usage": {"input_tokens": 1200, "output_tokens": 30, "cache_creation_input_tokens": 5},
        },
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"},
                },
                {"name": "todo_write", "input": {"todos": [{"content": "fix", "status": "completed"}]}},
            ]
        },
        {"text": "Fixed."},
    ]
}


def agent(workspace: Path, *args: str):
    return run_agent(workspace, clean_env(workspace), *args, timeout=120)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path, list[dict[str, Any]]]:
    """A session with tool calls, their facts, a todo list and a model switch; the workspace, a
    script to go on with, the log and its events as recorded."""
    workspace = tmp_path_factory.mktemp("shapes") / "repo"
    (workspace / ".git" / "info").mkdir(parents=True)
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    script = workspace.parent / "script.yaml"
    script.write_text(yaml.safe_dump(SCRIPT))
    (workspace.parent / "resume.yaml").write_text(yaml.safe_dump({"responses": [{"text": "Going on."}]}))
    first = agent(workspace, "-p", "fix add", "--script", str(script), "--permission-mode", "yolo",
                  "--output-format", "json")  # fmt: skip
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    switched = agent(workspace, "-p", "/model claude-haiku-4-5", "--continue", "--script", str(script))
    assert switched.returncode == 0, switched.stderr
    log = workspace / ".agent" / "sessions" / session_id / "events.jsonl"
    return (
        workspace,
        str(workspace.parent / "resume.yaml"),
        log,
        [json.loads(line) for line in log.read_text().splitlines()],
    )


def _block(block: str) -> Any:
    return lambda e: next(b for b in e["message"]["content"] if b["type"] == block and "meta" in b)


# (event type, where in it, the junk): the first event of that type gets it
CASES = [
    ("assistant", ("usage", "cache_creation_input_tokens"), "str"),
    ("assistant", ("usage", "output_tokens"), [None]),
    ("assistant", ("usage",), "str"),
    ("assistant", ("model",), [None]),
    ("assistant", (_block("tool_use"), "meta", "file"), 3),
    ("assistant", (_block("tool_use"), "meta", "tool_name"), {"x": 1}),
    ("tool_meta", ("tool_use_id",), []),
    ("tool_meta", ("meta",), [None]),
    ("tool_meta", ("meta", "lines"), ["a", None]),
    ("tool_results", (_block("tool_result"), "meta", "tool_name"), [None]),
    ("tool_results", (_block("tool_result"), "meta", "trust"), "tool"),
    ("user", (_block("text"), "meta", "tag"), [None]),
    ("user", ("ts",), "yesterday"),
    ("todo", ("todos",), None),
    ("todo", ("todos",), ["fix"]),
    ("config", ("model",), {"name": "x"}),
]


def _ids(case: tuple[str, tuple[Any, ...], Any]) -> str:
    kind, path, junk = case
    return f"{kind}.{'.'.join(p if isinstance(p, str) else 'block' for p in path)}={json.dumps(junk)}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_a_field_of_the_wrong_type_is_a_corrupt_line_and_resume_goes_on(recorded, case):
    workspace, script, log, events = recorded
    kind, path, junk = case
    events = json.loads(json.dumps(events))
    index = next(i for i, e in enumerate(events) if e["type"] == kind)
    target: Any = events[index]
    for step in path[:-1]:
        target = step(target) if callable(step) else target[step]
    target[path[-1]] = junk
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    run = agent(workspace, "-p", "go on", "--resume", log.parent.name, "--script", script, "--debug",
                "--output-format", "json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    data = json.loads(run.stdout)
    assert data["is_error"] is False and data["result"] == "Going on.", data
    named = [w for w in data["warnings"] if f"corrupt line {index + 1}:" in w]
    assert len(named) == 1, data["warnings"]
    assert not any("corrupt line" in w for w in data["warnings"] if w not in named)
