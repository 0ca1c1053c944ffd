"""The workspace-trust question: asked before the session is built, remembered on yes, never on a stray Enter."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.api import Prepared
from agent_cli.cli.tui_launch import tui_app
from agent_cli.extensions.hooks import NoHooks
from agent_cli.settings.config import Config
from agent_cli.settings.trust import TrustStore
from agent_cli.tui.screens.trust_screen import TrustScreen
from agent_cli.tui.widgets.notice import Notice

CONFIG = Config(model="scripted", provider="scripted")


@pytest.fixture
def repo(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    (workspace / ".claude").mkdir()
    hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [hook]}}))
    return workspace


def store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "cfg" / "agent" / "trusted_workspaces.json")


def notices(app) -> list[str]:
    return [n.text for n in app.query(Notice)]


async def asked(pilot, app, clock: FakeClock) -> TrustScreen:
    """The question is on screen, and armed (the fake clock moved past the typing guard)."""
    await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen))
    screen = app.screen
    clock.advance(5)
    await wait_until(pilot, lambda: screen.armed_shown)
    return screen


async def test_trust_is_asked_first_and_a_yes_is_remembered(repo: Path, tmp_path: Path) -> None:
    clock = FakeClock()
    app = tui_app(Prepared(CONFIG, repo), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await asked(pilot, app, clock)
        files = str(screen.query_one("#trust-files").render())
        assert ".claude/settings.json" in files
        assert app.backend is None  # nothing from the workspace is loaded before the answer
        await pilot.press("t")
        clock.advance(1)  # a letter answers once no other key follows it
        await wait_until(pilot, lambda: app.backend is not None)
        assert app.backend.trusted and not isinstance(app.backend.hooks, NoHooks)
        assert any(f"trusted {repo}" in text for text in notices(app))
        assert gc.isenabled()  # paused only while the session was built (tui_launch.loader)
    assert store(tmp_path).is_trusted(repo)

    again = tui_app(Prepared(CONFIG, repo))
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: again.backend is not None)
        assert again.backend.trusted and not isinstance(again.screen, TrustScreen)


@pytest.mark.parametrize("key", ["n", "escape", "enter"])  # Enter is "Not now"
async def test_not_now_runs_without_the_files_and_says_so(repo: Path, tmp_path: Path, key: str) -> None:
    clock = FakeClock()
    app = tui_app(Prepared(CONFIG, repo), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await asked(pilot, app, clock)
        await pilot.press(key)
        clock.advance(1)  # a letter answers once no other key follows it
        await wait_until(pilot, lambda: app.backend is not None)
        assert not app.backend.trusted and isinstance(app.backend.hooks, NoHooks)
        assert any(
            "not trusted: not using the hooks of .claude/settings.json" in text for text in notices(app)
        )
    assert not store(tmp_path).is_trusted(repo)


async def test_typing_in_progress_goes_to_the_prompt_and_never_trusts(repo: Path, tmp_path: Path) -> None:
    clock = FakeClock()
    app = tui_app(Prepared(CONFIG, repo), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await type_text(pilot, "tell me about it")  # a 't' while typing is not an answer
        await pilot.press("enter")
        assert isinstance(app.screen, TrustScreen) and app.backend is None
        assert app.prompt.text == "tell me about it"
        clock.advance(5)
        await wait_until(pilot, lambda: app.screen.armed_shown)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.backend is not None)
        assert not app.backend.trusted
    assert not store(tmp_path).is_trusted(repo)


async def test_a_workspace_without_such_files_is_not_asked(workspace: Path, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    app = tui_app(Prepared(CONFIG, workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.backend is not None)
        assert not isinstance(app.screen, TrustScreen) and not app.backend.trusted


async def test_custom_commands_complete_and_run_and_broken_files_are_noticed(
    workspace: Path, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    commands = workspace / ".agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "hello.md").write_text("---\ndescription: Greet someone\n---\nGreet $ARGUMENTS.\n")
    (commands / "bad.md").write_text("---\ndescription: [oops\n---\nStill works.\n")
    app = tui_app(Prepared(CONFIG, workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.backend is not None)
        assert any("bad.md: frontmatter is not valid YAML" in text for text in notices(app))
        app.prompt.set_text("/hel")
        await pilot.pause()
        labels = [item.label for item in app.prompt.completions]
        assert "/hello" in labels and "/help" in labels
        hello = next(item for item in app.prompt.completions if item.label == "/hello")
        assert "Greet someone" in hello.help
