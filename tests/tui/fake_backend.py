"""A scripted AgentBackend for the TUI's tests: yields event sequences, honours interrupt().

Scripts map a prompt to a list of steps: plain events are yielded as they are; `Pause(name)` waits
until the test calls `release(name)` (or the turn is interrupted); `Ask(...)` yields a
PermissionRequest and awaits its future before the tool "runs". `log` records the order of things.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.agent.api import CommandSpec, SessionInfo
from agent_cli.core.events import (
    CommandResult,
    Compacted,
    ContextStatus,
    ContextUpdate,
    Event,
    PermissionDenied,
    PermissionRequest,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
    UsageUpdate,
)
from agent_cli.core.types import Block, Message, ToolCall, Usage

MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5")


@dataclass(frozen=True)
class Pause:
    name: str


@dataclass(frozen=True)
class Ask:
    call: ToolCall
    target: str
    reason: str = "bash runs commands; ask mode asks first"
    output: str = "ok"
    duration: float = 0.5
    rule: str = ""
    detail: str = ""
    detail_kind: str = ""
    cwd: str = ""


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "show the commands and keys"),
    CommandSpec("compact", "[focus]", "summarize the conversation now"),
    CommandSpec("summary", "", "update the session-memory note and show it"),
    CommandSpec("context", "", "show what fills the context"),
    CommandSpec("clear", "", "start a new conversation"),
    CommandSpec("cost", "", "tokens and cost"),
    CommandSpec("model", "[name]", "show or switch the model", MODELS),
    CommandSpec("resume", "[id]", "resume a session"),
    CommandSpec("memory", "", "show the session-memory note"),
    CommandSpec("todo", "", "show the todo list"),
    CommandSpec("permissions", "[mode]", "show or set the permission mode", ("ask", "auto-edit", "yolo")),
    CommandSpec("export", "[path]", "write the conversation to Markdown"),
    CommandSpec("quit", "", "leave"),
)

BREAKDOWN = {
    "system": 3_100,
    "tools": 11_800,
    "user_context": 2_400,
    "messages": 18_900,
    "tool_results": 12_300,
    "summaries": 0,
    "attachments": 2_700,  # the parts add up to the status's 51,200 in use
    "free": 128_800,
    "reserved": 20_000,
}

SUMMARY = """## Goal
Make the failing test in `tests/test_parse.py` pass.

## Completed work
- Read `src/parse.py`; the tokenizer dropped trailing commas.
- Fixed `split_fields` and ran the tests: 42 passed.

## Remaining work
- The changelog entry is not written yet."""


def tool_call(id: str, name: str, **input: Any) -> ToolCall:
    return ToolCall(id=id, name=name, input=dict(input))


def demo_conversation() -> list[Message]:
    return [
        Message("user", (Block.text_block("fix the parser"),), turn=1),
        Message(
            "assistant",
            (Block.text_block("Let me look."), Block.tool_use("t1", "read_file", {"path": "src/parse.py"})),
            turn=1,
        ),
        Message("user", (Block.tool_result("t1", "1  def split_fields(line):\n2      ..."),), turn=1),
        Message("assistant", (Block.text_block("Fixed **split_fields**."),), turn=1),
    ]


class FakeBackend:
    def __init__(
        self,
        scripts: dict[str, Sequence[Event | Pause | Ask]] | None = None,
        *,
        model: str = "claude-sonnet-5-5",
        permission_mode: str = "ask",
        status: ContextStatus | None = None,
        conversation: list[Message] | None = None,
        sessions: list[SessionInfo] | None = None,
        saved: dict[str, list[Message]] | None = None,
    ) -> None:
        self.scripts = dict(scripts or {})
        self.session_id = "s-current"
        self.workspace = "/home/dev/parser"  # fixed, so snapshots do not depend on where tests run
        self.model = model
        self.permission_mode = permission_mode
        self.mode_before_plan = "ask"
        self.modes: list[str] = []  # every set_permission_mode, in order
        self._status = status or ContextStatus(used=51_200, budget=200_000)
        self._conversation = list(conversation or [])
        self._sessions = list(sessions or [])
        self._saved = dict(saved or {})
        self.log: list[str] = []
        self.submitted: list[str] = []
        self.decisions: list[str] = []
        self.interrupts = 0
        self._interrupted: asyncio.Event | None = None
        self._gates: dict[str, asyncio.Event] = {}
        self.reached: set[str] = set()

    # -- test controls -----------------------------------------------------------------------------
    def release(self, name: str) -> None:
        self._gate(name).set()

    def _gate(self, name: str) -> asyncio.Event:
        return self._gates.setdefault(name, asyncio.Event())

    def set_status(self, status: ContextStatus) -> None:
        self._status = status

    # -- AgentBackend ------------------------------------------------------------------------------
    def status(self) -> ContextStatus:
        return self._status

    def commands(self) -> list[CommandSpec]:
        return list(COMMANDS)

    def breakdown(self) -> dict[str, int]:
        return dict(BREAKDOWN)

    def sessions(self) -> list[SessionInfo]:
        return list(self._sessions)

    def sessions_passed_over(self) -> str:
        return ""

    def cost(self) -> dict[str, Any]:
        return {"cost_usd": 0.0123, "cache_hit_rate": 0.94}

    def conversation(self) -> list[Message]:
        return list(self._conversation)

    def set_permission_mode(self, mode: str) -> None:
        if mode == "plan" and self.permission_mode != "plan":
            self.mode_before_plan = self.permission_mode
        self.permission_mode = mode
        self.modes.append(mode)

    def interrupt(self) -> None:
        self.interrupts += 1
        self.log.append("interrupt")
        if self._interrupted is not None:
            self._interrupted.set()

    async def submit(self, text: str) -> AsyncIterator[Event]:
        self.submitted.append(text)
        self.log.append(f"submit:{text}")
        self._interrupted = asyncio.Event()
        yield TurnStarted(prompt=text)
        if text.startswith("/"):
            for event in self._command(text):
                yield event
            yield TurnFinished(stop_reason="command")
            return
        self._conversation.append(Message("user", (Block.text_block(text),)))
        steps = self.scripts.get(text, [TextDelta(text=f"echo: {text}")])
        for step in steps:
            if self._interrupted.is_set():
                break
            if isinstance(step, Pause):
                self.reached.add(step.name)
                await self._wait(self._gate(step.name).wait())
            elif isinstance(step, Ask):
                async for event in self._ask(step):
                    yield event
            else:
                if isinstance(step, ToolStarted) and step.call:
                    self.log.append(f"run:{step.call.name}")
                yield step
                await asyncio.sleep(0)
        if self._interrupted.is_set():
            self.log.append("finished:interrupted")
            yield TurnFinished(stop_reason="interrupted", is_error=True)
        else:
            self.log.append("finished")
            said = "".join(s.text for s in steps if isinstance(s, TextDelta))
            yield TurnFinished(stop_reason="end_turn", result=said or "done", num_turns=1)

    async def _wait(self, awaitable: Any) -> None:
        assert self._interrupted is not None
        waiter = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._interrupted.wait())
        await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
        for task in (waiter, stop):
            task.cancel()

    async def _ask(self, step: Ask) -> AsyncIterator[Event]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.log.append(f"ask:{step.call.name}")
        yield PermissionRequest(
            call=step.call,
            target=step.target,
            reason=step.reason,
            rule=step.rule,
            detail=step.detail,
            detail_kind=step.detail_kind,
            cwd=step.cwd,
            future=future,
        )
        await self._wait(asyncio.shield(future))
        if not future.done():
            future.cancel()
            return
        decision = future.result()
        self.decisions.append(decision)
        self.log.append(f"decision:{decision}")
        if decision == "deny":
            yield PermissionDenied(call=step.call, target=step.target, reason="denied by you")
            return
        self.log.append(f"run:{step.call.name}")
        yield ToolStarted(call=step.call, target=step.target)
        yield ToolFinished(call=step.call, target=step.target, output=step.output, duration=step.duration)

    # -- commands ----------------------------------------------------------------------------------
    def _command(self, text: str) -> list[Event]:
        name, _, arg = text[1:].strip().partition(" ")
        arg = arg.strip()
        handler = getattr(self, f"_cmd_{name}", None)
        if handler is None:
            return [
                CommandResult(
                    name=name,
                    text=f"Unknown command `/{name}`. Type /help to see the commands.",
                    is_error=True,
                )
            ]
        return handler(arg)

    def _cmd_help(self, arg: str) -> list[Event]:
        lines = [f"- `/{c.name}` {c.args} — {c.help}" for c in COMMANDS]
        return [CommandResult(name="help", text="## Commands\n\n" + "\n".join(lines))]

    def _cmd_compact(self, arg: str) -> list[Event]:
        before, after = self._status.used, 30_000
        self._status = ContextStatus(used=after, budget=self._status.budget)
        return [
            Compacted(tier="T4", trigger="manual", before=before, after=after, summary=SUMMARY, refs=("c1",)),
            ContextUpdate(status=self._status),
            CommandResult(
                name="compact", text=f"Compacted the conversation{' (focus: ' + arg + ')' if arg else ''}."
            ),
        ]

    def _cmd_summary(self, arg: str) -> list[Event]:
        return [CommandResult(name="summary", text="# Session memory\n\n" + SUMMARY)]

    def _cmd_memory(self, arg: str) -> list[Event]:
        return [CommandResult(name="memory", text="# Session memory\n\n## Current Goal\nFix the parser.")]

    def _cmd_todo(self, arg: str) -> list[Event]:
        return [CommandResult(name="todo", text="- [x] read the parser\n- [ ] write the changelog")]

    def _cmd_clear(self, arg: str) -> list[Event]:
        self._conversation = []
        return [CommandResult(name="clear", text="Started a new conversation.")]

    def _cmd_cost(self, arg: str) -> list[Event]:
        usage = Usage(input_tokens=1_200, output_tokens=800, cache_read_input_tokens=40_000)
        return [
            UsageUpdate(usage=usage, total=usage, cost_usd=0.0456, cache_hit_rate=0.97),
            CommandResult(name="cost", text="| | |\n|---|---|\n| cost | $0.0456 |\n| cache hit rate | 97% |"),
        ]

    def _cmd_model(self, arg: str) -> list[Event]:
        if not arg:
            return [CommandResult(name="model", text=f"Model: {self.model}")]
        if arg not in MODELS:
            return [CommandResult(name="model", text=f"Unknown model `{arg}`.", is_error=True)]
        self.model = arg
        return [CommandResult(name="model", text=f"Model set to {arg}.")]

    def _cmd_permissions(self, arg: str) -> list[Event]:
        if arg:
            self.permission_mode = arg
        return [CommandResult(name="permissions", text=f"Permission mode: {self.permission_mode}")]

    def _cmd_export(self, arg: str) -> list[Event]:
        path = arg or "conversation.md"
        return [
            CommandResult(name="export", text=f"Wrote the conversation to `{path}`.", data={"path": path})
        ]

    def _cmd_resume(self, arg: str) -> list[Event]:
        if arg not in self._saved:
            return [CommandResult(name="resume", text=f"No session `{arg}`.", is_error=True)]
        self.session_id = arg
        self._conversation = list(self._saved[arg])
        return [CommandResult(name="resume", text=f"Resumed session {arg}.")]
