"""A headless run (`agent -p`): the key check, the session from compose.py, the answer printed."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from agent_cli.agent.runner import AgentSession
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


def has_key(config: "Config") -> bool:
    if config.provider != "anthropic":
        return True
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def report(text: str, level: str) -> None:
    """MCP problems, headless: one line each on stderr, as they happen."""
    print(f"agent: {text}", file=sys.stderr)


def headless(config: "Config", workspace: Path, prompt: str, fmt: str, start: Start, demo: bool) -> int:
    import asyncio

    from agent_cli.core.errors import AgentError

    if not has_key(config):
        fail(NO_KEY.replace("run `agent` again", "run `agent -p` again"))
    if prompt == "-":  # piped in: data, as a paste is (no `@` mentions, `!` or `#` read in it)
        from agent_cli.core.prompt import Prompt, PromptPart

        prompt = Prompt([PromptPart(sys.stdin.read(), pasted=True)])
    try:
        from agent_cli.cli.compose import open_session

        session = open_session(
            config,
            workspace,
            resume_id=start.resume_id,
            fork=start.fork,
            interactive=False,
            demo=demo,
            report=report,
        )
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
