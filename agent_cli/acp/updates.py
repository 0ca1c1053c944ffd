"""A turn's events (`core.events`, what the TUI renders) as ACP session updates.

Text and thinking stream as message and thought chunks; a tool call is announced once (pending
while it waits for a permission answer, in progress once it runs) and updated when it ends, with
edit_file/write_file as ACP diffs; the todo list is the plan; the context gauge and the session's
cost are `usage_update`; a compaction is a `compaction_update` for clients that declared it,
else a line in the agent's message; notices and slash-command output are message text (an API
error that ends the turn is the prompt's JSON-RPC error: live.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import Cost, ToolCallLocation, ToolCallUpdate, UsageUpdate

from agent_cli.core.events import (
    CommandResult,
    Compacted,
    ContextStatus,
    ContextUpdate,
    Event,
    Notice,
    PermissionDenied,
    PermissionRequest,
    Retrying,
    SubagentProgress,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
)
from agent_cli.core.events import UsageUpdate as CostUpdate
from agent_cli.core.types import ToolCall

KINDS = {
    "read_file": "read",
    "ls": "read",
    "recall": "read",
    "grep": "search",
    "glob": "search",
    "mcp_search": "search",
    "skill_search": "search",
    "edit_file": "edit",
    "write_file": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "kill_shell": "execute",
    "web_fetch": "fetch",
    "web_search": "fetch",
    "todo_write": "think",
    "task": "think",
    "skill": "read",
}
SHOWN_CHARS = 20_000  # of a tool's output, for the client (the model gets it whole)


@dataclass(frozen=True)
class CompactionUpdate:
    """The draft `compaction_update` (ACP's session-compaction RFD), not in the SDK yet: sent as a
    plain session/update to clients that declared `session.compaction`."""

    compaction_id: str
    status: str = "completed"

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionUpdate": "compaction_update",
            "compactionId": self.compaction_id,
            "status": self.status,
        }


Update = Any  # an acp.schema session update, or a CompactionUpdate


class Updates:
    """The updates of one session's events. `status` is the gauge now, `todo` the todo list now."""

    def __init__(
        self,
        workspace: Path,
        status: Callable[[], ContextStatus],
        todo: Callable[[], list[dict[str, Any]]],
        *,
        compaction_updates: bool = False,
    ) -> None:
        self.workspace = workspace
        self.status = status
        self.todo = todo
        self.compaction_updates = compaction_updates
        self.announced: set[str] = set()
        self.running: dict[str, None] = {}  # announced and not ended, in order
        self.cost_usd = 0.0
        self._compactions = 0
        self._last_usage: tuple[int, int, float] | None = None

    def of(self, event: Event) -> list[Update]:
        if isinstance(event, TextDelta) and event.text:
            return [update_agent_message_text(event.text)]
        if isinstance(event, ThinkingDelta) and event.text:
            return [update_agent_thought_text(event.text)]
        if isinstance(event, PermissionRequest) and event.call is not None:
            return self.announce(event.call, event.target, "pending")
        if isinstance(event, ToolStarted) and event.call is not None:
            return self.announce(event.call, event.target, "in_progress")
        if isinstance(event, ToolFinished) and event.call is not None:
            return self.finished(event)
        if isinstance(event, PermissionDenied) and event.call is not None:
            call = event.call
            announced = self.announce(call, event.target, "pending")
            self.running.pop(call.id, None)
            denied = update_tool_call(call.id, status="failed", content=[_text(f"not run: {event.reason}")])
            return [*announced, denied]
        if isinstance(event, SubagentProgress) and event.call_id in self.announced:
            return [update_tool_call(event.call_id, content=[_text("\n".join(event.steps) or event.step)])]
        if isinstance(event, CostUpdate):
            self.cost_usd = event.cost_usd
            return self.usage()
        if isinstance(event, ContextUpdate):
            return self.usage(event.status)
        if isinstance(event, Compacted):
            return self.compacted(event)
        if isinstance(event, CommandResult) and event.text:
            return [update_agent_message_text(_paragraph(event.text))]
        if isinstance(event, Notice) and event.text:
            return [update_agent_message_text(_paragraph(f"[{event.level}] {event.text}"))]
        if isinstance(event, TurnFinished) and self.running:  # an interrupted turn ends its calls
            ended = [
                update_tool_call(i, status="failed", content=[_text("interrupted")]) for i in self.running
            ]
            self.running.clear()
            return ended
        if isinstance(event, Retrying):
            retry = [update_agent_thought_text(f"\n(retrying in {event.delay:.0f} s: {event.reason})\n")]
            if event.discarded:  # the editor cannot take back the chunks it got: it is told they are void
                cut = (
                    f"[{event.reason}: the answer above was cut off and is discarded; it starts again below]"
                )
                return [update_agent_message_text(_paragraph(cut)), *retry]
            return retry
        return []

    # -- tool calls ---------------------------------------------------------------------------------
    def announce(self, call: ToolCall, target: str, status: str) -> list[Update]:
        """The call's `tool_call` the first time it is seen; after that, its new status."""
        if call.id in self.announced:
            return [update_tool_call(call.id, status=status)] if status == "in_progress" else []
        self.announced.add(call.id)
        self.running[call.id] = None
        return [
            start_tool_call(
                call.id,
                title(call, target),
                kind=KINDS.get(call.name, "other"),
                status=status,
                content=self.diff(call),
                locations=self.locations(call),
                raw_input=call.input,
            )
        ]

    def question(self, request: PermissionRequest) -> ToolCallUpdate:
        """The tool call a permission question is about, as `session/request_permission` shows it."""
        call = request.call
        assert call is not None
        content = self.diff(call) or ([_text(request.detail)] if request.detail else None)
        return ToolCallUpdate(
            tool_call_id=call.id,
            title=title(call, request.target),
            kind=KINDS.get(call.name, "other"),
            status="pending",
            content=content,
            locations=self.locations(call),
            raw_input=call.input,
        )

    def finished(self, event: ToolFinished) -> list[Update]:
        call = event.call
        assert call is not None
        out = self.announce(call, event.target, "in_progress")
        content: list[Any] = list(self.diff(call) or []) if not event.is_error else []
        shown = event.output if len(event.output) <= SHOWN_CHARS else event.output[:SHOWN_CHARS] + "\n…"
        if shown:
            content.append(_text(shown))
        status = "failed" if event.is_error else "completed"
        self.running.pop(call.id, None)
        out.append(
            update_tool_call(call.id, status=status, content=content, raw_output=event.output[:SHOWN_CHARS])
        )
        if call.name == "todo_write" and not event.is_error:
            out.append(self.plan())
        return out

    def plan(self) -> Update:
        return update_plan(
            plan_entry(str(item.get("content", "")), status=item.get("status", "pending"))
            for item in self.todo()
        )

    def diff(self, call: ToolCall) -> list[Any] | None:
        """edit_file and write_file as ACP diffs (the edit's old and new text, a write's content)."""
        path = self.path(call)
        data = call.input
        if path is None:
            return None
        if call.name == "edit_file" and isinstance(data.get("new_string"), str):
            old = data.get("old_string")
            return [
                tool_diff_content(path, data["new_string"], old if isinstance(old, str) and old else None)
            ]
        if call.name == "write_file" and isinstance(data.get("content"), str):
            return [tool_diff_content(path, data["content"])]
        return None

    def locations(self, call: ToolCall) -> list[ToolCallLocation] | None:
        path = self.path(call)
        return [ToolCallLocation(path=path)] if path is not None else None

    def path(self, call: ToolCall) -> str | None:
        value = call.input.get("path")
        if (
            call.name not in ("read_file", "edit_file", "write_file", "ls")
            or not isinstance(value, str)
            or not value
        ):
            return None
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else self.workspace / path)

    # -- the gauge and compaction -------------------------------------------------------------------
    def usage(self, status: ContextStatus | None = None) -> list[Update]:
        """The gauge as `usage_update`: tokens in use, the budget they fill (the usable window, what
        the TUI's gauge shows; the model's window is in `_meta`), and the session's cost so far."""
        status = status or self.status()
        key = (status.used, status.budget, round(self.cost_usd, 6))
        if key == self._last_usage:
            return []
        self._last_usage = key
        meta = {
            "agent": {
                "window": status.window,
                "reserved": status.reserved,
                "autoCompactAt": status.auto_mark,
            }
        }
        cost = Cost(amount=round(self.cost_usd, 6), currency="USD")
        return [
            UsageUpdate(
                session_update="usage_update",
                used=status.used,
                size=status.budget,
                cost=cost,
                field_meta=meta,
            )
        ]

    def compacted(self, event: Compacted) -> list[Update]:
        self._compactions += 1
        if self.compaction_updates:
            return [CompactionUpdate(f"compaction-{self._compactions}")]
        line = f"[context compacted: {event.tier}, {event.before:,} → {event.after:,} tokens"
        line += f" ({event.trigger})]" if event.trigger else "]"
        return [update_agent_message_text(_paragraph(line))]


def title(call: ToolCall, target: str) -> str:
    return f"{call.name} {target}".strip()


def _text(text: str) -> Any:
    return tool_content(text_block(text))


def _paragraph(text: str) -> str:
    return f"\n\n{text.strip()}\n\n"
