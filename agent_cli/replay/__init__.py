"""Replay recorded sessions (Claude Code JSONL or our own events.jsonl) through the context engine.

May import: core, context, llm, tools, replay.

`replay(path, policy=...)` returns a `ReplayResult` (`to_json()` for programs, `render_table` for
people); the CLI's `agent replay` is built on these two.
"""

from agent_cli.replay.driver import POLICIES, ReplayError, replay, replay_async
from agent_cli.replay.report import ReplayResult, render_table

__all__ = ["POLICIES", "ReplayError", "ReplayResult", "render_table", "replay", "replay_async"]
