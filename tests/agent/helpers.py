from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.context.model import ContextConfig
from agent_cli.core.events import Event
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config


def make_session(
    workspace: Path,
    responses: list[dict[str, Any]],
    *,
    summaries: list[str] | None = None,
    resume: str | None = None,
    interactive: bool = False,
    mode: str = "yolo",
    context: ContextConfig | None = None,
    fork: bool = False,
    **config: Any,
) -> AgentSession:
    provider = ScriptedProvider(Script(responses=responses, summaries=summaries or []))
    cfg = Config(
        model="scripted",
        provider="scripted",
        permission_mode=mode,
        debug=True,
        context=context or ContextConfig(),
        **config,
    )
    return compose_session(cfg, provider, SessionSetup(workspace, resume, interactive, fork=fork))


async def run(session: AgentSession, prompt: str, on_event=None) -> list[Event]:
    events = []
    async for event in session.submit(prompt):
        events.append(event)
        if on_event:
            await on_event(event)
    return events


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def with_provider(session: AgentSession, responses: list[dict[str, Any]]) -> ScriptedProvider:
    provider = ScriptedProvider(Script(responses=responses))
    session.provider = provider
    session.loop.provider = provider
    return provider


__all__ = ["make_session", "run", "kinds", "with_provider", "replace"]
