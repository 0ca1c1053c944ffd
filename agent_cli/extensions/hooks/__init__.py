"""Hooks compatible with Claude Code's: events, settings format, stdin JSON, exit codes, JSON output.

api.py is what the loop knows (HookRunner, outcomes, NoHooks); spec.py parses definitions;
process.py runs one command and reads its answer; runner.py combines them per event; load.py finds
them in config and settings files; lifecycle.py runs SessionStart, SessionEnd and Notification for
one session.
"""

from agent_cli.extensions.hooks.api import (
    HookDelegate,
    HookRunner,
    NoHooks,
    PostToolOutcome,
    PreToolOutcome,
    PromptOutcome,
    StopOutcome,
    SubagentHooks,
    combine_permission,
)

__all__ = [
    "HookDelegate",
    "HookRunner",
    "NoHooks",
    "PostToolOutcome",
    "PreToolOutcome",
    "PromptOutcome",
    "StopOutcome",
    "SubagentHooks",
    "combine_permission",
]
