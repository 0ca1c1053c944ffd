"""The Python API (`from agent_cli import api`) as a person uses it: the README's example, run as it
is written, against the local Messages-API server; then what it promises beside it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_cli import api
from agent_cli.api.options import prepare
from agent_cli.core.errors import ConfigError
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example() -> str:
    """The ```python block of the README's "Python API" section."""
    section = README.read_text(encoding="utf-8").split("## Python API", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "the README's Python API section has no example"
    return found.group(1)


@pytest.fixture
def env(workspace: Path, tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch):
    """The person's shell: a key, the endpoint, their own config dir, and the repository as cwd."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.chdir(workspace)
    return fake_anthropic


def user_texts(body: dict) -> list[str]:
    return [
        block.get("text", "")
        for message in body["messages"]
        if message["role"] == "user"
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "text"
    ]


def test_the_readme_example_runs_as_written(env: FakeAnthropic, workspace: Path, capsys) -> None:
    server = env
    # api.run: an edit (auto-edit allows it) and a command (asks: refused, headless), then the answer
    server.push(
        tool_call("edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}),
        tool_call("bash", {"command": "python -m pytest -q"}),
        text("Fixed add(): it subtracted."),
    )
    # the Session: one command the callback allows, one it refuses, then the answer
    server.push(
        tool_call("bash", {"command": "echo checked > checked.txt"}),
        tool_call("bash", {"command": "rm -rf src"}),
        text("Checked."),
    )
    exec(compile(readme_example(), str(README), "exec"), {"__name__": "readme_example"})
    out = capsys.readouterr().out.splitlines()

    assert out[0].startswith("success 3 ") and float(out[0].split()[2]) > 0  # subtype, turns, cost
    assert out[1] == "Fixed add(): it subtracted."
    assert (workspace / "app.py").read_text().count("a + b") == 1  # the edit ran
    assert "asked: bash echo checked > checked.txt" in out and "asked: bash rm -rf src" in out
    assert "running: bash echo checked > checked.txt" in out and "running: bash rm -rf src" not in out
    assert (workspace / "checked.txt").read_text() == "checked\n"  # allowed once: it ran
    assert "Checked." in out and out[-1] == "[{'command': 'rm -rf src'}]"  # refused, and listed
    # the Session went on in the run's session: its first request carried the earlier conversation
    second = [body for body in server.requests if "now check it" in user_texts(body)]
    assert second and "fix the failing test" in user_texts(second[0])


def test_run_returns_claude_codes_result_fields(env: FakeAnthropic, workspace: Path) -> None:
    env.push(tool_call("bash", {"command": "rm -rf build"}), text("Could not clean."))
    result = api.run("clean up", cwd=workspace, allowed_tools="Read Grep")
    assert (result.type, result.subtype, result.is_error) == ("result", "success", False)
    assert result.result == "Could not clean." and result.num_turns == 2
    assert result.session_id and (workspace / ".agent" / "sessions" / result.session_id).is_dir()
    assert result.usage.input_tokens > 0 and result.duration_ms >= result.duration_api_ms > 0
    (denial,) = result.permission_denials
    assert (denial.tool_name, denial.tool_input) == ("Bash", {"command": "rm -rf build"})
    assert denial.tool_use_id.startswith("toolu_") and "not allowed" in denial.reason
    data = result.to_json()
    assert list(data)[:11] == [
        "type",
        "subtype",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "result",
        "session_id",
        "total_cost_usd",
        "usage",
        "permission_denials",
    ]
    assert json.loads(json.dumps(data))["permission_denials"][0]["tool_name"] == "Bash"


def test_run_says_what_went_wrong_instead_of_raising(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    no_key = api.run("hi", cwd=workspace)
    assert no_key.is_error and no_key.subtype == "error_during_execution" and no_key.session_id == ""
    assert "ANTHROPIC_API_KEY" in no_key.result
    bad_mode = api.run("hi", cwd=workspace, demo=True, permission_mode="sometimes")
    assert bad_mode.is_error and "permission mode 'sometimes'" in bad_mode.result
    nothing = api.run("hi", cwd=workspace, demo=True, continue_session=True)
    assert nothing.is_error and "no earlier session" in nothing.result
    with pytest.raises(TypeError):  # a misspelt option is a programming error: it raises
        api.run("hi", cwd=workspace, permision_mode="yolo")


def test_claude_codes_mode_names_are_ours(workspace: Path) -> None:
    assert api.Options(permission_mode="acceptEdits").permission_mode == "auto-edit"
    assert api.Options(permission_mode="bypassPermissions").permission_mode == "yolo"
    assert api.Options(permission_mode="default").permission_mode == "ask"
    assert api.Options(allowed_tools=["Bash(git diff:*) Edit", "Read"]).allowed_tools == (
        "Bash(git diff:*)",
        "Edit",
        "Read",
    )


@pytest.mark.parametrize("turns", [0, -1])
def test_max_turns_below_one_is_refused_not_unlimited(workspace: Path, turns: int) -> None:
    with pytest.raises(ConfigError, match=rf"max_turns\) must be at least 1, not {turns}"):
        prepare(api.Options(cwd=workspace, max_turns=turns))
    result = api.run("hi", cwd=workspace, max_turns=turns)
    assert result.is_error and "--max-turns (max_turns) must be at least 1" in result.result


async def test_max_turns_is_error_max_turns(env: FakeAnthropic, workspace: Path) -> None:
    env.push(*[tool_call("ls", {}) for _ in range(3)])
    async with api.Session(cwd=workspace, max_turns=2) as session:
        result = await session.run("look around")
    assert (result.subtype, result.is_error, result.num_turns) == ("error_max_turns", True, 2)


async def test_a_callback_that_fails_denies_and_says_so(env: FakeAnthropic, workspace: Path) -> None:
    env.push(tool_call("bash", {"command": "touch x"}), text("ok"))

    async def broken(request: api.PermissionRequest) -> api.PermissionDecision:
        raise RuntimeError("no answer today")

    async with api.Session(cwd=workspace, can_use_tool=broken) as session:
        events = [event async for event in session.send("go")]
    assert not (workspace / "x").exists()
    assert any(isinstance(e, api.Notice) and "no answer today" in e.text for e in events)
    assert session.result is not None and len(session.result.permission_denials) == 1
    assert any("can_use_tool failed" in w for w in session.result.warnings)


async def test_interrupt_ends_the_turn_and_the_session_goes_on(env: FakeAnthropic, workspace: Path) -> None:
    env.push(tool_call("bash", {"command": "sleep 30"}), text("Again."))
    async with api.Session(cwd=workspace, permission_mode="yolo") as session:
        async for event in session.send("wait"):
            if isinstance(event, api.ToolStarted):
                session.interrupt()
        assert session.result is not None and session.result.stop_reason == "interrupted"
        assert session.result.is_error
        again = await session.run("go on")
    assert again.result == "Again." and again.session_id == session.result.session_id


async def test_leaving_the_events_early_interrupts_the_turn(env: FakeAnthropic, workspace: Path) -> None:
    env.push(tool_call("bash", {"command": "sleep 30"}), text("After."))
    async with api.Session(cwd=workspace, permission_mode="yolo") as session:
        async for event in session.send("wait"):
            if isinstance(event, api.ToolStarted):
                break  # the caller stops reading: the turn is ended, the session kept whole
        assert (await session.run("and now")).result == "After."
    log = (workspace / ".agent" / "sessions" / session.result.session_id / "events.jsonl").read_text()
    assert '"stop_reason":"interrupted"' in log.replace(" ", "")


def test_importing_the_api_loads_no_sdk_or_ui() -> None:
    import subprocess
    import sys

    heavy = ("anthropic", "openai", "mcp", "textual", "typer")
    code = f"import sys\nfrom agent_cli import api\nprint(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_what_an_untrusted_workspace_brought_is_said(env: FakeAnthropic, workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "touch hook-ran"}]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    env.push(tool_call("bash", {"command": "true"}), text("done"))
    result = api.run("go", cwd=workspace, permission_mode="yolo")
    assert any("not trusted" in w and ".claude/settings.json" in w for w in result.warnings), result.warnings
    assert not (workspace / "hook-ran").exists()
    env.push(tool_call("bash", {"command": "true"}), text("done"))
    trusted = api.run("go", cwd=workspace, permission_mode="yolo", trust_workspace=True)
    assert not trusted.warnings and (workspace / "hook-ran").exists()


def test_the_demo_costs_nothing_and_warns_of_no_cache(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's model is offline: no dollar figure, and no cache-thrash warning for a cache it never had."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    result = api.run("explain this repo", cwd=workspace, demo=True, permission_mode="yolo")
    assert not result.is_error, result.result
    assert result.usage.input_tokens > 3_000 and result.num_turns >= 3  # it did work
    assert result.total_cost_usd == 0
    assert not [w for w in result.warnings if "cache" in w], result.warnings
