"""What bash, hooks and MCP servers see of the environment (tools/sandbox/child_env.py): the person's
environment without the agent's keys and secret-looking names, unless passed through on purpose."""

from __future__ import annotations

import os

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.bash import BashTool
from agent_cli.tools.sandbox.child_env import ChildEnv

PERSON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "SSH_AUTH_SOCK": "/run/ssh.sock",
    "EDITOR": "vim",
    "ANTHROPIC_API_KEY": "sk-ant-1",
    "ANTHROPIC_AUTH_TOKEN": "tok-1",
    "OPENAI_API_KEY": "sk-2",
    "GITHUB_TOKEN": "ghp_3",
    "GH_TOKEN": "ghp_4",
    "AWS_ACCESS_KEY_ID": "AKIA5",
    "AWS_SECRET_ACCESS_KEY": "s6",
    "AWS_PROFILE": "work",
    "MY_PASSWORD": "p7",
    "db_passwd": "p8",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/gcp.json",
    "NPM_TOKEN": "n9",
    "STRIPE_SECRET": "s10",
    "GITLAB_PAT": "g11",
    "NPM_CONFIG__AUTH": "a12",
    "VLLM_PASS": "v13",  # not secret-looking: only withheld when it is the configured key's variable
}
KEPT = {"PATH", "HOME", "LANG", "SSH_AUTH_SOCK", "EDITOR", "VLLM_PASS"}


def test_the_default_keeps_the_person_s_setup_and_withholds_secrets() -> None:
    built = ChildEnv().build(PERSON)
    assert set(built) == KEPT
    assert ChildEnv().withheld(PERSON) == sorted(set(PERSON) - KEPT)


def test_the_configured_key_variable_is_withheld_and_passthrough_passes_on_purpose() -> None:
    from agent_cli.llm.openai_compat import OpenAISettings
    from agent_cli.settings.config import Config, SandboxConfig

    config = Config(
        openai=OpenAISettings("http://gpu-box/v1", "VLLM_PASS"),
        sandbox=SandboxConfig(env_passthrough=("GITHUB_TOKEN", "AWS_*")),
    )
    built = config.child_env().build(PERSON)
    assert "VLLM_PASS" not in built and "ANTHROPIC_API_KEY" not in built
    assert {"GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"} <= set(built)
    assert "GH_TOKEN" not in built and "MY_PASSWORD" not in built


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_PASSWORD", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(name, f"value-of-{name.lower()}")


async def test_bash_gets_the_scrubbed_environment(tmp_path, secrets) -> None:
    result = await BashTool().run({"command": "env"}, ToolContext(tmp_path))
    assert "value-of-" not in result.output
    assert f"PATH={os.environ['PATH']}" in result.output and "HOME=" in result.output
    passed = ToolContext(tmp_path, child_env=ChildEnv(passthrough=("GITHUB_TOKEN",)))
    result = await BashTool().run({"command": "env"}, passed)
    assert "GITHUB_TOKEN=value-of-github_token" in result.output
    assert result.output.count("value-of-") == 1
