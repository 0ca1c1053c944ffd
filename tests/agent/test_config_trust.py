"""Config tables ([permissions], [sandbox], [mcp_servers], [hooks]) and workspace trust."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.settings.config import load_config
from agent_cli.settings.trust import TrustStore, decide_trust


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_tables_merge_per_layer(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    _write(
        home / "agent" / "config.toml",
        '[permissions]\nallow = ["Bash(git diff:*)"]\n[mcp_servers.time]\ncommand = "uvx"\n'
        "[sandbox]\nnetwork = true\n",
    )
    _write(
        ws / ".agent" / "config.toml",
        'sandbox = "off"\n[permissions]\ndeny = ["Read(~/.ssh/**)"]\nallow = ["Bash(npm test)"]\n'
        "[hooks]\nStop = []\n",
    )
    config = load_config(ws, env={"XDG_CONFIG_HOME": str(home)})
    # kept per layer: the workspace's allow rules count only in a trusted workspace
    assert config.permissions.allow == ("Bash(git diff:*)",)
    assert config.workspace_permissions.allow == ("Bash(npm test)",)
    assert config.workspace_permissions.deny == ("Read(~/.ssh/**)",)
    assert (config.sandbox.mode, config.sandbox.network) == ("off", True)
    assert config.user_extensions.mcp_servers == {"time": {"command": "uvx"}}
    assert config.workspace_extensions.hooks == {"Stop": []}
    assert config.workspace_extensions.mcp_servers == {}


@pytest.mark.parametrize(
    "text, message",
    [
        ('sandbox = "maybe"\n', "sandbox mode"),
        ("[permissions]\nallow = 'Bash'\n", "permissions.allow"),
        ("[sandbox]\nnetwrk = true\n", "sandbox.netwrk"),
        ("mcp_servers = 3\n", "must be tables"),
    ],
)
def test_bad_tables_name_the_problem(tmp_path, text, message):
    _write(tmp_path / ".agent" / "config.toml", text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})


def test_trust_is_remembered_and_covers_subfolders(tmp_path):
    store = TrustStore(tmp_path / "cfg" / "trusted_workspaces.json")
    ws = tmp_path / "repo"
    (ws / "sub").mkdir(parents=True)
    _write(ws / ".mcp.json", "{}")
    decision = decide_trust(ws, flag=False, store=store)
    assert not decision.trusted and decision.ignored == (ws / ".mcp.json",)
    assert ".mcp.json" in decision.notice(ws) and "--trust-workspace" in decision.notice(ws)
    assert decide_trust(ws, flag=True, store=store).trusted
    store.trust(ws)
    assert store.is_trusted(ws / "sub") and not store.is_trusted(tmp_path)
    assert decide_trust(ws, flag=False, store=store).ignored == ()
    store.path.write_text("not json")  # a damaged file trusts nothing, and says nothing is trusted
    assert not store.is_trusted(ws)


def test_headless_says_once_what_an_untrusted_workspace_ignores(workspace):
    _write(workspace / ".mcp.json", json.dumps({"mcpServers": {}}))
    script = workspace.parent / "s.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}]}))
    env_home = workspace / ".cfg"
    run = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "-p", "hi", "--script", str(script)],
        cwd=workspace,
        env={"XDG_CONFIG_HOME": str(env_home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("ignoring .mcp.json") == 1
    trusted = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "-p", "hi", "--script", str(script), "--trust-workspace"],
        cwd=workspace,
        env={"XDG_CONFIG_HOME": str(env_home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert trusted.returncode == 0 and "ignoring" not in trusted.stderr


def test_the_user_layer_of_sandbox_is_kept_apart(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    _write(home / "agent" / "config.toml", '[sandbox]\nwritable = ["~/.cache"]\nbwrap = "/opt/bwrap"\n')
    _write(ws / ".agent" / "config.toml", '[sandbox]\nmode = "off"\nnetwork = true\n')
    config = load_config(ws, env={"XDG_CONFIG_HOME": str(home)})
    assert (config.sandbox.mode, config.sandbox.network, config.sandbox.bwrap) == ("off", True, "/opt/bwrap")
    user = config.user_sandbox
    assert (user.mode, user.network, user.writable, user.bwrap) == (
        "auto",
        False,
        ("~/.cache",),
        "/opt/bwrap",
    )
