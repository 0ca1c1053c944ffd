"""Hooks at a tool call, in a session (scripted model, real hook commands): a failed tool fires
PostToolUseFailure, not PostToolUse."""

from __future__ import annotations

import json

from agent_cli.core.events import ToolFinished
from agent_cli.core.types import ToolCall
from agent_cli.extensions.hooks.runner import CommandHooks, HookIdentity
from agent_cli.extensions.hooks.spec import parse_hooks

from .helpers import run
from .test_hooks import _interpret, py
from .test_hooks_session import hook, script, session, settings


async def test_post_tool_use_only_after_a_success_and_post_tool_use_failure_after_a_failure(workspace):
    record = script(
        workspace,
        "rec.py",
        "import json, sys\nd = json.load(sys.stdin)\nopen('fired.jsonl', 'a').write(json.dumps(d) + '\\n')\n"
        "if d['hook_event_name'] == 'PostToolUseFailure':\n"
        "    sys.stderr.write('hint: edit_file takes old_string'); sys.exit(2)\n",
    )
    settings(workspace, {"PostToolUse": [hook(record)], "PostToolUseFailure": [hook(record, "Edit")]})
    calls = [
        {"name": "edit_file", "input": {"path": "app.py", "old": "a - b", "new": "a + b"}},
        {"name": "bash", "input": {"command": "echo fine"}},
    ]
    s = session(workspace, [{"tool_calls": calls}, {"text": "ok"}])
    events = await run(s, "go")
    fired = [json.loads(line) for line in (workspace / "fired.jsonl").read_text().splitlines()]
    assert [(d["hook_event_name"], d["tool_name"]) for d in fired] == [
        ("PostToolUseFailure", "Edit"),
        ("PostToolUse", "Bash"),
    ]
    failure = fired[0]
    assert "invalid input for edit_file" in failure["error"] and "tool_response" not in failure
    assert failure["tool_input"]["old"] == "a - b" and failure["tool_use_id"] and not failure["is_interrupt"]
    assert fired[1]["tool_response"]["success"] is True
    failed = [e for e in events if isinstance(e, ToolFinished)][0]
    assert failed.is_error and "hint: edit_file takes old_string" in failed.output


async def test_a_hooks_file_path_is_our_path_and_unknown_keys_are_a_warning(tmp_path):
    given = py(
        "import json, sys; d = json.load(sys.stdin)['tool_input']; d['file_path'] = d['file_path'] + '.bak'; "
        "print(json.dumps({'hookSpecificOutput': {'updatedInput': d}}))"
    )
    groups, _ = parse_hooks({"PreToolUse": [{"hooks": [{"command": given}]}]}, "f")
    hooks = CommandHooks(groups, tmp_path, lambda: HookIdentity("s", tmp_path / "e.jsonl", "ask"))
    outcome = await hooks.pre_tool_use(ToolCall("t", "write_file", {"path": "a.py", "content": "x"}), print)
    assert outcome.updated_input == {"path": str(tmp_path / "a.py.bak"), "content": "x"}

    odd = {"continue": True, "sessionTitle": "x", "hookSpecificOutput": {"updatedInput": {}, "extra": 1}}
    reply = await _interpret(tmp_path, "PostToolUse", f"print({json.dumps(json.dumps(odd))})")
    assert "unknown keys 'sessionTitle', 'hookSpecificOutput.extra'" in reply.warning
    assert "only a PreToolUse hook can change a call's input" in reply.warning
    assert reply.updated_input is None and reply.stop is None
