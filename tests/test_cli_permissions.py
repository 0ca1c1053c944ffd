"""Permission rules and plan mode through the real CLI (`agent -p`, scripted model): what a person sees."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.e2e import agent as e2e_agent
from tests.e2e import denials as denials_of
from tests.e2e import tool_results
from tests.fakeapi.replies import ToolUse, reply, text
from tests.fakeapi.server import FakeAnthropic
from tests.test_cli import agent
from tests.tools.bypass_table import CASES, ECHO, Case

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
    denials = denials_of(data)
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
    denials = denials_of(json.loads(out.stdout))
    assert "Bash(echo hi) (--disallowed-tools)" in denials[0]  # allowed by echo:*, denied by this
    assert "Bash(echo hi) (--disallowed-tools)" in denials[2]


def test_rule_options_take_several_values_as_claude_codes_do_and_a_typo_is_said(workspace: Path) -> None:
    """`--disallowedTools "Bash(rm:*)" Write` made `Write` part of the prompt: Write was not denied."""
    write = {
        "responses": [{"tool_calls": [{"name": "write_file", "input": {"path": "x.txt", "content": "x"}}]}]
    }
    script = _script(workspace, write)
    out = agent(
        workspace, "-p", "go", "--script", script, "--permission-mode", "yolo", "--output-format", "json",
        "--disallowedTools", "Bash(rm:*)", "Write", "--allowed-tools", "Raed(x)",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    denials = denials_of(json.loads(out.stdout))
    assert len(denials) == 1 and "Write (--disallowed-tools)" in denials[0], denials
    assert not (workspace / "x.txt").exists()
    log = next((workspace / ".agent" / "sessions").iterdir()) / "events.jsonl"
    assert '"go"' in log.read_text() and "go Write" not in log.read_text()  # the prompt is only "go"
    assert "allow rule 'Raed(x)' names no tool there is" in out.stderr


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
    denials = denials_of(json.loads(out.stdout))
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
    assert len(denials_of(data)) == 1 and "plan mode" in denials_of(data)[0]
    assert (workspace / "app.py").read_text() == before


# -- rules that see the whole command (issue 18, item 4), through the real CLI and the API server --


def _bash_calls(server: FakeAnthropic, commands: list[str]) -> None:
    """The model calls bash once for each command, in one answer, then says it is done."""
    server.push(reply(*[ToolUse("bash", {"command": c}) for c in commands]))
    server.push(text("Done."))


def _pwned(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.rglob("pwned*"))


def test_substitutions_and_assignments_a_prefix_rule_does_not_cover_are_denied(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    attacks = [
        "echo ${x:-$(touch pwned1)}",
        "GIT_EXTERNAL_DIFF='touch pwned2 #' git diff",
        'echo "${a[$(touch pwned3)]}"',
        "echo hi <<EOF\n$(touch pwned4)\nEOF",
        "timeout 5 touch pwned5",
    ]
    _bash_calls(fake_anthropic, [*attacks, "echo fine", "LANG=C git diff --stat"])
    out = e2e_agent(
        workspace,
        fake_anthropic,
        "-p",
        "go",
        "--allowed-tools",
        "Bash(echo:*) Bash(git diff:*)",
        "--output-format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    denials = denials_of(json.loads(out.stdout))
    assert len(denials) == len(attacks), denials
    for attack, denial in zip(attacks, denials, strict=True):
        assert attack.splitlines()[0] in denial
    assert "touch pwned1" in denials[0] and "is not allowed by any rule" in denials[0]
    assert "GIT_EXTERNAL_DIFF" in denials[1] and "not allowed by a prefix rule" in denials[1]
    assert "subscript" in denials[2]
    assert _pwned(workspace) == []
    results = [r for r in tool_results(fake_anthropic) if "Permission denied" not in r]
    assert results[0].strip() == "fine"  # what the rules allow still runs


def _table_group(rules: tuple[str, ...]) -> list[Case]:
    return [
        c
        for c in CASES
        if c.allow == rules and not c.deny and not c.ask and not c.links and c.mode == "ask" and c.run
    ]


def test_the_bypass_table_through_the_cli(workspace: Path, fake_anthropic: FakeAnthropic) -> None:
    """Every row of the table that has only `Bash(echo:*)` in force, sent by the model in one go:
    headless, each row the table says asks is denied and nothing in it ran; each allowed row ran."""
    rows = _table_group(ECHO)
    assert len(rows) >= 25
    _bash_calls(fake_anthropic, [c.command for c in rows])
    out = e2e_agent(
        workspace, fake_anthropic, "-p", "go", "--allowed-tools", *ECHO, "--output-format", "json"
    )
    assert out.returncode == 0, out.stderr
    denials = denials_of(json.loads(out.stdout))
    refused = [c for c in rows if c.expect != "allow"]
    assert len(denials) == len(refused), denials
    for case, denial in zip(refused, denials, strict=True):
        assert case.command.splitlines()[0] in denial, (case.command, denial)
    assert _pwned(workspace) == []
    assert len(tool_results(fake_anthropic)) == len(rows)


def test_a_deny_rule_sees_a_redirect_target_through_the_cli(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key").write_text("k\n")
    _bash_calls(fake_anthropic, ["echo x > secrets/key", "echo y > notes.txt"])
    out = e2e_agent(
        workspace,
        fake_anthropic,
        "-p",
        "go",
        "--permission-mode",
        "auto-edit",
        "--allowed-tools",
        "Bash(echo:*)",
        "--disallowed-tools",
        "Edit(secrets/**)",
        "--output-format",
        "json",
    )
    denials = denials_of(json.loads(out.stdout))
    assert len(denials) == 1 and "Edit(secrets/**) (--disallowed-tools)" in denials[0], denials
    assert (workspace / "secrets" / "key").read_text() == "k\n"
    assert (workspace / "notes.txt").read_text() == "y\n"


def test_a_call_matching_an_ask_and_a_deny_rule_is_refused_by_the_deny_rule(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Bash(rm:*)"], "deny": ["Bash(rm -rf:*)"]}})
    )
    (workspace / "build").mkdir()
    _bash_calls(fake_anthropic, ["rm -rf build"])
    out = e2e_agent(
        workspace, fake_anthropic, "-p", "go", "--permission-mode", "yolo", "--output-format", "json"
    )
    denials = denials_of(json.loads(out.stdout))
    assert len(denials) == 1 and "denied by the rule Bash(rm -rf:*)" in denials[0], denials
    assert (workspace / "build").is_dir()


def test_a_refused_headless_call_is_told_the_mode_that_would_run_it(workspace: Path) -> None:
    """auto-edit was advised for bash, which auto-edit does not allow."""
    calls = [
        {"name": "bash", "input": {"command": "echo hi"}},
        {"name": "write_file", "input": {"path": "x.txt", "content": "x"}},
        {"name": "write_file", "input": {"path": ".mcp.json", "content": "{}"}},
        {"name": "bash", "input": {"command": "echo out", "dangerously_disable_sandbox": True}},
    ]
    script = _script(workspace, {"responses": [{"tool_calls": calls}, {"text": "Done."}]})
    advised = {}
    for mode in ("ask", "auto-edit", "yolo"):
        out = agent(
            workspace, "-p", "go", "--script", script, "--permission-mode", mode, "--output-format", "json"
        )
        assert out.returncode == 0, out.stderr
        log = max((workspace / ".agent" / "sessions").iterdir()) / "events.jsonl"
        events = [json.loads(line) for line in log.read_text().splitlines()]
        results = next(e for e in events if e["type"] == "tool_results")["message"]["content"]
        advised[mode] = [r["content"] for r in results]
    run_with = "Re-run agent with --permission-mode"
    assert f"{run_with} yolo," in advised["ask"][0] and f"{run_with} yolo," in advised["auto-edit"][0]
    assert f"{run_with} auto-edit or yolo," in advised["ask"][1]
    assert all("Allow it by a rule that names it" in a[2] and run_with not in a[2] for a in advised.values())
    # outside the sandbox always asks: no mode or rule runs it headless (yolo's sandbox refuses it)
    only = "No mode or rule allows it: only a person can"
    assert only in advised["ask"][3] and only in advised["auto-edit"][3] and run_with not in advised["ask"][3]


def test_a_read_deny_rule_keeps_a_file_out_of_grep_as_out_of_read_file(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The auditor's case: ask mode, an untrusted workspace whose settings deny Read(./.env); grep over
    the workspace finds the key in app.py's reading of it, never in .env, and says it left a file out."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    (workspace / ".env").write_text("API_KEY=sk-live-123\n")
    (workspace / "app.py").write_text("key = env('API_KEY')\n")
    grep = {"pattern": "API_KEY", "output_mode": "content"}
    fake_anthropic.push(reply(ToolUse("grep", grep), ToolUse("read_file", {"path": ".env"})))
    fake_anthropic.push(text("Done."))
    out = e2e_agent(workspace, fake_anthropic, "-p", "go", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert "sk-live-123" not in json.dumps(fake_anthropic.requests[-1])
    found, read = tool_results(fake_anthropic)
    assert found.splitlines() == [
        "app.py",
        "1:key = env('API_KEY')",
        "(1 file left out: a deny rule forbids reading it)",
    ]
    assert "denied by the rule Read(./.env) (.claude/settings.json)" in read
