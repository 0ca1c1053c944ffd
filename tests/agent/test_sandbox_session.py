"""The session gives bash its sandbox: from the person's [sandbox] (a workspace's is ignored: see
tests/agent/test_config_trust.py), with the permission mode of the moment, and says in permission
prompts and denials where a command runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.core.events import PermissionDenied, PermissionRequest, ToolFinished
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config, SandboxConfig

from .helpers import make_session, run

MISSING = SandboxConfig(bwrap="/nonexistent/bin/bwrap")
BASH = [{"tool_calls": [{"name": "bash", "input": {"command": "echo hi"}}]}, {"text": "done"}]


def session(workspace: Path, trusted: bool, **config) -> AgentSession:
    cfg = Config(model="scripted", provider="scripted", **config)
    provider = ScriptedProvider(Script(responses=[]))
    return compose_session(cfg, provider, SessionSetup(workspace, None, False, trusted))


async def test_headless_denial_says_bash_would_run_unconfined_without_bwrap(workspace: Path) -> None:
    s = make_session(workspace, BASH, mode="ask", sandbox=MISSING)
    events = await run(s, "say hi")
    (denied,) = [e for e in events if isinstance(e, PermissionDenied)]
    assert "no sandbox" in denied.reason and "apt install bubblewrap" in denied.reason


async def test_the_mode_is_read_when_the_command_runs(workspace: Path) -> None:
    """/permissions yolo mid-session: bash is then held to yolo's rule (no bwrap: refused)."""
    s = make_session(workspace, BASH, mode="ask", interactive=True, sandbox=MISSING)
    s.set_permission_mode("yolo")
    events = await run(s, "say hi")
    (finished,) = [e for e in events if isinstance(e, ToolFinished)]
    assert finished.is_error and "apt install bubblewrap" in finished.output


async def test_the_permission_prompt_names_the_sandbox(workspace: Path) -> None:
    s = make_session(workspace, BASH, mode="ask", interactive=True, sandbox=MISSING)
    asked: list[PermissionRequest] = []

    async def answer(event) -> None:
        if isinstance(event, PermissionRequest):
            asked.append(event)
            event.future.set_result("deny")
            await asyncio.sleep(0)

    await run(s, "say hi", answer)
    assert len(asked) == 1 and "runs unconfined" in asked[0].reason
