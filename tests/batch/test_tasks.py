"""The batch file: each line a task, a bad line named by its number and skipped, the rest kept."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.batch.tasks import read_tasks


def write(path: Path, *lines: str | dict) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_good_lines_become_tasks_and_bad_ones_are_named_by_number(tmp_path):
    path = write(
        tmp_path / "tasks.jsonl",
        {"id": "a", "prompt": "fix it", "repo": "repo"},
        "",
        "{oops",
        {"id": "b", "prompt": "x"},
        {"id": "a", "prompt": "again", "repo": "repo"},
        {"id": "../x", "prompt": "x", "repo": "repo"},
        {"id": "c", "prompt": "x", "repo": "repo", "options": {"max_turns": "9"}},
        {"id": "d", "prompt": "x", "repo": "repo", "colour": "red"},
        [1, 2],
        {"id": 7, "prompt": "numbers are ids too", "repo": "https://example.com/r.git", "ref": "v1"},
    )

    found = read_tasks(path)

    assert [t.id for t in found.tasks] == ["a", "7"]
    assert found.problems == (
        "tasks.jsonl line 3: not JSON (Expecting property name enclosed in double quotes at column 2); skipped",
        "tasks.jsonl line 4: no repo (a git URL or a path); skipped",
        "tasks.jsonl line 5: id 'a' is already on line 1; skipped",
        "tasks.jsonl line 6: id '../x': give letters, digits, '.', '_' or '-' (it names a branch and a folder); skipped",
        "tasks.jsonl line 7: options: max_turns takes a int; skipped",
        "tasks.jsonl line 8: unknown key 'colour' (a task has id, options, prompt, ref, repo); skipped",
        "tasks.jsonl line 9: not a JSON object; skipped",
    )


def test_a_path_is_read_from_the_batch_files_folder_and_a_url_stays_a_url(tmp_path):
    (tmp_path / "jobs").mkdir()
    path = write(
        tmp_path / "jobs" / "tasks.jsonl",
        {"id": "a", "prompt": "x", "repo": "../repo"},
        {"id": "b", "prompt": "x", "repo": "git@example.com:team/repo.git"},
        {"id": "c", "prompt": "x", "repo": "file:///srv/repo.git", "ref": "main"},
    )

    a, b, c = read_tasks(path).tasks

    assert a.repo == str(tmp_path / "repo") and not a.is_url
    assert b.is_url and b.repo == "git@example.com:team/repo.git"
    assert c.is_url and c.ref == "main" and c.branch == "agent/batch/c"


def test_options_are_those_a_task_may_set(tmp_path):
    path = write(
        tmp_path / "tasks.jsonl",
        {
            "id": "a",
            "prompt": "x",
            "repo": "r",
            "options": {"model": "m", "allowed_tools": ["Edit", "Bash(git diff:*)"], "max_turns": 3},
        },
        {"id": "b", "prompt": "x", "repo": "r", "options": {"script": "evil.yaml"}},
        {"id": "c", "prompt": "x", "repo": "r", "options": {"max_turns": 0}},
        {"id": "d", "prompt": "x", "repo": "r", "ref": "--upload-pack=touch /tmp/x"},
    )

    found = read_tasks(path)

    assert found.tasks[0].options == (
        ("model", "m"),
        ("allowed_tools", ("Edit", "Bash(git diff:*)")),
        ("max_turns", 3),
    )
    assert [p.split(":", 1)[0] for p in found.problems] == [
        "tasks.jsonl line 2",
        "tasks.jsonl line 3",
        "tasks.jsonl line 4",
    ]
    assert "'script' is not one a task may set" in found.problems[0]
    assert "ref '--upload-pack=touch /tmp/x'" in found.problems[2]
