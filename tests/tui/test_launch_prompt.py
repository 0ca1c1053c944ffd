"""The command line reads a prompt where `claude` does: `agent "fix the test"` opens the TUI with that
prompt sent; `agent -p --output-format json "fix the test"` is headless with it, the flags anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import yaml
from tui_helpers import wait_until

from agent_cli.api import Prepared
from agent_cli.cli import commands
from agent_cli.cli.commands import PICK, normalize, typer_app
from agent_cli.cli.main import main
from agent_cli.cli.tui_launch import tui_app
from agent_cli.settings.config import Config
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.user_message import UserMessage

COMMAND = typer.main.get_command(typer_app())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["fix the test"], ["--prompt=fix the test"]),
        (["fix", "the", "test"], ["--prompt=fix the test"]),
        (["-p", "--output-format", "json", "review"], ["-p", "--output-format", "json", "--prompt=review"]),
        (["--model", "sonnet", "-p", "x"], ["--model", "sonnet", "-p", "--prompt=x"]),
        (["-p", "x", "--max-turns", "3"], ["-p", "--max-turns", "3", "--prompt=x"]),
        (["--resume", "-p", "x"], ["--resume", PICK, "-p", "--prompt=x"]),
        (["--print=old style"], ["--print", "--prompt=old style"]),
        (["-p", "--", "-x is a prompt"], ["-p", "--prompt=-x is a prompt"]),
        (["-p", "-"], ["-p", "--prompt=-"]),
        (["-p"], ["-p"]),
        (["sessions"], ["sessions"]),
        (["replay", "f.jsonl", "--json"], ["replay", "f.jsonl", "--json"]),
        (["--trust-workspace", "mcp", "list"], ["--trust-workspace", "mcp", "list"]),
        (["-p", "sessions"], ["-p", "--prompt=sessions"]),  # after -p a word is the prompt
    ],
)
def test_the_prompt_is_the_words_wherever_they_stand(argv: list[str], expected: list[str]) -> None:
    assert normalize(argv, COMMAND) == expected


def test_a_prompt_without_p_opens_the_tui_with_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    opened = []
    monkeypatch.setattr(commands, "run_tui", lambda options, **how: opened.append((options, how)))
    with pytest.raises(SystemExit) as done:
        main(["--permission-mode", "acceptEdits", "fix the test"])
    assert done.value.code in (0, None)
    ((options, how),) = opened
    assert how == {"pick": False, "initial_prompt": "fix the test"}
    assert options.permission_mode == "auto-edit" and Path(options.cwd) == tmp_path


async def test_the_tui_sends_its_first_prompt_once_open(workspace: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"responses": [{"text": "The test passes now."}]}))
    config = Config(model="scripted", provider="scripted", script=str(script), permission_mode="yolo")
    app = tui_app(Prepared(config, workspace), initial_prompt="fix the test")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(AssistantMessage)) and not app.turn_running)
        assert [m.text for m in app.query(UserMessage)] == ["fix the test"]
        assert "The test passes now." in app.query(AssistantMessage).last().text
