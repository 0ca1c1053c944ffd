"""The seam the front ends (TUI, headless) use to drive an agent session.

`AgentBackend` is implemented by agent/runner.py's AgentSession; tests and the TUI's own tests may use any
object with this shape. Every run yields core.events.Event values and ends with TurnFinished.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from agent_cli.agent.input.mentions import MentionInfo  # noqa: F401 - the prompt's mention chips
from agent_cli.core.events import ContextStatus, Event, EvictionReport, ShellInfo, ShellsChanged
from agent_cli.core.types import CommandSpec, Message
from agent_cli.llm.models import known_models
from agent_cli.session.log import SessionInfo
from agent_cli.tools.mentions.parse import find_mentions, mention_at, mention_text  # noqa: F401 - `@`
from agent_cli.tools.permissions import CYCLE as MODE_CYCLE  # noqa: F401 - Shift+Tab in the TUI
from agent_cli.tools.permissions import MODES as PERMISSION_MODES


class BackgroundShells(Protocol):
    """The session's background shells (tools/shells/manager.py), for the status bar and /shells."""

    def list(self) -> list[ShellInfo]: ...

    def tail(self, shell_id: str, chars: int = 8_000) -> str:
        """The end of a shell's output (what the model has read is not changed)."""
        ...

    async def kill(self, shell_id: str, store: object = None) -> tuple[str, bool]:
        """End a shell's process group: (the line to show, whether it was running)."""
        ...

    def subscribe(self, listener: Callable[[ShellsChanged], None]) -> Callable[[], None]:
        """`listener` gets a ShellsChanged at every start and end, in or between turns; returns
        the unsubscribe."""
        ...

    async def aclose(self) -> None:
        """End every running shell (the front end closes; the session's own end does it too)."""
        ...


class AgentBackend(Protocol):
    session_id: str
    model: str
    permission_mode: str
    permission_modes: tuple[str, ...]  # the modes it may be switched to (the front end decided)
    mode_before_plan: str  # where approving a plan returns to
    shells: BackgroundShells

    def status(self) -> ContextStatus:
        """The context gauge's numbers right now."""
        ...

    def submit(self, text: str) -> AsyncIterator[Event]:
        """Run a prompt (or a slash command when `text` starts with '/', a command when it starts
        with '!', a memory line with '#'); ends with TurnFinished. `text` may be a core.prompt.Prompt,
        whose parts keep the person's pastes apart from their words."""
        ...

    def set_permission_mode(self, mode: str) -> None:
        """Switch the permission mode now (Shift+Tab, plan approval, /permissions MODE); ValueError on a
        mode not in `permission_modes`."""
        ...

    def interrupt(self) -> None:
        """Stop the running turn: the stream is cancelled, open tool calls get an 'interrupted' result."""
        ...

    def commands(self) -> list[CommandSpec]: ...

    def breakdown(self) -> dict[str, int]:
        """Tokens by category: system, tools, user_context, messages, tool_results, summaries,
        attachments, free, reserved."""
        ...

    def eviction(self) -> EvictionReport:
        """T1's clears and misses so far, and its latest priced decision."""
        ...

    def sessions(self) -> list[SessionInfo]: ...

    def sessions_passed_over(self) -> str:
        """One line on the sessions `sessions()` passes by (not recorded by this person here, or an
        unreadable first line), why, and how to open one anyway ('' when none was)."""
        ...

    def cost(self) -> dict[str, Any]: ...

    def conversation(self) -> list[Message]:
        """The conversation so far (the full log, not the compacted view), to paint the transcript
        on start-up and after /resume or /clear."""
        ...

    async def complete_files(self, query: str) -> list[str]:
        """Workspace paths (directories end in `/`) for the `@query` being typed, best first."""
        ...

    async def describe_mentions(self, text: str) -> list[MentionInfo]:
        """The prompt's `@` mentions and pasted image paths, each with what attaching it costs in
        tokens, or the one line that says why it will not be attached."""
        ...


# The slash commands every front end offers (agent/commands.py runs them; the TUI lists them before
# the backend has loaded).
MODEL_CHOICES = tuple(name for name in known_models() if name != "scripted")
COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "list the commands"),
    CommandSpec("compact", "[focus]", "summarize the conversation now; the focus steers the summary"),
    CommandSpec("summary", "", "update the session-memory note now and show it"),
    CommandSpec("context", "", "what fills the context window, by category"),
    CommandSpec("clear", "", "start a fresh conversation (the old one stays on disk)"),
    CommandSpec("cost", "", "tokens, cache hit rate and cost of this session"),
    CommandSpec("model", "[name]", "show or change the model", MODEL_CHOICES),
    CommandSpec("resume", "[id]", "list this workspace's sessions, or switch to one"),
    CommandSpec(
        "memory", "", "open a memory file (AGENTS.md, CLAUDE.md: yours, the workspace's) or the session note"
    ),
    CommandSpec("skills", "", "the skills found, whether the model sees them, and their tokens"),
    CommandSpec(
        "init",
        "[focus]",
        "explore the repository with a read-only sub-agent, then write or update AGENTS.md (asks first)",
    ),
    CommandSpec("todo", "", "show the todo list"),
    CommandSpec(
        "permissions",
        "[mode | allow|ask|deny|revoke RULE]",
        "show the mode and rules; change the mode; add or revoke a rule (e.g. allow Bash(npm test:*))",
        (*PERMISSION_MODES, "allow", "deny", "revoke"),
    ),
    CommandSpec("export", "[file]", "the conversation as Markdown (to a file when given)"),
    CommandSpec(
        "rewind",
        "[N [both|conversation|code] | undo]",
        "go back to before prompt N: code, conversation, or both (Esc Esc); undo: the last code rewind",
    ),
    CommandSpec(
        "mcp",
        "[reconnect [name]]",
        "MCP servers: state, tools, schema tokens; reconnect one, or all failed ones",
        ("reconnect",),
    ),
    CommandSpec("shells", "", "background shells: list them; in the TUI Enter shows the tail, k kills"),
    CommandSpec("quit", "", "leave agent (also /exit)"),
)
