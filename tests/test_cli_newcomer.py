"""The rough edges a newcomer hit on the command line (issue 20, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e import clean_env, run_agent


def agent(workspace: Path, *args: str):
    return run_agent(workspace, clean_env(workspace), *args, timeout=120)


def _session_of(out) -> str:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["session_id"]


def test_continue_goes_on_in_the_session_used_last_not_the_newest(workspace):
    s1 = _session_of(agent(workspace, "-p", "first task", "--demo", "--output-format", "json"))
    s2 = _session_of(agent(workspace, "-p", "second task", "--demo", "--output-format", "json"))
    assert s1 < s2  # S2 is the newest created
    # the person goes back to S1 ...
    assert (
        _session_of(agent(workspace, "-p", "more on S1", "--resume", s1, "--demo", "--output-format", "json"))
        == s1
    )
    # ... so --continue goes on there, not in S2
    assert (
        _session_of(agent(workspace, "-p", "and now?", "--continue", "--demo", "--output-format", "json"))
        == s1
    )
    # opening S2 again, even without a prompt, makes it the one used last
    assert agent(workspace, "-p", "/cost", "--resume", s2, "--demo").returncode == 0
    assert (
        _session_of(agent(workspace, "-p", "again", "--continue", "--demo", "--output-format", "json")) == s2
    )
    # the picker and `agent sessions` list the one used last first
    listing = agent(workspace, "sessions").stdout.splitlines()
    assert listing[0].startswith(s2) or s2 in listing[0], listing


def test_summary_of_an_empty_conversation_is_one_clear_line(workspace):
    out = agent(workspace, "-p", "/summary", "--demo")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Nothing to summarize yet: the conversation is empty. Send a prompt first."
    assert "internal error" not in out.stderr and "ValueError" not in out.stderr + out.stdout


HOOK = {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}


def _settings(workspace: Path, data: dict) -> None:
    (workspace / ".claude").mkdir(exist_ok=True)
    (workspace / ".claude" / "settings.json").write_text(json.dumps(data))


def test_untrusted_settings_are_said_truthfully_deny_rules_apply(workspace):
    _settings(workspace, {"hooks": HOOK, "permissions": {"deny": ["Bash(rm:*)"]}})
    out = agent(workspace, "-p", "/permissions", "--demo")
    assert out.returncode == 0, out.stderr
    assert "not using the hooks of .claude/settings.json (its deny rules apply)" in out.stderr
    assert "ignoring .claude/settings.json" not in out.stderr
    assert "| `Bash(rm:*)` | deny | .claude/settings.json |" in out.stdout  # and it does apply


def test_a_settings_file_of_deny_rules_only_waits_for_no_trust(workspace):
    _settings(workspace, {"permissions": {"deny": ["Bash(rm:*)"]}})
    out = agent(workspace, "-p", "/permissions", "--demo")
    assert out.returncode == 0, out.stderr
    assert "not trusted" not in out.stderr and "Bash(rm:*)" in out.stdout


def test_a_malformed_mcp_json_in_an_untrusted_workspace_is_one_line(workspace):
    (workspace / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "true",}')
    out = agent(workspace, "-p", "hi", "--demo")
    lines = [line for line in out.stderr.splitlines() if ".mcp.json" in line]
    assert lines == [
        "agent: .mcp.json does not parse (invalid JSON at line 1 column 41: Expecting property name "
        "enclosed in double quotes): its MCP servers are not used"
    ], out.stderr
    listing = agent(workspace, "mcp", "list")
    assert "No MCP servers in use: .mcp.json does not parse" in listing.stdout
    assert "No MCP servers configured" not in listing.stdout


def test_mcp_list_says_an_mcp_json_is_there_but_not_used_untrusted(workspace):
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "true"}}}))
    listing = agent(workspace, "mcp", "list")
    assert listing.returncode == 0, listing.stderr
    assert "not used because this workspace is not trusted" in listing.stdout
    assert "No MCP servers configured" not in listing.stdout


def test_context_explains_the_budget_with_the_reserved_output(workspace):
    out = agent(workspace, "-p", "/context", "--demo", "--budget-tokens", "12000")
    assert out.returncode == 0, out.stderr
    assert "/ 9,600 tokens in use" in out.stdout
    assert "12,000 (budget_tokens, or the model's window when smaller) less 2,400 kept free" in out.stdout
