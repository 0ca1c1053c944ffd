"""Permission rules and plan mode through the real CLI (`agent -p`, scripted model): what a person sees."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.test_cli import agent

BASH_CALLS = {
    "responses": [
        {
            "text": "Running.",
            "tool_calls": [
                {"name": "bash", "input": {"command": "echo hi > /dev/null && echo ran >> /dev/stdout"}},
                {"name": "bash", "input": {"command": "echo x > f.txt"}},
                {"name": "bash", "input": {"command": "echo hi; rm f.txt"}},
                {"name": "bash", "input": {"command": "echo $(rm f.txt)"}},
            ],
        },
        {"text": "Done."},
    ]
}


def _script(workspace: Path, data: dict) -> str:
    path = workspace.parent / "perm-script.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_allowed_tools_allow_only_lines_made_entirely_of_allowed_commands(workspace: Path) -> None:
    (workspace / "f.txt").write_text("important\n")
    script = _script(workspace, BASH_CALLS)
    out = agent(
        workspace,
        "-p",
        "go",
        "--script",
        script,
        "--allowed-tools",
        "bash(echo:*)",
        "--output-format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    denials = data["permission_denials"]
    assert len(denials) == 3, denials
    assert "echo x > f.txt" in denials[0] and "edit permission" in denials[0]
    assert "echo hi; rm f.txt" in denials[1] and "`rm f.txt` is not allowed" in denials[1]
    assert "echo $(rm f.txt)" in denials[2]
    assert (workspace / "f.txt").read_text() == "important\n"
    assert "denied: bash echo x > f.txt" in out.stderr  # reported as it happens, too
    # the first command ran: its output is the first tool result the model got
    log = next((workspace / ".agent" / "sessions").iterdir()) / "events.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines()]
    results = next(e for e in events if e["type"] == "tool_results")["message"]["content"]
    assert results[0]["content"] == "ran\n" and not results[0].get("is_error")
    assert all(r.get("is_error") for r in results[1:])


def test_a_deny_rule_beats_an_allow_rule(workspace: Path) -> None:
    script = _script(workspace, BASH_CALLS)
    out = agent(
        workspace,
        "-p",
        "go",
        "--script",
        script,
        "--output-format",
        "json",
        "--allowed-tools",
        "Bash(echo:*)",
        "--disallowed-tools",
        "Bash(echo hi)",
    )
    denials = json.loads(out.stdout)["permission_denials"]
    assert "Bash(echo hi) (--disallowed-tools)" in denials[0]  # allowed by echo:*, denied by this
    assert "Bash(echo hi) (--disallowed-tools)" in denials[2]


def test_a_malformed_rule_is_one_line_and_the_rest_works(workspace: Path) -> None:
    script = _script(workspace, BASH_CALLS)
    out = agent(workspace, "-p", "go", "--script", script, "--allowed-tools", "Bash(echo:*),Bash(oops")
    assert out.returncode == 0
    bad = [line for line in out.stderr.splitlines() if "Bash(oops" in line]
    assert len(bad) == 1 and "--allowed-tools" in bad[0]
    assert out.stderr.count("denied:") == 3


def test_settings_json_deny_applies_even_untrusted(workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}})
    )
    script = _script(workspace, BASH_CALLS)
    out = agent(
        workspace, "-p", "go", "--script", script, "--permission-mode", "yolo", "--output-format", "json"
    )
    denials = json.loads(out.stdout)["permission_denials"]
    assert len(denials) == 2 and all("Bash(rm:*) (.claude/settings.json)" in d for d in denials)
    assert (workspace / "f.txt").exists()  # yolo wrote it; the rm was refused


def test_plan_mode_refuses_an_edit(workspace: Path) -> None:
    edit = {"name": "edit_file", "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}}
    script = _script(
        workspace,
        {
            "responses": [
                {"tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}, edit]},
                {"text": "Plan: fix the sign."},
            ]
        },
    )
    before = (workspace / "app.py").read_text()
    out = agent(
        workspace, "-p", "fix add", "--script", script, "--permission-mode", "plan", "--output-format", "json"
    )
    data = json.loads(out.stdout)
    assert data["result"] == "Plan: fix the sign."
    assert len(data["permission_denials"]) == 1 and "plan mode" in data["permission_denials"][0]
    assert (workspace / "app.py").read_text() == before
