"""Hook definitions and single hook runs: Claude Code's matcher, exit codes and JSON output."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

from agent_cli.core.types import ToolCall
from agent_cli.extensions.hooks.api import PromptOutcome, SubagentHooks
from agent_cli.extensions.hooks.process import interpret, run_hook
from agent_cli.extensions.hooks.runner import CommandHooks, HookIdentity
from agent_cli.extensions.hooks.spec import HookCommand, Matcher, parse_hooks, select


def py(code: str) -> str:
    """A hook command running `code` with this interpreter."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


@pytest.mark.parametrize(
    ("pattern", "names", "hit"),
    [
        ("Bash", ("bash", "Bash"), True),
        ("Bash", ("read_file", "Read"), False),
        ("Edit|Write", ("write_file", "Write"), True),
        ("Edit|Write", ("edit_file", "Edit"), True),
        ("Edit|Write", ("bash", "Bash"), False),
        ("Bas", ("bash", "Bash"), False),  # a plain name is exact, not a prefix
        ("mcp__time__.*", ("mcp__time__now", "mcp__time__now"), True),
        ("read_.*", ("read_file", "Read"), True),  # our own names match too
        ("", ("bash", "Bash"), True),
        ("*", ("ls", "LS"), True),
    ],
)
def test_matcher(pattern, names, hit):
    assert Matcher(pattern).matches(*names) is hit


def test_parse_reports_each_problem_and_keeps_the_rest():
    table = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard", "timeout": 5}]},
            {"matcher": "(", "hooks": [{"type": "command", "command": "x"}]},
            {"matcher": "Write", "hooks": [{"type": "prompt", "prompt": "judge"}, {"command": "ok"}]},
        ],
        "PreTool": [],
        "Stop": "nope",
        "SessionStart": [{"matcher": "startup", "hooks": [{"command": "hi", "timeout": -1}]}],
    }
    groups, warnings = parse_hooks(table, "/ws/.claude/settings.json")
    assert [(g.event, g.matcher.pattern, [c.command for c in g.commands]) for g in groups] == [
        ("PreToolUse", "Bash", ["guard"]),
        ("PreToolUse", "Write", ["ok"]),
        ("SessionStart", "startup", ["hi"]),
    ]
    assert groups[0].commands[0].timeout == 5 and groups[2].commands[0].timeout == 60
    assert len(warnings) == 5 and all(w.startswith("/ws/.claude/settings.json: ") for w in warnings)
    joined = "\n".join(warnings)
    for words in (
        "not a valid regular expression",
        "'prompt' is not supported",
        "unknown hook event 'PreTool'",
    ):
        assert words in joined
    assert parse_hooks([1], "f")[1] == ['f: "hooks" must be an object of events; ignored']


def test_select_runs_each_command_once_and_ignores_matchers_where_claude_code_does():
    groups, _ = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"command": "a"}]},
                {"matcher": "*", "hooks": [{"command": "a"}, {"command": "b"}]},
            ],
            "Stop": [{"matcher": "Whatever", "hooks": [{"command": "s"}]}],
        },
        "f",
    )
    assert [c.command for c in select(groups, "PreToolUse", "bash", "Bash")] == ["a", "b"]
    assert [c.command for c in select(groups, "Stop")] == ["s"]  # Stop has no matcher


async def _interpret(tmp_path: Path, event: str, code: str, timeout: float = 30):
    run = await run_hook(HookCommand(py(code), timeout), "{}", tmp_path, {"PATH": "/usr/bin:/bin"})
    return interpret(event, run)


async def test_exit_codes(tmp_path):
    blocked = await _interpret(tmp_path, "PreToolUse", "import sys; sys.stderr.write('no rm'); sys.exit(2)")
    assert blocked.block == "no rm" and not blocked.warning
    failed = await _interpret(tmp_path, "PreToolUse", "import sys; sys.stderr.write('oops'); sys.exit(1)")
    assert failed.block is None and "failed with exit code 1: oops" in failed.warning
    plain = await _interpret(tmp_path, "UserPromptSubmit", "print('branch: main')")
    assert plain.context == "branch: main" and plain.block is None
    assert (await _interpret(tmp_path, "PreToolUse", "print('chatter')")).context == ""
    # exit 2 where nothing can be blocked: the person reads stderr
    note = await _interpret(tmp_path, "Notification", "import sys; sys.stderr.write('hm'); sys.exit(2)")
    assert note.block is None and note.message == "hm"


async def test_garbage_json_is_a_warning_and_changes_nothing(tmp_path):
    reply = await _interpret(tmp_path, "PreToolUse", "print('{\"decision\": block')")
    assert reply.block is None and reply.permission is None
    assert "printed invalid JSON" in reply.warning


async def test_json_output_as_claude_code_documents_it(tmp_path):
    def out(data):
        return f"print({json.dumps(json.dumps(data))})"

    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "not prod"}}
    reply = await _interpret(tmp_path, "PreToolUse", out(deny))
    assert (reply.block, reply.permission) == ("not prod", "deny")
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}
    reply = await _interpret(tmp_path, "PreToolUse", out(ask))
    assert (reply.block, reply.permission, reply.permission_reason) == (None, "ask", "check")
    assert (await _interpret(tmp_path, "PreToolUse", out({"decision": "approve"}))).permission == "allow"
    stop = await _interpret(tmp_path, "Stop", out({"decision": "block", "reason": "tests fail"}))
    assert stop.block == "tests fail"
    halt = await _interpret(tmp_path, "PostToolUse", out({"continue": False, "stopReason": "enough"}))
    assert halt.stop == "enough"
    extra = {"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}, "suppressOutput": True}
    reply = await _interpret(tmp_path, "PostToolUse", out(extra))
    assert reply.context == "lint: 2 warnings" and reply.suppress_output
    odd = await _interpret(
        tmp_path, "PreToolUse", out({"hookSpecificOutput": {"permissionDecision": "maybe"}})
    )
    assert odd.permission is None and "permissionDecision 'maybe'" in odd.warning


async def test_a_hook_that_never_exits_is_killed_at_its_timeout(tmp_path):
    marker = tmp_path / "child.pid"
    # the hook starts a grandchild that would outlive it, then hangs: the whole group goes
    code = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(marker)!r}, 'w').write(str(p.pid)); time.sleep(600)"
    )
    reply = await _interpret(tmp_path, "PreToolUse", code, timeout=1)
    assert reply.block is None and "timed out after 1 s and was killed" in reply.warning
    pid = int(marker.read_text())
    await _until(lambda: not _alive(pid))  # SIGKILL is delivered asynchronously


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


async def _until(condition, limit: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not condition():
        assert loop.time() < deadline, "the condition never became true"
        await asyncio.sleep(0.02)


async def test_the_stdin_payload_and_environment(tmp_path):
    seen = tmp_path / "seen.json"
    code = (
        "import json, os, sys; d = json.load(sys.stdin); d['env'] = os.environ['CLAUDE_PROJECT_DIR']; "
        f"d['cwd_real'] = os.getcwd(); open({str(seen)!r}, 'w').write(json.dumps(d))"
    )
    groups, _ = parse_hooks({"PreToolUse": [{"matcher": "Edit", "hooks": [{"command": py(code)}]}]}, "f")
    identity = HookIdentity("s-1", tmp_path / "events.jsonl", "auto-edit")
    hooks = CommandHooks(groups, tmp_path, lambda: identity)
    call = ToolCall("t1", "edit_file", {"path": "a.py", "old_string": "x", "new_string": "y"})
    outcome = await hooks.pre_tool_use(call, lambda e: None)
    assert outcome.blocked is None and outcome.permission is None
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Edit"
    assert data["tool_input"]["old_string"] == "x" and data["tool_input"]["path"] == "a.py"
    assert data["tool_input"]["file_path"] == str(tmp_path / "a.py")
    assert (data["session_id"], data["tool_use_id"], data["permission_mode"]) == ("s-1", "t1", "acceptEdits")
    assert data["transcript_path"] == str(tmp_path / "events.jsonl")
    assert data["cwd"] == data["env"] == data["cwd_real"] == str(tmp_path)


async def test_a_subagents_loop_fires_subagent_stop_and_no_prompt_hooks(tmp_path):
    log = tmp_path / "fired.txt"
    record = py(
        f"import json, sys; open({str(log)!r}, 'a').write(json.load(sys.stdin)['hook_event_name'] + ' ')"
    )
    block = py("import sys; sys.stderr.write('summarize what you found'); sys.exit(2)")
    table = {
        "Stop": [{"hooks": [{"command": record}]}],
        "SubagentStop": [{"hooks": [{"command": record}, {"command": block}]}],
        "UserPromptSubmit": [{"hooks": [{"command": record}]}],
        "PreToolUse": [{"hooks": [{"command": record}]}],
    }
    groups, _ = parse_hooks(table, "f")
    parent = CommandHooks(groups, tmp_path, lambda: HookIdentity("s", tmp_path / "e.jsonl", "ask"))
    child = SubagentHooks(parent)
    assert await child.user_prompt_submit("find the config loader", lambda e: None) == PromptOutcome()
    await child.pre_tool_use(ToolCall("t", "grep", {"pattern": "load_config"}), lambda e: None)
    stopped = await child.stop(False, lambda e: None)
    assert stopped.resume == "summarize what you found"
    assert log.read_text().split() == ["PreToolUse", "SubagentStop"]


def test_a_hooks_permission_decision_joins_the_permission_check():
    from agent_cli.extensions.hooks.api import PreToolOutcome, combine_permission
    from agent_cli.tools.permissions import Decision

    mode_asks = Decision("ask", "bash asks in ask mode")
    rule_asks = Decision("ask", "the rule Bash(git push:*) asks", "Bash(git push:*)")
    denied = Decision("deny", "denied by the rule Bash(rm:*)", "Bash(rm:*)")
    allowed = Decision("allow")
    allow, ask = PreToolOutcome(permission="allow"), PreToolOutcome(permission="ask", reason="audited")
    assert combine_permission(mode_asks, allow).action == "allow"
    assert combine_permission(rule_asks, allow) == rule_asks  # a rule's question stays
    assert combine_permission(denied, allow) == denied  # deny wins, whoever says it
    assert combine_permission(allowed, ask) == Decision("ask", "a PreToolUse hook asks: audited")
    assert combine_permission(allowed, None) == allowed
