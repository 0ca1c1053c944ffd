"""The Python API, and the one composition root under it: `from agent_cli import api`.

    result = api.run("fix the failing test", cwd="repo", permission_mode="auto-edit", max_turns=20)
    result.result, result.is_error, result.session_id, result.total_cost_usd, result.usage ...

    async with api.Session(cwd="repo", can_use_tool=ask) as session:
        async for event in session.send("add a test"):   # core.events values
            ...

`compose.py` builds every session from the config (the CLI's `-p`, the TUI's launch, these calls and
the tests all get theirs from it); `options.py` is what a caller may ask; `session.py` the Session
and `run`; `result.py` the Result (Claude Code's `-p --output-format json` object); `wire.py` Claude
Code's stream-json messages.

May import: core, context, llm, tools, session, settings, extensions, agent, api.
"""

from agent_cli.api.options import Options, Prepared
from agent_cli.api.result import CompactionRecord, PermissionDenial, Result
from agent_cli.api.session import PermissionCallback, Session, run
from agent_cli.core.events import (
    AssistantMessage,
    Compacted,
    ContextUpdate,
    ErrorEvent,
    Event,
    Notice,
    PermissionDecision,
    PermissionDenied,
    PermissionRequest,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    UsageUpdate,
)

__all__ = [
    "AssistantMessage",
    "Compacted",
    "CompactionRecord",
    "ContextUpdate",
    "ErrorEvent",
    "Event",
    "Notice",
    "Options",
    "PermissionCallback",
    "PermissionDecision",
    "PermissionDenial",
    "PermissionDenied",
    "PermissionRequest",
    "Prepared",
    "Result",
    "Retrying",
    "Session",
    "TextDelta",
    "ThinkingDelta",
    "ToolFinished",
    "ToolStarted",
    "TurnFinished",
    "UsageUpdate",
    "run",
]
