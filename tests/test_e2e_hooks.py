"""Hooks and custom commands end to end: `agent -p` against the local Messages-API server."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.e2e import agent
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic

GUARD = """
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-input.json"), "w") as fh:
    json.dump(data, fh)
if data["tool_input"]["command"].startswith("rm "):
    print("refusing: rm deletes files for good; use `mv FILE trash/`", file=sys.stderr)
    sys.exit(2)
"""


def install(workspace: Path, hooks: dict, scripts: dict[str, str]) -> None:
    folder = workspace / ".claude" / "hooks"
    folder.mkdir(parents=True, exist_ok=True)
    for name, code in scripts.items():
        (folder / name).write_text(code)
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2))


def command(name: str, timeout: float | None = None) -> dict:
    hook = {
        "type": "command",
        "command": f'{shlex.quote(sys.executable)} "$CLAUDE_PROJECT_DIR/.claude/hooks/{name}"',
    }
    return {**hook, "timeout": timeout} if timeout else hook


def test_a_pre_tool_use_hook_blocks_rm_and_the_model_reads_its_reason(
    workspace, fake_anthropic: FakeAnthropic
):
    (workspace / "notes.txt").write_text("precious")
    install(
        workspace, {"PreToolUse": [{"matcher": "Bash", "hooks": [command("guard.py")]}]}, {"guard.py": GUARD}
    )
    fake_anthropic.push(tool_call("bash", {"command": "rm notes.txt"}), text("I will move it instead."))
    out = agent(
        workspace, fake_anthropic, "-p", "delete notes.txt", "--permission-mode", "yolo", "--trust-workspace"
    )
    assert out.returncode == 0, out.stderr
    assert (workspace / "notes.txt").read_text() == "precious"
    seen = json.loads((workspace / "hook-input.json").read_text())
    assert seen["hook_event_name"] == "PreToolUse" and seen["tool_name"] == "Bash"
    assert seen["tool_input"]["command"] == "rm notes.txt" and seen["cwd"] == str(workspace)
    result = fake_anthropic.requests[1]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert "refusing: rm deletes files for good" in json.dumps(result["content"])
    assert "blocked by a PreToolUse hook" in out.stderr

    # the same repository, not trusted: its hook does not run (and one line says so)
    (workspace / "hook-input.json").unlink()
    fake_anthropic.push(tool_call("bash", {"command": "rm notes.txt"}), text("Deleted."))
    out = agent(workspace, fake_anthropic, "-p", "delete notes.txt", "--permission-mode", "yolo")
    assert out.returncode == 0, out.stderr
    assert not (workspace / "notes.txt").exists() and not (workspace / "hook-input.json").exists()
    assert "not using the hooks of .claude/settings.json: this workspace is not trusted" in out.stderr


def test_a_markdown_command_runs_headless(workspace, fake_anthropic: FakeAnthropic):
    folder = workspace / ".agent" / "commands"
    folder.mkdir(parents=True)
    (folder / "hello.md").write_text(
        "---\ndescription: Greet someone\n---\nWrite a haiku greeting $ARGUMENTS.\n"
    )
    fake_anthropic.push(text("Hello, world, in five."))
    out = agent(workspace, fake_anthropic, "-p", "/hello world", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"] == "Hello, world, in five."
    user = fake_anthropic.requests[0]["messages"][0]
    assert user["role"] == "user" and "Write a haiku greeting world." in json.dumps(user["content"])
    assert "/hello" not in json.dumps(fake_anthropic.requests[0]["messages"])


def test_hanging_and_garbage_hooks_and_a_broken_settings_file_never_stop_the_task(
    workspace, fake_anthropic: FakeAnthropic
):
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [command("hang.py", timeout=1)]},
            {"matcher": "*", "hooks": [command("garbage.py")]},
        ]
    }
    install(
        workspace,
        hooks,
        {"hang.py": "import time\ntime.sleep(3600)\n", "garbage.py": "print('{\"decision\": nope')\n"},
    )
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "settings.json").write_text('{"hooks": {"Stop": [}')
    fake_anthropic.push(tool_call("bash", {"command": "echo still-here"}), text("All done."))
    out = agent(workspace, fake_anthropic, "-p", "check", "--permission-mode", "yolo", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "All done."
    assert "still-here" in json.dumps(fake_anthropic.requests[1]["messages"][-1])
    lines = out.stderr.splitlines()
    broken = [line for line in lines if "settings.json" in line]
    assert len(broken) == 1 and ".agent/settings.json" in broken[0] and "JSON" in broken[0]
    assert any("hang.py" in line and "timed out after 1 s and was killed" in line for line in lines)
    assert any("garbage.py" in line and "printed invalid JSON" in line for line in lines)


def test_hooks_from_the_user_config_run_untrusted_and_session_end_runs_once(
    workspace, fake_anthropic: FakeAnthropic
):
    fired = workspace / "fired.jsonl"
    script = workspace / ".cfg" / "record.py"
    script.parent.mkdir(parents=True)
    script.write_text(f"import sys\nopen({str(fired)!r}, 'a').write(sys.stdin.read().strip() + chr(10))\n")
    command = json.dumps(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")  # a TOML string
    config = workspace / ".cfg" / "agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[[hooks.SessionEnd]]\nhooks = [{{type = "command", command = {command}}}]\n'
        f'[[hooks.UserPromptSubmit]]\nhooks = [{{type = "command", command = {command}}}]\n'
    )
    fake_anthropic.push(text("Hi."))
    out = agent(workspace, fake_anthropic, "-p", "hello there")
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in fired.read_text().splitlines()]
    assert [e["hook_event_name"] for e in events] == ["UserPromptSubmit", "SessionEnd"]
    assert events[0]["prompt"] == "hello there" and events[1]["reason"] == "other"
