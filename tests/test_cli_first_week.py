"""What a person coming from Claude Code hits in their first week (audit I): a script that forgot
-p, Claude Code's model aliases, a repository's config written for a newer version, the flags
`claude -p` scripts pass, bad endpoints and values caught at start-up, and one warning per problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.settings.config import load_config
from tests.e2e import anthropic_env, clean_env, run_agent, user_config
from tests.fakeapi.replies import text, tool_call

REPO = Path(__file__).resolve().parents[1]


def agent(workspace: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_agent(workspace, clean_env(workspace), *args, stdin=stdin, timeout=60)


def test_without_p_and_without_a_terminal_it_says_so_instead_of_painting_a_screen(workspace):
    out = agent(workspace, "hi")  # stdin is /dev/null, stdout a pipe
    assert out.returncode == 2
    assert out.stderr.strip() == (
        'agent: the interactive UI needs a terminal; use -p for scripts (agent -p "PROMPT")'
    )
    assert out.stdout == "" and "\x1b[" not in out.stderr  # no escape codes


def test_a_p_only_flag_without_p_names_what_is_missing(workspace):
    for flag, value in (("--output-format", "json"), ("--input-format", "stream-json")):
        out = agent(workspace, "hi", flag, value)
        assert out.returncode == 2, out.stderr
        assert (
            out.stderr.strip() == f'agent: {flag} needs -p (a headless run): agent -p {flag} {value} "PROMPT"'
        )


def test_piped_stdin_with_p_still_runs(workspace):
    out = agent(workspace, "-p", "what is this?", "--demo", "--output-format", "json", stdin="a log line\n")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["is_error"] is False


def test_claude_codes_model_aliases_send_the_model_they_name(workspace, fake_anthropic):
    fake_anthropic.push(text("on opus"))
    out = run_agent(workspace, anthropic_env(workspace, fake_anthropic), "-p", "hi", "--model", "opus")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "on opus"
    assert "not in the model registry" not in out.stderr
    assert [request["model"] for request in fake_anthropic.requests] == ["claude-opus-5-5"]


def test_model_lists_the_aliases_and_switches_by_one(workspace):
    listing = agent(workspace, "-p", "/model", "--model", "haiku", "--demo")
    assert listing.returncode == 0, listing.stderr
    assert "Model: claude-haiku-5-5." in listing.stdout
    assert "sonnet (claude-sonnet-5-5)" in listing.stdout and "opus (claude-opus-5-5)" in listing.stdout
    switched = agent(workspace, "-p", "/model sonnet", "--demo")
    assert switched.returncode == 0, switched.stderr
    assert switched.stdout.startswith("Model set to claude-sonnet-5-5 (window ")


def test_opusplan_is_refused_at_start_saying_what_it_is(workspace):
    out = agent(workspace, "-p", "hi", "--model", "opusplan", "--demo")
    assert out.returncode == 2
    assert "--model: model 'opusplan' is Claude Code's opus in plan mode and sonnet otherwise" in out.stderr


def test_a_workspace_setting_from_a_newer_version_is_a_warning_not_a_stop(workspace):
    (workspace / ".agent").mkdir()
    (workspace / ".agent" / "config.toml").write_text(
        "future_feature = 1\nmax_turns = 5\n[context]\nnext = 2\n"
    )
    out = agent(workspace, "-p", "hi", "--demo")
    assert out.returncode == 0, out.stderr
    (line,) = [line for line in out.stderr.splitlines() if "future_feature" in line]
    assert ".agent/config.toml: ignored future_feature, context.next: not a setting" in line


def test_an_unknown_setting_in_the_persons_own_file_is_an_error_naming_the_file(workspace):
    user_config(workspace, "future_feature = 1\n")
    out = agent(workspace, "-p", "hi", "--demo")
    assert out.returncode == 2
    path = workspace / ".cfg" / "agent" / "config.toml"
    assert f"{path}: unknown setting 'future_feature'" in out.stderr


def test_a_bad_endpoint_is_one_line_at_start_not_five_retries(workspace):
    for url in ("htp:/bad", "http:/no-host", "localhost:8000"):
        env = clean_env(workspace, ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-test")
        out = run_agent(workspace, env, "-p", "hi", timeout=60)
        assert out.returncode == 2, out.stderr
        assert (
            f"agent: ANTHROPIC_BASE_URL {url!r} is not an http:// or https:// URL with a host" in out.stderr
        )
        assert "retrying" not in out.stderr


def test_values_no_request_could_carry_are_errors_naming_key_and_file(workspace):
    user_config(workspace, "max_tokens = -5\n")
    out = agent(workspace, "-p", "hi", "--demo")
    path = workspace / ".cfg" / "agent" / "config.toml"
    assert out.returncode == 2
    assert f"{path}: max_tokens must be at least 1 (output tokens per response), not -5" in out.stderr
    user_config(workspace, "")
    out = agent(workspace, "-p", "hi", "--model", "", "--demo")
    assert out.returncode == 2
    assert "agent: --model: model is empty: give a model name" in out.stderr


def test_a_broken_claude_settings_file_of_the_persons_is_one_warning(workspace, tmp_path):
    claude = tmp_path / "claude-home"
    claude.mkdir()
    (claude / "settings.json").write_text("{bad")
    env = clean_env(workspace, CLAUDE_CONFIG_DIR=str(claude))
    out = run_agent(workspace, env, "-p", "hi", "--demo", timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "settings.json" in line]
    assert len(lines) == 1 and "invalid JSON at line 1 column 2" in lines[0], out.stderr


def test_an_untrusted_workspaces_allow_rules_are_one_line(workspace):
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Bash(ls:*)"]}}')
    out = agent(workspace, "-p", "hi", "--demo")
    assert out.returncode == 0, out.stderr
    assert [line for line in out.stderr.splitlines() if "allow rules" in line] == [
        "agent: not using the allow rules of .claude/settings.json: this workspace is not trusted "
        "(pass --trust-workspace to use them)"
    ]
    listed = agent(workspace, "-p", "/permissions", "--demo")  # and /permissions still says why
    assert "- .claude/settings.json: allow rules ignored (this workspace is not trusted" in listed.stdout


def _system(request: dict) -> str:
    system = request["system"]
    return system if isinstance(system, str) else "\n".join(block["text"] for block in system)


def test_claude_codes_system_prompt_flags_replace_or_extend_it(workspace, fake_anthropic):
    env = anthropic_env(workspace, fake_anthropic)
    fake_anthropic.push(text("one"), text("two"))
    appended = run_agent(workspace, env, "-p", "hi", "--append-system-prompt", "Answer in French.")
    replaced = run_agent(workspace, env, "-p", "hi", "--system-prompt", "You are a pirate.")
    assert appended.returncode == 0 and replaced.returncode == 0, appended.stderr + replaced.stderr
    first, second = (_system(request) for request in fake_anthropic.requests)
    assert first.startswith("You are agent, a coding assistant") and "\n\nAnswer in French." in first
    assert second.startswith("You are a pirate.") and "You are agent" not in second


def test_mcp_config_brings_the_persons_servers_from_a_file(workspace, fake_anthropic, tmp_path):
    box = {
        "command": sys.executable,
        "args": ["-m", "tests.mcp_servers.toolbox"],
        "env": {"PYTHONPATH": str(REPO)},
    }
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"box": box}}))
    out = run_agent(
        workspace, anthropic_env(workspace, fake_anthropic), "-p", "/mcp", "--mcp-config", str(servers)
    )
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("| box "))
    assert row.startswith("| box | connected | ") and row.endswith("| --mcp-config |"), row


def test_settings_names_a_claude_settings_file_of_the_persons(workspace, fake_anthropic, tmp_path):
    settings = tmp_path / "ci-settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}))
    fake_anthropic.push(tool_call("bash", {"command": "echo from-the-allowed-rule"}), text("done"))
    env = anthropic_env(workspace, fake_anthropic)
    out = run_agent(workspace, env, "-p", "run it", "--settings", str(settings), "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["permission_denials"] == []  # headless, it would be refused without
    assert "from-the-allowed-rule" in json.dumps(fake_anthropic.requests[-1]["messages"][-1])
    missing = run_agent(workspace, env, "-p", "hi", "--settings", str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert f"agent: --settings {tmp_path / 'nope.json'}: no such file" in missing.stderr


def test_mcp_config_takes_several_files_as_claude_code_does():
    import typer

    from agent_cli.cli.commands import normalize, typer_app

    command = typer.main.get_command(typer_app())
    argv = ["-p", "--mcp-config", "a.json", "b.json", "fix it"]
    assert normalize(argv, command) == [
        "-p",
        "--mcp-config",
        "a.json",
        "--mcp-config",
        "b.json",
        "--prompt=fix it",
    ]


def test_an_openai_endpoint_is_checked_too_naming_where_it_was_set(tmp_path):
    home = tmp_path / "home"
    env = {"XDG_CONFIG_HOME": str(home), "OPENAI_BASE_URL": "localhost:8000/v1"}
    with pytest.raises(ConfigError, match="^OPENAI_BASE_URL 'localhost:8000/v1' is not an http"):
        load_config(tmp_path, {"provider": "openai"}, env=env)
    (home / "agent").mkdir(parents=True)
    (home / "agent" / "config.toml").write_text('[openai]\nbase_url = "http//x"\n')
    with pytest.raises(ConfigError, match=r"config.toml: openai.base_url 'http//x' is not an http"):
        load_config(tmp_path, {"provider": "openai"}, env={"XDG_CONFIG_HOME": str(home)})
    assert load_config(tmp_path, {"provider": "anthropic"}, env=env).provider == "anthropic"  # not in use
