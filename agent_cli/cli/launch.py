"""From a resolved config to a running session: the provider the config names, whether the
workspace is trusted, the session itself, and a headless run (`agent -p`)."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agent_cli.agent.runner import AgentSession
    from agent_cli.llm.base import Provider
    from agent_cli.settings.config import Config

NO_KEY = (
    "No API key found. Set one with\n\n"
    "    export ANTHROPIC_API_KEY=sk-ant-...\n\n"
    "(or point ANTHROPIC_BASE_URL at an Anthropic-compatible server), then run `agent` again.\n"
    "To try agent without a key, run `agent --demo` (a scripted model, offline)."
)


class Start(NamedTuple):
    """Which session a run opens: a new one, `resume_id`, or a copy of it (`fork`)."""

    resume_id: str | None = None
    fork: bool = False


def fail(message: str, code: int = 2) -> None:
    print(f"agent: {message}", file=sys.stderr)
    raise SystemExit(code)


def make_provider(config: "Config", demo: bool) -> "Provider":
    """The provider the config names. Raises ConfigError when it cannot be built."""
    if config.provider == "scripted":
        from agent_cli.llm.scripted import Script, ScriptedProvider, demo_provider

        if config.script:
            return ScriptedProvider(Script.load(Path(config.script)), model=config.model)
        return demo_provider()
    if config.provider == "openai":
        from agent_cli.llm.models import registry
        from agent_cli.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(config.openai, registry=registry(config.models))
    from agent_cli.llm.anthropic import AnthropicProvider

    return AnthropicProvider(base_url=config.base_url or None)


def has_key(config: "Config") -> bool:
    if config.provider != "anthropic":
        return True
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def trust_decision(config: "Config", workspace: Path):
    """Whether the workspace's code-running files (.mcp.json, hooks, settings) may be used."""
    from agent_cli.settings.trust import TrustStore, decide_trust

    ext = config.workspace_extensions
    return decide_trust(
        workspace,
        flag=config.trust_workspace,
        store=TrustStore.default(),
        has_workspace_extensions=bool(ext.mcp_servers or ext.hooks),
    )


def build_session(
    config: "Config",
    workspace: Path,
    start: Start,
    interactive: bool,
    demo: bool,
    trusted: bool | None = None,
) -> "AgentSession":
    from agent_cli.agent.runner import AgentSession, SessionSetup

    if demo and config.model == "claude-sonnet-5-5":
        from dataclasses import replace

        config = replace(config, model="scripted")
    provider = make_provider(config, demo)
    prepare = getattr(provider, "prepare", None)
    if interactive and callable(prepare):
        prepare()  # import the SDK here, off the UI's event loop (the TUI calls this in a thread)
    trust = trust_decision(config, workspace)
    if not interactive and trust.ignored:
        print(f"agent: {trust.notice(workspace)}", file=sys.stderr)
    trusted = trust.trusted if trusted is None else trusted
    from agent_cli.extensions.mcp.runtime import runtime_for

    on_problem = None if interactive else report
    mcp = runtime_for(config, workspace, trusted=trusted, interactive=interactive, report=on_problem)
    setup = SessionSetup(workspace, start.resume_id, interactive, trusted, fork=start.fork)
    return AgentSession(config, provider, setup, mcp=mcp)


def report(text: str, level: str) -> None:
    """MCP problems, headless: one line each on stderr, as they happen."""
    print(f"agent: {text}", file=sys.stderr)


def headless(config: "Config", workspace: Path, prompt: str, fmt: str, start: Start, demo: bool) -> int:
    import asyncio

    from agent_cli.core.errors import AgentError

    if not has_key(config):
        fail(NO_KEY.replace("run `agent` again", "run `agent -p` again"))
    if prompt == "-":
        prompt = sys.stdin.read()
    try:
        session = build_session(config, workspace, start, interactive=False, demo=demo)
    except AgentError as exc:
        fail(str(exc))
        raise
    try:
        return asyncio.run(_run_headless(session, prompt, fmt))
    except KeyboardInterrupt:
        print("agent: interrupted", file=sys.stderr)
        return 130
    finally:
        session.close()


async def _run_headless(session: "AgentSession", prompt: str, fmt: str) -> int:
    from agent_cli.agent.headless import run_headless

    try:
        return await run_headless(session, prompt, fmt)  # type: ignore[arg-type]
    finally:
        await session.aclose()  # stops MCP servers on the loop they run on
