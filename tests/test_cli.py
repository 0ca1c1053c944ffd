"""The CLI as a person runs it: `agent -p`, `--output-format`, `--continue`, `sessions`, `--version`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.e2e import clean_env, run_agent

SCRIPT = {
    "responses": [
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
        {
            "tool_calls": [
                {
                    "name": "edit_file",
                    "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"},
                }
            ]
        },
        {"text": "Fixed the sign in add()."},
        {"text": "We fixed add() earlier."},
    ]
}


def agent(workspace: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_agent(workspace, clean_env(workspace, ".no-config"), *args, stdin=stdin, timeout=120)


def write_script(workspace: Path) -> str:
    path = workspace.parent / "script.yaml"
    path.write_text(yaml.safe_dump(SCRIPT))
    return str(path)


def test_version_is_fast_path():
    out = subprocess.run([sys.executable, "-m", "agent_cli.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("agent ")


def test_print_json_then_continue(workspace):
    script = write_script(workspace)
    out = agent(
        workspace, "-p", "fix add", "--script", script, "--permission-mode", "yolo", "--output-format", "json"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "Fixed the sign in add()."
    assert data["is_error"] is False and data["num_turns"] == 3
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        assert key in data["usage"]
    assert "total_cost_usd" in data and data["context"]["budget"] > 0
    assert (workspace / "app.py").read_text().count("a + b") == 1
    # --continue goes on in the same session (the scripted provider restarts its script, so give it one)
    cont = agent(
        workspace, "-p", "what did we do?", "--continue", "--script", script, "--output-format", "json"
    )
    assert cont.returncode == 0, cont.stderr
    assert json.loads(cont.stdout)["session_id"] == data["session_id"]
    events = (workspace / ".agent" / "sessions" / data["session_id"] / "events.jsonl").read_text()
    assert events.count('"type":"user"') == 2
    listing = agent(workspace, "sessions")
    assert data["session_id"] in listing.stdout and "fix add" in listing.stdout


def test_headless_denials_are_reported_and_text_output(workspace):
    script = write_script(workspace)
    out = agent(workspace, "-p", "fix add", "--script", script)  # default mode ask: the edit is denied
    assert out.returncode == 0
    assert "denied: edit_file app.py" in out.stderr
    assert out.stdout.strip() == "Fixed the sign in add()."
    assert "a - b" in (workspace / "app.py").read_text()


def test_stream_json_prints_one_event_per_line(workspace):
    script = write_script(workspace)
    out = agent(
        workspace,
        "-p",
        "fix add",
        "--script",
        script,
        "--permission-mode",
        "yolo",
        "--output-format",
        "stream-json",
    )
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    types = [e["type"] for e in lines]
    assert (types[0], lines[0]["subtype"]) == ("system", "init")  # Claude Code's shapes ...
    assert types[-1] == "result" and lines[-1]["result"] == "Fixed the sign in add()."
    assert {line["session_id"] for line in lines} == {lines[0]["session_id"]}  # ... each with the id
    results = [e["message"]["content"][0] for e in lines if e["type"] == "user"]
    assert [r["type"] for r in results] == ["tool_result", "tool_result"] and "tool_started" in types
    contexts = [json.dumps(e, sort_keys=True) for e in lines if e["type"] == "context"]
    assert contexts and len(contexts) == len(set(contexts)), "each context change is reported once"
    assert lines[-1]["num_turns"] == sum(t == "assistant" for t in types) == 3


def test_errors_exit_non_zero_with_a_clear_message(workspace):
    out = agent(workspace, "-p", "hi")  # the anthropic provider without a key
    assert out.returncode != 0 and "ANTHROPIC_API_KEY" in out.stderr
    out = agent(workspace, "-p", "hi", "--continue", "--demo")
    assert out.returncode != 0 and "no earlier session" in out.stderr
    out = agent(workspace, "-p", "hi", "--permission-mode", "sometimes", "--demo")
    assert out.returncode != 0 and "permission mode" in out.stderr


def test_max_turns_is_an_error_as_claude_code_reports_it(workspace):
    script = workspace.parent / "forever.yaml"
    script.write_text(yaml.safe_dump({"responses": [{"tool_calls": [{"name": "ls", "input": {}}]}] * 5}))
    out = agent(workspace, "-p", "go", "--script", str(script), "--max-turns", "2", "--output-format", "json")
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    assert data["is_error"] is True and data["stop_reason"] == "max_turns" and data["num_turns"] == 2


def test_demo_runs_offline(workspace):
    out = agent(workspace, "-p", "look around", "--demo", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert "demo run" in out.stdout


def test_replay_reports_bad_input_without_a_traceback(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"torn')
    out = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "replay", str(empty)], capture_output=True, text=True
    )
    assert out.returncode == 2 and "nothing to replay" in out.stderr and "Traceback" not in out.stderr
    assert "(1 unreadable line(s) skipped)" in out.stderr  # the file was not empty: say why it reads so
    fixture = Path(__file__).parent / "replay" / "fixtures" / "merged.jsonl"
    out = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "replay", str(fixture), "--policy", "bogus"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "unknown policy" in out.stderr and "default" in out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "replay", str(fixture), "--json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and json.loads(out.stdout)["integrity"]["orphan_tool_uses"] == 0


def test_sessions_piped_is_plain_text_with_full_ids_and_the_prompt_as_typed(workspace):
    script = write_script(workspace)
    out = agent(workspace, "-p", "[bold]fix[/bold] add [red", "--script", script, "--output-format", "json")
    assert out.returncode == 0, out.stderr
    session_id = json.loads(out.stdout)["session_id"]
    listing = agent(workspace, "sessions")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr
    (line,) = listing.stdout.splitlines()
    assert line.split("\t")[0] == session_id and line.endswith("\t1\t[bold]fix[/bold] add [red")


def test_sessions_on_a_terminal_show_markup_in_prompts_as_text(workspace, monkeypatch, capsys):
    from agent_cli.agent.api import SessionInfo
    from agent_cli.cli.commands import print_sessions as _print_sessions

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    info = SessionInfo(
        "20260101-000000-abcdef", "2026-01-01T00:00:00+00:00", "[bold]fix[/bold] it [/x]", 1, ""
    )
    _print_sessions(None, [info])
    shown = capsys.readouterr().out
    assert "[bold]fix[/bold] it [/x]" in shown and "20260101-000000-abcdef" in shown


def test_an_unwritable_sessions_directory_is_one_clear_line(workspace):
    (workspace / ".agent").write_text("not a directory")
    for args in (["-p", "hi", "--demo"], ["--demo"]):  # headless, and the TUI before it paints
        out = agent(workspace, *args)
        assert out.returncode == 2, out.stderr
        assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
        assert "cannot write sessions to" in out.stderr and ".agent" in out.stderr


def test_fork_session_needs_a_session_to_copy(workspace):
    out = agent(workspace, "-p", "hi", "--demo", "--fork-session")
    assert out.returncode == 2 and "--fork-session needs --continue or --resume" in out.stderr


def test_each_subcommands_usage_names_what_it_takes_and_no_prompt(workspace):
    """`agent "PROMPT"` takes a prompt; its subcommands do not, and their help must not offer one."""
    for command, usage in (
        (["sessions"], "agent sessions [OPTIONS]"),
        (["doctor"], "agent doctor [OPTIONS]"),
        (["acp"], "agent acp [OPTIONS]"),
        (["replay"], "agent replay [OPTIONS] {SESSION.jsonl}"),
        (["batch"], "agent batch [OPTIONS] {TASKS.jsonl}"),
        (["mcp"], "agent mcp [OPTIONS] COMMAND [ARGS]..."),
        (["mcp", "list"], "agent mcp list [OPTIONS]"),
    ):
        assert usage_line(agent(workspace, *command, "--help").stdout) == f"Usage: {usage}"
    assert (
        usage_line(agent(workspace, "--help").stdout) == "Usage: agent [OPTIONS] [PROMPT] COMMAND [ARGS]..."
    )


def usage_line(help_text: str) -> str:
    line = next(line for line in help_text.splitlines() if "Usage:" in line)
    return " ".join(line.split())


def test_an_empty_or_a_second_session_flag_is_refused_not_passed_over(workspace):
    """`--resume ""` started a new session, and `--continue --resume X` ignored X, without a word."""
    empty = agent(workspace, "-p", "hi", "--demo", "--resume", "", "--output-format", "json")
    assert (
        empty.returncode == 2 and "--resume (resume) needs a session id" in json.loads(empty.stdout)["result"]
    )
    both = agent(
        workspace, "-p", "hi", "--demo", "--continue", "--resume", "20260101", "--output-format", "json"
    )
    assert both.returncode == 2 and "give one of them" in json.loads(both.stdout)["result"]
    assert not (workspace / ".agent" / "sessions").exists() or not any(
        (workspace / ".agent" / "sessions").iterdir()
    )


def test_a_removed_current_directory_is_one_line_not_a_traceback(workspace):
    gone = workspace / "gone"
    gone.mkdir()
    for args in (["-p", "hi", "--demo"], ["sessions"]):
        line = " ".join(["cd gone && rmdir ../gone && exec", sys.executable, "-m agent_cli.cli", *args])
        out = subprocess.run(
            ["sh", "-c", line], cwd=workspace, env=clean_env(workspace), capture_output=True, text=True
        )
        gone.mkdir(exist_ok=True)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert (
            out.stderr.strip()
            == "agent: the current directory no longer exists; cd to your project and run agent again"
        )


def test_a_bad_option_in_a_json_run_is_the_result_object_too(workspace):
    """claude -p's contract: every failure prints the result, a bad option as much as a missing key."""
    for bad in (["--bogus-flag"], ["--budget-tokens", "abc"], ["--input-format", "bogus"]):
        out = agent(workspace, "-p", "hi", "--demo", "--output-format", "json", *bad)
        assert out.returncode == 2, out.stderr
        data = json.loads(out.stdout)
        assert data["is_error"] and data["type"] == "result" and "Traceback" not in out.stderr
        assert bad[0] in data["result"] and "see `agent --help`" in out.stderr
    out = agent(workspace, "-p", "hi", "--demo", "--output-format", "json", "--max-turns", "0")
    assert out.returncode == 2 and "Traceback" not in out.stderr  # not "no cap": refused
    data = json.loads(out.stdout)
    assert data["is_error"] and "--max-turns (max_turns) must be at least 1, not 0" in data["result"]
    helped = agent(workspace, "-p", "--output-format", "json", "--help")
    assert helped.returncode == 0 and "Usage:" in helped.stdout


def test_a_budget_the_fixed_prompt_alone_fills_is_said_at_the_start(workspace):
    """--budget-tokens 1000 passes the floor but leaves 800 tokens for a ~3.8k system prompt and tools."""
    out = agent(workspace, "-p", "hi", "--demo", "--budget-tokens", "1000", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    (said,) = [w for w in json.loads(out.stdout)["warnings"] if w.startswith("the context budget")]
    assert "(800 tokens) is no more than the system prompt and tools alone" in said
    roomy = agent(workspace, "-p", "hi", "--demo", "--budget-tokens", "20000", "--output-format", "json")
    assert not [w for w in json.loads(roomy.stdout)["warnings"] if w.startswith("the context budget")]
