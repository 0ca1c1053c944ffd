from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# No test may reach a real API or depend on a key, whatever the environment says.
for var in (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
):
    os.environ.pop(var, None)
os.environ.setdefault("XDG_CONFIG_HOME", "/nonexistent-agent-test-config")
os.environ.setdefault("CLAUDE_CONFIG_DIR", "/nonexistent-claude-test-config")  # never ~/.claude
# The TUI keeps the person's prompts in $XDG_STATE_HOME/agent (tui/history_file.py): never theirs here,
# for the processes and tmux sessions the tests start too (each test gets its own: `own_state_home`).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="agent-test-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], ignore_errors=True)


@pytest.fixture(autouse=True)
def own_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own $XDG_STATE_HOME: no prompt history carried from one test to the next."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(scope="session", autouse=True)
def private_tmux(tmp_path_factory: pytest.TempPathFactory):
    """The tmux tests run on a tmux server of their own (its socket under a temporary TMUX_TMPDIR),
    never on the person's: not inside their session, not beside their windows; ended afterwards.
    It stays up between tests (`exit-empty off`): otherwise the server a test's last session leaves
    is still exiting when the next test starts a session, and that `new-session` fails."""
    import subprocess

    saved = {var: os.environ.get(var) for var in ("TMUX", "TMUX_TMPDIR", "TMUX_PANE")}
    os.environ.pop("TMUX", None)
    os.environ.pop("TMUX_PANE", None)
    os.environ["TMUX_TMPDIR"] = str(tmp_path_factory.mktemp("tmux"))
    try:
        subprocess.run(
            ["tmux", "start-server", ";", "set-option", "-g", "exit-empty", "off"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        pass  # no tmux here: the tmux tests say so themselves
    yield
    try:
        subprocess.run(["tmux", "kill-server"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        pass
    for var, value in saved.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value


try:  # the local Messages-API server (tests/fakeapi)
    from tests.fakeapi.fixtures import fake_anthropic, fake_openai  # noqa: F401
except ImportError:  # pragma: no cover - while it is being written
    pass


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A scratch git-like workspace with a couple of files."""
    ws = tmp_path / "repo"
    ws.mkdir()
    (ws / ".git" / "info").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "README.md").write_text("# demo\n")
    return ws


LONG_TEXT = 2_000  # chars: past this, pytest's own diff of two strings can take minutes to print


def pytest_assertrepr_compare(op: str, left: object, right: object) -> list[str] | None:
    """`a == b` on long strings (or bytes) explains the first difference in a few lines, instead of
    pytest's full diff (a 60 kB mismatch took it more than five minutes)."""
    if op != "==" or type(left) is not type(right) or not isinstance(left, str | bytes):
        return None
    if max(len(left), len(right)) <= LONG_TEXT:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), min(len(left), len(right))
    )
    lo = max(0, at - 80)
    return [
        f"long {type(left).__name__}s differ: len {len(left):,} vs {len(right):,}, first difference at {at:,}",
        f"left  [{lo:,}:]: {left[lo : at + 80]!r}",
        f"right [{lo:,}:]: {right[lo : at + 80]!r}",
    ]
