"""Claude Code's settings files: which are read, in what order, and what a broken one does."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.settings.files import load_settings


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_workspace_files_only_when_trusted_and_in_order(tmp_path):
    home, ws = tmp_path / "claude", tmp_path / "ws"
    _write(home / "settings.json", '{"hooks": {}}')
    _write(ws / ".agent" / "settings.json", '{"a": 3}')
    _write(ws / ".claude" / "settings.json", '{"a": 1}')
    _write(ws / ".claude" / "settings.local.json", '{"a": 2}')
    env = {"CLAUDE_CONFIG_DIR": str(home)}

    untrusted = load_settings(ws, trusted=False, env=env)
    assert [(f.path, f.origin) for f in untrusted] == [(home / "settings.json", "user")]

    trusted = load_settings(ws, trusted=True, env=env)
    assert [f.data.get("a") for f in trusted] == [None, 1, 2, 3]
    assert [f.origin for f in trusted] == ["user", "workspace", "workspace", "workspace"]


def test_a_broken_file_is_one_line_naming_it_and_the_others_still_load(tmp_path):
    ws = tmp_path / "ws"
    _write(ws / ".claude" / "settings.json", '{"hooks": {"Stop": [}')
    _write(ws / ".claude" / "settings.local.json", "[1, 2]")
    _write(ws / ".agent" / "settings.json", '{"ok": true}')
    files = load_settings(ws, trusted=True, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "none")})
    broken, not_object, fine = files
    assert str(ws / ".claude" / "settings.json") in broken.error and "invalid JSON at line 1" in broken.error
    assert "\n" not in broken.error and broken.data == {}
    assert "must be a JSON object" in not_object.error
    assert fine.data == {"ok": True} and not fine.error


def test_a_broken_user_settings_file_is_one_warning_and_its_hooks_are_skipped(tmp_path, monkeypatch):
    from agent_cli.extensions.loader import load_extensions
    from agent_cli.settings.config import Config
    from agent_cli.settings.permission_sources import gather_rules

    home = tmp_path / "claude"
    _write(home / "settings.json", '{"hooks": ')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    ext = load_extensions(Config(), tmp_path / "ws", trusted=False)
    assert ext.warnings == () and ext.groups == ()  # the rules' reader says it, once
    assert gather_rules(Config(), tmp_path / "ws", trusted=False).warnings == (
        f"{home / 'settings.json'}: invalid JSON at line 1 column 11: Expecting value; ignored",
    )


def test_a_session_reads_the_settings_once_for_rules_and_hooks(tmp_path, monkeypatch):
    """One parse serves permission rules and hooks: a trusted workspace's rules and hooks both apply,
    and a broken file is one warning, not one per reader."""
    from agent_cli.agent.parts import SessionSetup
    from agent_cli.api.compose import compose_session
    from agent_cli.llm.scripted import Script, ScriptedProvider
    from agent_cli.settings.config import Config

    ws = tmp_path / "ws"
    hooks = {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
    settings = {"permissions": {"deny": ["Bash(rm:*)"]}, "hooks": hooks}
    _write(ws / ".claude" / "settings.json", json.dumps(settings))
    _write(ws / ".claude" / "settings.local.json", '{"permissions": ')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    config = Config(model="scripted", provider="scripted")
    session = compose_session(config, ScriptedProvider(Script(responses=[])), SessionSetup(ws, trusted=True))
    try:
        rules = [(r.rule.text, r.effect, r.source) for r in session.permissions.rules]
        assert ("Bash(rm:*)", "deny", ".claude/settings.json") in rules
        assert type(session.hooks).__name__ == "CommandHooks"  # the Stop hook of the same file
        broken = [w for w in session.warnings if "settings.local.json" in w]
        assert len(broken) == 1 and "invalid JSON" in broken[0], session.warnings
    finally:
        session.close()
