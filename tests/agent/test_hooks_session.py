"""Hooks in a real session (scripted model): what each event can do to a turn."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.core.events import (
    Notice,
    PermissionDenied,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config, Extensions

from .helpers import run

RM = {"tool_calls": [{"name": "bash", "input": {"command": "rm precious.txt"}}]}
GUARD = """
import json, sys
data = json.load(sys.stdin)
with open("seen.jsonl", "a") as fh:
    fh.write(json.dumps(data) + "\\n")
if data.get("tool_input", {}).get("command", "").startswith("rm"):
    sys.stderr.write("rm is not allowed here; move it to trash/ instead")
    sys.exit(2)
"""


def hook(script: Path, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    command: dict[str, Any] = {"type": "command", "command": f"{shlex.quote(sys.executable)} {script}"}
    if timeout is not None:
        command["timeout"] = timeout
    return {"matcher": matcher, "hooks": [command]}


def script(workspace: Path, name: str, code: str) -> Path:
    path = workspace / ".claude" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code)
    return path


def settings(workspace: Path, hooks: dict[str, list[dict[str, Any]]], name: str = "settings.json") -> None:
    path = workspace / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def session(
    workspace: Path,
    responses: list[dict[str, Any]],
    *,
    trusted: bool = True,
    mode: str = "yolo",
    interactive: bool = False,
    user_hooks: dict[str, Any] | None = None,
) -> AgentSession:
    provider = ScriptedProvider(Script(responses=responses))
    config = Config(
        model="scripted",
        provider="scripted",
        permission_mode=mode,
        debug=True,
        user_extensions=Extensions(hooks=user_hooks or {}),
    )
    return compose_session(config, provider, SessionSetup(workspace, None, interactive, trusted))


def sent(s: AgentSession, index: int = -1) -> str:
    return json.dumps(s.provider.requests[index].messages)


async def test_pre_tool_use_exit_2_blocks_the_call_and_the_model_reads_why(workspace):
    (workspace / "precious.txt").write_text("keep me")
    settings(workspace, {"PreToolUse": [hook(script(workspace, "guard.py", GUARD), "Bash")]})
    s = session(workspace, [RM, {"text": "Understood."}])
    events = await run(s, "clean up")
    assert (workspace / "precious.txt").exists()
    assert not [e for e in events if isinstance(e, ToolStarted)]
    denied = [e for e in events if isinstance(e, PermissionDenied)]
    assert denied and "PreToolUse hook" in denied[0].reason
    result = s.provider.requests[1].messages[-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert result["content"] == "rm is not allowed here; move it to trash/ instead"
    seen = json.loads((workspace / "seen.jsonl").read_text().splitlines()[0])
    assert seen["tool_name"] == "Bash" and seen["tool_input"] == {"command": "rm precious.txt"}
    assert seen["session_id"] == s.session_id and seen["transcript_path"] == str(s.log.path)
    assert '"type":"hook"' in s.log.path.read_text()


async def test_an_untrusted_workspace_runs_only_the_persons_own_hooks(workspace):
    (workspace / "precious.txt").write_text("keep me")
    guard = script(workspace, "guard.py", GUARD)
    settings(workspace, {"PreToolUse": [hook(guard, "Bash")]})
    s = session(workspace, [RM, {"text": "Done."}], trusted=False)
    await run(s, "clean up")
    assert not (workspace / "precious.txt").exists() and not (workspace / "seen.jsonl").exists()

    (workspace / "precious.txt").write_text("keep me")
    user = session(
        workspace, [RM, {"text": "Done."}], trusted=False, user_hooks={"PreToolUse": [hook(guard)]}
    )
    await run(user, "clean up")
    assert (workspace / "precious.txt").exists()  # the user config's hooks are always used


def decide(decision: str, reason: str = "") -> str:
    out = {"hookSpecificOutput": {"permissionDecision": decision, "permissionDecisionReason": reason}}
    return f"print({json.dumps(json.dumps(out))})"


async def test_permission_decisions_join_the_permission_check(workspace):
    allow = script(workspace, "allow.py", decide("allow"))
    ask = script(workspace, "ask.py", decide("ask", "reads of app.py are audited"))
    settings(workspace, {"PreToolUse": [hook(allow, "Bash"), hook(ask, "Read")]})
    calls = {
        "tool_calls": [
            {"name": "bash", "input": {"command": "echo hi"}},
            {"name": "read_file", "input": {"path": "app.py"}},
        ]
    }
    s = session(workspace, [calls, {"text": "ok"}], mode="ask", interactive=True)
    asked: list[PermissionRequest] = []

    async def answer(event):
        if isinstance(event, PermissionRequest):
            asked.append(event)
            event.future.set_result("deny")

    events = await run(s, "go", answer)
    # bash would ask in `ask` mode: the hook's allow skips the question; a read never asks: "ask" forces it
    assert [e.call.name for e in asked] == ["read_file"]
    assert "reads of app.py are audited" in asked[0].reason
    assert [e.call.name for e in events if isinstance(e, ToolStarted)] == ["bash"]


async def test_post_tool_use_feedback_reaches_the_model_and_continue_false_ends_the_turn(workspace):
    lint = script(
        workspace,
        "lint.py",
        'import sys; sys.stderr.write("lint: app.py:2 unused name"); sys.exit(2)',
    )
    settings(workspace, {"PostToolUse": [hook(lint, "Edit|Write")]})
    edit = {"tool_calls": [{"name": "write_file", "input": {"path": "new.py", "content": "x = 1\n"}}]}
    s = session(workspace, [edit, {"text": "Noted."}])
    events = await run(s, "write it")
    finished = [e for e in events if isinstance(e, ToolFinished)][0]
    assert "lint: app.py:2 unused name" in finished.output and (workspace / "new.py").exists()
    assert "lint: app.py:2 unused name" in sent(s, 1)

    halt = script(workspace, "halt.py", 'print(\'{"continue": false, "stopReason": "budget reached"}\')')
    settings(workspace, {"PostToolUse": [hook(halt)]})
    s = session(workspace, [edit, {"text": "never sent"}])
    events = await run(s, "write it")
    assert events[-1].stop_reason == "stopped_by_hook" and len(s.provider.requests) == 1
    assert any(isinstance(e, Notice) and "budget reached" in e.text for e in events)


async def test_user_prompt_submit_adds_context_or_refuses_the_prompt(workspace):
    gate = script(
        workspace,
        "gate.py",
        "import json, sys\n"
        "prompt = json.load(sys.stdin)['prompt']\n"
        "if 'password' in prompt:\n"
        "    sys.stderr.write('prompts must not contain secrets'); sys.exit(2)\n"
        "print('current sprint: SPRINT-42')\n",
    )
    settings(workspace, {"UserPromptSubmit": [hook(gate)]})
    s = session(workspace, [{"text": "Hi."}, {"text": "Sure."}])
    events = await run(s, "my password is hunter2")
    assert isinstance(events[-1], TurnFinished) and events[-1].stop_reason == "blocked_by_hook"
    assert any(isinstance(e, Notice) and "prompts must not contain secrets" in e.text for e in events)
    assert s.provider.requests == [] and s.engine.messages == []
    assert not s.log.path.exists() or "hunter2" not in s.log.path.read_text()  # a refused prompt is not kept

    await run(s, "what are we doing?")
    first = sent(s, 0)
    assert "current sprint: SPRINT-42" in first and "what are we doing?" in first
    assert first.index("SPRINT-42") < first.index("what are we doing?")  # injections before the words


async def test_a_stop_hook_keeps_the_model_going_once(workspace):
    stop = script(
        workspace,
        "stop.py",
        "import json, sys\n"
        "if not json.load(sys.stdin)['stop_hook_active']:\n"
        "    sys.stderr.write('run the tests before you stop'); sys.exit(2)\n",
    )
    settings(workspace, {"Stop": [hook(stop)]})
    s = session(workspace, [{"text": "Done."}, {"text": "Tests pass. Done."}])
    events = await run(s, "fix it")
    assert events[-1].stop_reason == "end_turn" and events[-1].result == "Tests pass. Done."
    assert len(s.provider.requests) == 2
    assert "Stop hook feedback:\\nrun the tests before you stop" in sent(s, 1)


async def test_session_start_context_and_pre_compact_and_session_end(workspace):
    record = (
        "import json, sys\nd = json.load(sys.stdin)\n"
        "open('events.log', 'a').write(json.dumps(d) + '\\n')\n"
        "if d['hook_event_name'] == 'SessionStart': print('open issues: #12, #14')\n"
    )
    rec = script(workspace, "rec.py", record)
    settings(
        workspace,
        {
            "SessionStart": [hook(rec, "startup|clear")],
            "PreCompact": [hook(rec, "manual")],
            "SessionEnd": [hook(rec)],
        },
    )
    s = session(workspace, [{"text": "Hello."}, {"text": "More."}, {"text": "Fresh."}])
    await run(s, "hi")
    assert "open issues: #12, #14" in sent(s, 0)
    await run(s, "again")
    await run(s, "/compact keep the API notes")
    await run(s, "/clear")
    await run(s, "new topic")
    assert "open issues: #12, #14" in sent(s, -1)  # a cleared conversation gets it again
    s.close()
    seen = [json.loads(line) for line in (workspace / "events.log").read_text().splitlines()]
    assert [d["hook_event_name"] for d in seen] == [
        "SessionStart",
        "PreCompact",
        "SessionEnd",
        "SessionStart",
        "SessionEnd",
    ]
    assert [seen[0]["source"], seen[3]["source"]] == ["startup", "clear"]
    assert (seen[1]["trigger"], seen[1]["custom_instructions"]) == ("manual", "keep the API notes")
    assert [seen[2]["reason"], seen[4]["reason"]] == ["clear", "other"]


async def test_interrupting_a_hanging_hook_ends_the_turn_and_kills_it(workspace):
    pid_file = workspace / "hook.pid"
    hang = script(
        workspace,
        "hang.py",
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n",
    )
    settings(workspace, {"PreToolUse": [hook(hang)]})
    s = session(workspace, [{"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]}])
    turn = asyncio.ensure_future(run(s, "go"))
    await asyncio.wait_for(written(pid_file), 60)
    s.interrupt()
    events = await asyncio.wait_for(turn, 60)
    assert events[-1].stop_reason == "interrupted"
    result = s.engine.messages[-1].blocks[0]
    assert result.type == "tool_result" and "interrupted" in result.text
    await asyncio.wait_for(gone(int(pid_file.read_text())), 60)  # SIGKILL lands asynchronously


async def written(path: Path) -> None:
    while not path.exists() or not path.read_text():
        await asyncio.sleep(0.02)


async def gone(pid: int) -> None:
    while True:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return
        except OSError:
            return
        await asyncio.sleep(0.02)


async def test_hangs_garbage_and_broken_files_are_warnings_and_the_turn_goes_on(workspace):
    hang = script(workspace, "hang.py", "import time\ntime.sleep(600)\n")
    garbage = script(workspace, "garbage.py", "print('{not json')\n")
    settings(workspace, {"PreToolUse": [hook(hang, "Bash", timeout=1), hook(garbage, "Bash")]})
    (workspace / ".agent").mkdir(exist_ok=True)
    (workspace / ".agent" / "settings.json").write_text('{"hooks": {"Stop": [')
    s = session(
        workspace, [{"tool_calls": [{"name": "bash", "input": {"command": "echo ran"}}]}, {"text": "ok"}]
    )
    assert len(s.warnings) == 1  # one line naming the broken file (the permission rules report it)
    assert ".agent/settings.json" in s.warnings[0] and "JSON" in s.warnings[0]
    events = await run(s, "go")
    warnings = [e.text for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert any("timed out after 1 s and was killed" in w for w in warnings)
    assert any("printed invalid JSON" in w for w in warnings)
    assert "ran" in [e for e in events if isinstance(e, ToolFinished)][0].output
    assert events[-1].stop_reason == "end_turn"


async def test_a_permission_request_fires_notification_hooks(workspace):
    ping = script(
        workspace,
        "ping.py",
        "import json, sys\nopen('note.txt', 'w').write(json.load(sys.stdin)['message'])\n",
    )
    settings(workspace, {"Notification": [hook(ping)]})
    s = session(
        workspace,
        [{"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]}, {"text": "ok"}],
        mode="ask",
        interactive=True,
    )
    note = workspace / "note.txt"

    async def answer(event):
        if isinstance(event, PermissionRequest):
            while not note.exists():  # the hook runs while the question is open
                await asyncio.sleep(0.02)
            event.future.set_result("allow_once")

    await asyncio.wait_for(run(s, "go", answer), 120)
    assert note.read_text() == "agent needs your permission to use bash"


async def test_a_sub_agents_tools_fire_the_hooks_and_its_end_fires_subagent_stop(workspace):
    (workspace / "precious.txt").write_text("keep me")
    guard = script(workspace, "guard.py", GUARD)
    record = script(
        workspace,
        "rec.py",
        "import json, sys\nopen('fired.txt', 'a').write(json.load(sys.stdin)['hook_event_name'] + ' ')\n",
    )
    settings(
        workspace,
        {
            "PreToolUse": [hook(guard, "Bash")],
            "SubagentStop": [hook(record)],
            "Stop": [hook(record)],
            "UserPromptSubmit": [hook(record)],
        },
    )
    task = {
        "description": "clean",
        "prompt": "CHILD: remove precious.txt",
        "subagent_type": "general-purpose",
    }
    s = session(
        workspace,
        [
            {"tool_calls": [{"name": "task", "input": task}]},
            RM,  # the child's call
            {"text": "The hook refused."},  # the child's answer
            {"text": "Left it alone."},  # the parent's
        ],
    )
    events = await run(s, "tidy up")
    assert events[-1].result == "Left it alone." and (workspace / "precious.txt").exists()
    denied = [e for e in events if isinstance(e, PermissionDenied)]
    assert denied and "rm is not allowed here" in denied[0].reason
    # the person's prompt fires UserPromptSubmit, the child's does not; the child ends with SubagentStop
    assert (workspace / "fired.txt").read_text().split() == ["UserPromptSubmit", "SubagentStop", "Stop"]
