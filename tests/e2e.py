"""Running the real CLI as a person does, for the end-to-end tests: `python -m agent_cli.cli ARGS` in
a workspace, with an environment that points a provider at a local fake server (tests/fakeapi/) and
keeps the person's own API keys and config out of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.fakeapi.openai_server import FakeOpenAI
    from tests.fakeapi.server import FakeAnthropic

AGENT = [sys.executable, "-m", "agent_cli.cli"]


def clean_env(workspace: Path, config_dir: str = ".cfg", **extra: str) -> dict[str, str]:
    """This process's environment without provider settings, the user config dir in the workspace."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(XDG_CONFIG_HOME=str(workspace / config_dir), **extra)
    return env


def anthropic_env(workspace: Path, server: FakeAnthropic) -> dict[str, str]:
    return clean_env(workspace, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-test")


def openai_env(workspace: Path, server: FakeOpenAI, key: str = "sk-test") -> dict[str, str]:
    return clean_env(workspace, OPENAI_BASE_URL=server.url, OPENAI_API_KEY=key)


def run_agent(
    workspace: Path, env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 180
) -> subprocess.CompletedProcess:
    piped = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}  # never the test's own
    return subprocess.run(
        [*AGENT, *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=timeout, **piped
    )


def agent(workspace: Path, server: FakeAnthropic, *args: str) -> subprocess.CompletedProcess:
    """`agent ARGS` against the fake Anthropic server."""
    return run_agent(workspace, anthropic_env(workspace, server), *args)


def openai_agent(
    workspace: Path, server: FakeOpenAI, *args: str, key: str = "sk-test"
) -> subprocess.CompletedProcess:
    """`agent --provider openai ARGS` against the fake OpenAI server."""
    return run_agent(workspace, openai_env(workspace, server, key), "--provider", "openai", *args)


def big_files(workspace: Path, count: int, chars: int) -> list[str]:
    """`count` text files of about `chars` characters each, for tool output that fills a context."""
    names = []
    for i in range(count):
        name = f"data_{i}.txt"
        line = f"record {i}: " + "lorem ipsum dolor sit amet " * 3
        (workspace / name).write_text("\n".join(f"{n:05d} {line}" for n in range(chars // len(line))) + "\n")
        names.append(name)
    return names


READ_ALL = ("-p", "read them all", "--permission-mode", "yolo", "--output-format", "json")


def script_reads(server: FakeAnthropic | FakeOpenAI, names: list[str], answer: str = "Done reading.") -> None:
    """Script the model to read each file in turn, then answer (run it with `READ_ALL`)."""
    from tests.fakeapi.replies import text, tool_call

    for name in names:
        server.push(tool_call("read_file", {"path": name}))
    server.push(text(answer))


def user_config(workspace: Path, text: str) -> None:
    """The person's own ~/.config/agent/config.toml (the XDG_CONFIG_HOME `clean_env` sets)."""
    path = workspace / ".cfg" / "agent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def tool_results(server: FakeAnthropic) -> list[str]:
    """The tool_result texts of the server's last request, in order."""
    out = []
    for message in server.requests[-1]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def denials(data: dict) -> list[str]:
    """The JSON result's `permission_denials` (Claude Code's objects) as one line each:
    "TOOL TARGET: REASON", TOOL as Claude Code names it (Bash, Write, …)."""
    lines = []
    for denial in data["permission_denials"]:
        assert set(denial) >= {"tool_name", "tool_use_id", "tool_input"}, denial
        lines.append(f"{denial['tool_name']} {denial['target']}: {denial['reason']}")
    return lines
