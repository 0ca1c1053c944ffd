"""Turns the loop's events into transcript widgets, and paints a saved conversation.

The app hands every transcript-bound event to `handle`; the renderer keeps the widgets of the turn
in flight (the streaming answer, the thinking, the tool calls by id) and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget

from agent_cli.core import events as ev
from agent_cli.core.persisted import is_persisted, parse_persisted
from agent_cli.core.types import Block, Message
from agent_cli.tui.formatting import format_duration
from agent_cli.tui.paste import format_size
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.compaction_notice import CompactionNotice
from agent_cli.tui.widgets.error_message import ErrorMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.task_call import TaskCall
from agent_cli.tui.widgets.thinking import Thinking
from agent_cli.tui.widgets.tool_call import ToolCall
from agent_cli.tui.widgets.transcript import Transcript
from agent_cli.tui.widgets.user_message import UserMessage

INTERRUPTED = "interrupted"


class TurnRenderer:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self._assistant: AssistantMessage | None = None
        self._thinking: Thinking | None = None
        self._attempt: list[Widget] = []  # what the response in flight streamed (a retry may void it)
        self._tools: dict[str, ToolCall] = {}
        self._errors_shown = 0
        self._interrupt_shown = False

    def reset(self) -> None:
        """Forget the widgets of the turn in flight (the transcript was cleared)."""
        self._assistant = None
        self._thinking = None
        self._attempt = []
        self._tools = {}

    async def begin_turn(self) -> None:
        self._errors_shown = 0
        self._interrupt_shown = False

    def error_shown(self) -> None:
        """An error panel for this turn is on screen already (a failed command's output, say)."""
        self._errors_shown += 1

    async def handle(self, event: ev.Event) -> None:
        if isinstance(event, ev.TextDelta):
            await self._text(event.text)
        elif isinstance(event, ev.ThinkingDelta):
            await self._think(event.text)
        elif isinstance(event, ev.RequestStarted):
            await self.finish_streams()
            self._attempt = []
        elif isinstance(event, ev.AssistantMessage):
            await self._assistant_done(event)
        elif isinstance(event, ev.ToolStarted):
            await self.finish_streams()
            (await self._tool(event)).start(event.target)
        elif isinstance(event, ev.ToolFinished):
            (await self._tool(event)).finish(
                event.output, is_error=event.is_error, duration=event.duration, display=event.display
            )
        elif isinstance(event, ev.PermissionDenied):
            (await self._tool(event)).deny(event.reason)
        elif isinstance(event, ev.SubagentProgress):
            widget = self._tools.get(event.call_id)
            if isinstance(widget, TaskCall):
                widget.progress(event)
        elif isinstance(event, ev.Compacted):
            await self.finish_streams()
            await self.add(
                CompactionNotice(
                    tier=event.tier,
                    trigger=event.trigger,
                    before=event.before,
                    after=event.after,
                    summary=event.summary,
                    refs=event.refs,
                )
            )
        elif isinstance(event, ev.Retrying):
            wait = format_duration(event.delay)
            dropped = ""
            if event.discarded:  # what streamed of the failed attempt is not the answer: dimmed
                dropped = " the answer above was cut off and is discarded;"
                for widget in self._attempt:
                    widget.add_class("discarded")
                self._attempt = []
                await self.finish_streams()
            await self.add(
                Notice(f"{event.reason} —{dropped} retrying in {wait} (attempt {event.attempt})", "warning")
            )
        elif isinstance(event, ev.Notice):
            self._interrupt_shown = self._interrupt_shown or event.text == INTERRUPTED
            await self.add(Notice(event.text, event.level))
        elif isinstance(event, ev.ErrorEvent):
            await self.finish_streams()
            self._errors_shown += 1
            await self.add(ErrorMessage(event.message, event.hint, kind=event.error_kind))
        elif isinstance(event, ev.TurnFinished):
            await self.end_turn(event)

    async def permission_pending(self, event: ev.PermissionRequest) -> ToolCall:
        await self.finish_streams()
        widget = await self._tool(event)
        widget.status = "pending"
        return widget

    def permission_answered(self, event: ev.PermissionRequest, decision: str | None) -> None:
        call = event.call
        widget = self._tools.get(call.id if call else "")
        if widget is not None and widget.status == "pending" and decision in ("allow_once", "allow_always"):
            widget.status = "running"

    async def end_turn(self, event: ev.TurnFinished | None) -> None:
        await self.finish_streams()
        interrupted = event is None or event.stop_reason == "interrupted"
        if interrupted:
            for widget in self._tools.values():
                widget.interrupt()
            if not self._interrupt_shown:  # the loop says it itself when it saw the interrupt
                await self.add(Notice(INTERRUPTED, "warning"))
                self._interrupt_shown = True
        elif event.stop_reason == "max_turns":
            pass  # the loop's own notice says where it stopped and how to go on
        elif event.is_error and event.result and not self._errors_shown:
            kind = "" if event.stop_reason in ("", "error") else event.stop_reason  # not "error · error"
            await self.add(ErrorMessage(event.result, kind=kind))
        self._tools = {}

    async def finish_streams(self) -> None:
        assistant, self._assistant = self._assistant, None
        thinking, self._thinking = self._thinking, None
        if thinking is not None:
            thinking.finish()
        if assistant is not None:
            await assistant.finish()

    async def add(self, *widgets: Widget) -> None:
        await self.transcript.add(*widgets)

    # -- pieces ------------------------------------------------------------------------------------
    async def _text(self, fragment: str) -> None:
        if self._thinking is not None:
            self._thinking.finish()
            self._thinking = None
        if self._assistant is None:
            self._assistant = AssistantMessage(streaming=True)
            self._attempt.append(self._assistant)
            await self.add(self._assistant)
        await self._assistant.append(fragment)

    async def _think(self, fragment: str) -> None:
        if self._thinking is None:
            self._thinking = Thinking(streaming=True)
            self._attempt.append(self._thinking)
            await self.add(self._thinking)
        self._thinking.append(fragment)

    async def _assistant_done(self, event: ev.AssistantMessage) -> None:
        streamed = self._assistant is not None or self._thinking is not None
        await self.finish_streams()
        if streamed or event.message is None:
            return
        # Nothing was streamed (a provider that does not stream): show the message whole.
        widgets: list[Widget] = []
        for block in event.message.blocks:
            if block.type == "thinking" and block.text:
                widgets.append(Thinking(block.text))
            elif block.type == "text" and block.text:
                widgets.append(AssistantMessage(block.text))
        await self.add(*widgets)

    async def _tool(
        self, event: ev.ToolStarted | ev.ToolFinished | ev.PermissionRequest | ev.PermissionDenied
    ) -> ToolCall:
        """The widget of the event's tool call, mounted on first sight."""
        call_id = event.call.id if event.call else ""
        widget = self._tools.get(call_id) if call_id else None
        if widget is None:
            name = event.call.name if event.call else "tool"
            widget = (TaskCall if name == "task" else ToolCall)(name, event.target, call_id=call_id)
            if call_id:
                self._tools[call_id] = widget
            await self.add(widget)
        return widget

    # -- a saved conversation ----------------------------------------------------------------------
    async def paint_conversation(self, messages: Sequence[Message]) -> int:
        """Paint a saved conversation (user and assistant text, tool calls collapsed), its last page
        first; returns how many entries it has."""
        widgets = conversation_widgets(messages)
        await self.transcript.add_history(widgets)
        return len(widgets)


def user_text(message: Message) -> str:
    """What the person typed in a user message (no tool results, no tagged injections)."""
    parts = [_person_text(b.text) for b in message.blocks if _is_person_text(b)]
    if any(b.type == "image" for b in message.blocks):
        parts.append("[image]")
    return "\n".join(p for p in parts if p)


def _person_text(text: str) -> str:
    """A paste T0 kept in the store is logged as its `<persisted-output>` element: shown as its chip."""
    kept = parse_persisted(text) if is_persisted(text) else None
    if kept is None:
        return text
    lines = f"{kept.lines:,} line{'s' * (kept.lines != 1)}"
    return f"[Pasted text: {format_size(kept.chars)}, {lines}]"


def _is_person_text(block: Block) -> bool:
    return block.type == "text" and not block.meta.tag and block.meta.source == "user" and bool(block.text)


def conversation_widgets(messages: Sequence[Message]) -> list[Widget]:
    results: dict[str, Block] = {}
    for message in messages:
        for block in message.tool_results():
            results[block.tool_use_id] = block
    widgets: list[Widget] = []
    for message in messages:
        if message.role == "user":
            text = user_text(message)
            if text:
                widgets.append(UserMessage(text))
            continue
        for block in message.blocks:
            if block.type == "text" and block.text and not block.meta.tag:  # not the program's own notes
                widgets.append(AssistantMessage(block.text))
            elif block.type == "thinking" and block.text:
                widgets.append(Thinking(block.text))
            elif block.type == "tool_use":
                widgets.append(_saved_tool_call(block, results.get(block.id)))
    return widgets


def _saved_tool_call(use: Block, result: Block | None) -> ToolCall:
    target = _target_of(use)
    widget = ToolCall(use.name, target, call_id=use.id, collapsed=True, status="interrupted")
    if result is not None:
        widget.output = result.text
        widget.set_reactive(ToolCall.status, "error" if result.is_error else "done")
    return widget


def _target_of(use: Block) -> str:
    for key in ("path", "file_path", "command", "pattern", "query", "ref"):
        value = use.input.get(key)
        if isinstance(value, str) and value:
            first = value.splitlines()[0] if value.strip() else value
            return first if len(first) <= 80 else first[:79] + "…"
    return ""
