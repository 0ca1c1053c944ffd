from __future__ import annotations

import os
from pathlib import Path

import pytest

# No test may reach a real API or depend on a key, whatever the environment says.
for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
    os.environ.pop(var, None)
os.environ.setdefault("XDG_CONFIG_HOME", "/nonexistent-agent-test-config")

try:  # the local Messages-API server (tests/fakeapi)
    from tests.fakeapi.fixtures import fake_anthropic  # noqa: F401
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
