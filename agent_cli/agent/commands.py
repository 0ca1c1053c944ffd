"""Slash commands at the loop level: the TUI and `agent -p "/..."` both run them through here."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_cli.agent.api import COMMANDS, MODEL_CHOICES, AgentBackend, CommandSpec  # noqa: F401
from agent_cli.agent.loop import compacted_event
from agent_cli.agent.side_requests import measure_prefix
from agent_cli.core.errors import AgentError, NothingToGain
from agent_cli.core.events import CommandResult, ContextUpdate, Event, TurnFinished, UsageUpdate
from agent_cli.core.types import ModelInfo, Totals, Usage
from agent_cli.session.export import conversation_markdown
from agent_cli.session.timeline import PromptPoint, RewindMode
from agent_cli.session.timeline import parse_args as parse_rewind
from agent_cli.settings.config import PERMISSION_MODES
from agent_cli.settings.memory_files import memory_files
from agent_cli.settings.permission_commands import change_rule, permissions_data, permissions_text

if TYPE_CHECKING:
    from agent_cli.agent.memory import SessionMemory
    from agent_cli.context.engine import ContextEngine
    from agent_cli.extensions.mcp.runtime import McpRuntime
    from agent_cli.extensions.skills.tool import SessionSkills
    from agent_cli.llm.base import Provider
    from agent_cli.llm.models import ModelFit, ModelRegistry
    from agent_cli.session.log import EventLog
    from agent_cli.tools.permissions import Permissions
    from agent_cli.tools.registry import ToolRegistry

Emit = Callable[[Event], None]


class CommandHost(AgentBackend, Protocol):
    """What the commands act on: the backend plus its engine, log and note (agent/runner.py's
    AgentSession). Commands depend on this shape, not on the runner, so the runner can import them."""

    workspace: Path
    engine: ContextEngine
    log: EventLog
    memory: SessionMemory
    info: ModelInfo
    models: ModelRegistry
    provider: Provider
    todo: list[dict[str, Any]]
    permissions: Permissions
    rule_warnings: list[str]
    totals: Totals
    mcp: McpRuntime | None
    skills: SessionSkills | None
    tools: ToolRegistry

    def schedule_memory(self, emit: Emit, force: bool = False) -> asyncio.Task | None: ...

    def switch_model(self, name: str) -> ModelFit: ...

    def set_permission_mode(self, mode: str) -> None: ...

    def switch(self, session_id: str | None) -> None: ...

    def prompt_points(self) -> list[PromptPoint]: ...

    async def rewind(self, number: int, mode: RewindMode) -> str: ...

    async def rewind_undo(self) -> str: ...


MODEL_NAMES = MODEL_CHOICES
NO_NOTE = "No session-memory note yet (it is written after ~10k tokens; /summary writes it now)."
NOTHING_TO_SUMMARIZE = "Nothing to summarize yet: the conversation is empty. Send a prompt first."


def offered_commands(session: CommandHost) -> list[CommandSpec]:
    """The built-in commands, /model completing only the models this session's provider can serve."""
    routes = getattr(session.provider, "routes_any_model", True)
    models = session.models
    names = tuple(
        m
        for m in models.names()
        if m != "scripted" and not models.fit(m, session.provider.name, routes).refused
    )
    aliases = tuple(alias for alias, target in models.aliases.items() if target in names)
    return [replace(c, choices=names + aliases) if c.name == "model" else c for c in COMMANDS]


async def run_command(session: CommandHost, text: str, emit: Emit) -> TurnFinished:
    name, _, arg = text[1:].strip().partition(" ")
    name, arg = name.lower(), arg.strip()
    handler = HANDLERS.get(name)
    spent = session.totals.cost_usd
    try:
        if handler is None:
            known = ", ".join("/" + c.name for c in session.commands())
            result = CommandResult(
                name, f"Unknown command /{name}. Commands: {known}. /help explains them.", is_error=True
            )
        else:
            result = await handler(session, arg, emit)
    except AgentError as exc:
        result = CommandResult(name, f"/{name} failed: {exc}", is_error=True)
    emit(result)
    totals = session.totals
    if totals.cost_usd != spent:  # /compact and /summary pay for a summary: the status bar shows it
        emit(UsageUpdate(Usage(), totals.usage, totals.cost_usd, totals.cache_hit_rate()))
    emit(ContextUpdate(session.status()))
    finished = TurnFinished("command", result.text, 0, result.is_error)
    emit(finished)
    return finished


async def _help(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    lines = ["| command | what it does |", "|---|---|"]
    lines += [
        f"| {_cell(f'`/{c.name} {c.args}'.rstrip() + '`')} | {_cell(c.help)} |" for c in session.commands()
    ]
    lines.append("\nEsc or Ctrl+C interrupts a running turn; Ctrl+C twice on an empty prompt quits.")
    return CommandResult("help", "\n".join(lines))


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a `|` would end the cell, a newline the row."""
    return " ".join(text.split()).replace("|", "\\|")


async def _compact(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    before = session.status().used
    await session.hooks.pre_compact("manual", arg, emit)
    try:
        compaction = await session.engine.compact(arg)
    except NothingToGain as exc:
        text = (
            f"Nothing to gain: the summary would not be smaller than the context it replaces "
            f"({exc.before:,} → {exc.after:,} tokens), so the context is left as it is."
        )
        return CommandResult("compact", text, {"before": exc.before, "after": exc.before})
    if compaction is None:
        return CommandResult("compact", "Nothing to compact yet.", {"before": before, "after": before})
    session.log.compaction(compaction)
    emit(compacted_event(compaction))
    data = {
        "tier": compaction.tier,
        "trigger": compaction.trigger,
        "before": compaction.before,
        "after": compaction.after,
    }
    return CommandResult(
        "compact",
        f"Compacted ({compaction.tier}): {compaction.before:,} → {compaction.after:,} tokens.",
        data,
    )


async def _summary(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    if not session.engine.messages:  # nothing to summarize: one line, not a crash
        return CommandResult("summary", NOTHING_TO_SUMMARIZE)
    task = session.schedule_memory(emit, force=True)
    if task is not None:
        try:
            await task
        except Exception as exc:  # noqa: BLE001
            return CommandResult("summary", f"The session-memory update failed: {exc}", is_error=True)
    note = session.memory.note
    if not note:
        return CommandResult("summary", NOTHING_TO_SUMMARIZE)
    return CommandResult("summary", note, {"path": str(session.workspace / ".session_memory.md")})


async def _context(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    data = session.breakdown()
    status = session.status()
    outside = ("free", "reserved")  # the rest of the window, not in use
    parts = {k: v for k, v in data.items() if k not in outside}
    used = sum(parts.values())  # one number: the sum of its parts (the engine makes it status.used)
    rows = ["| category | tokens | % in use |", "|---|---:|---:|"]
    rows += [f"| {k.replace('_', ' ')} | {v:,} | {100 * v / (used or 1):.1f}% |" for k, v in parts.items()]
    rows.append(f"| **in use** | **{used:,}** | |")
    rows += [f"| {k} | {data[k]:,} | |" for k in outside if k in data]
    fraction = used / status.budget if status.budget else 0.0
    head = (
        f"Context: {used:,} / {status.budget:,} tokens in use ({100 * fraction:.0f}% of the budget). "
        f"{status.budget_explained()}\n\n"
    )
    eviction = session.engine.ghosts.report()
    tail = "\n\n" + eviction.summary()
    data = {**data, "used": used, "budget": status.budget, "eviction": asdict(eviction)}
    return CommandResult("context", head + "\n".join(rows) + tail, data)


async def _clear(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    compaction = session.engine.clear()
    session.log.compaction(compaction)
    await measure_prefix(session.provider, session.engine)  # the gauge counts the fresh view as billed
    await session.restart_hooks("clear")  # SessionEnd now, SessionStart before the next prompt
    return CommandResult(
        "clear",
        "Cleared: the next message starts a fresh conversation. The earlier one stays in "
        f"{session.log.path} and can be recalled.",
    )


async def _cost(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    data = session.cost()
    usage = data["usage"]
    text = (
        f"Cost so far: ${data['total_cost_usd']:.4f} over {_requests_said(data)}\n\n"
        f"- input (uncached): {usage['input_tokens']:,}\n- cache write: {usage['cache_creation_input_tokens']:,}\n"
        f"- cache read: {usage['cache_read_input_tokens']:,}\n- output: {usage['output_tokens']:,}\n"
        f"- cache hit rate: {100 * data['cache_hit_rate']:.1f}%\n- compactions: {data.get('compactions', 0)}"
    )
    return CommandResult("cost", text, data)


def _requests_said(data: dict[str, Any]) -> str:
    """`6 requests (4 in the conversation, 2 summaries or notes)`: every request sent, by kind."""

    def n(count: int, word: str) -> str:
        return f"{count:,} {word}{'s' * (count != 1)}"

    kinds = [
        f"{data.get('side_requests', 0):,} for summaries and notes" if data.get("side_requests") else "",
        f"{data.get('subagent_requests', 0):,} by sub-agents" if data.get("subagent_requests") else "",
    ]
    kinds = [k for k in kinds if k]
    if not kinds:
        return n(data["requests"], "request")
    return f"{n(data['requests'], 'request')} ({data.get('conversation_requests', 0):,} in the conversation, {', '.join(kinds)})"


async def _model(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    if not arg:
        choices = next(c.choices for c in offered_commands(session) if c.name == "model")
        aliases = session.models.aliases
        names = ", ".join(name for name in choices if name not in aliases)
        said = ", ".join(f"{name} ({aliases[name]})" for name in choices if name in aliases)
        text = f"Model: {session.model}. Known: {names}." + (f" Aliases: {said}." if said else "")
        return CommandResult("model", text, {"model": session.model})
    fit = session.switch_model(arg)
    if fit.refused:
        return CommandResult("model", f"Still on {session.model}: {fit.refused}", is_error=True)
    text = f"Model set to {session.model} (window {session.info.context_window:,} tokens)."
    note = f"\n\n**Note:** {fit.note}" if fit.note else ""
    return CommandResult("model", text + note, {"model": session.model})


async def _resume(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    if not arg:
        rows = [
            f"- `{s.id}` {s.started_at} — {s.turns} turn{'s' * (s.turns != 1)} — {s.first_prompt[:60]}"
            for s in session.sessions()
        ]
        passed = session.sessions_passed_over()  # as `agent sessions` and the picker say it
        return CommandResult(
            "resume",
            "Sessions in this workspace:\n"
            + ("\n".join(rows) or "(none)")
            + (f"\n\n{passed}" if passed else ""),
            {"sessions": [s.__dict__ for s in session.sessions()], "passed_over": passed},
        )
    session.switch(arg)
    return CommandResult(
        "resume",
        f"Resumed session {session.session_id} ({len(session.engine.messages)} messages in the view).",
        {"session_id": session.session_id},
    )


async def _memory(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    """The memory files to edit (the TUI opens the chosen one in $EDITOR) and the session's note."""
    files = memory_files(session.workspace)
    note = session.memory.note or NO_NOTE
    rows = [f"- {f.label}: `{f.path}`" for f in files]
    text = (
        "Memory files, read at the start of every session (an edit applies after /clear or in a new "
        "session); in the TUI, /memory opens one in your $EDITOR:\n\n"
        + "\n".join(rows)
        + f"\n\n## Session-memory note (written by agent; /summary updates it)\n\n{note}"
    )
    data = {
        "memory_files": [{"label": f.label, "path": str(f.path), "exists": f.exists} for f in files],
        "note": note,
    }
    return CommandResult("memory", text, data)


async def _todo(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    if not session.todo:
        return CommandResult("todo", "The todo list is empty.", {"todos": []})
    marks = {"completed": "[x]", "in_progress": "[~]"}
    lines = [f"- {marks.get(t.get('status', ''), '[ ]')} {t.get('content', '')}" for t in session.todo]
    return CommandResult("todo", "\n".join(lines), {"todos": list(session.todo)})


async def _permissions(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    verb, _, rule = arg.partition(" ")
    if verb in ("allow", "deny", "revoke") or (verb == "ask" and rule.strip()):
        return change_rule(session, verb, rule.strip())
    if arg:
        if arg not in PERMISSION_MODES:
            return CommandResult(
                "permissions",
                f"Unknown mode {arg!r}: use {', '.join(PERMISSION_MODES)}, or allow|ask|deny|revoke RULE.",
                is_error=True,
            )
        session.set_permission_mode(arg)
    return CommandResult("permissions", permissions_text(session), permissions_data(session))


async def _export(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    markdown = conversation_markdown(session.session_id, session.conversation())
    if arg:
        path = (session.workspace / arg).resolve()
        try:
            with path.open("x", encoding="utf-8") as out:  # never over a file: `/export main.py` was one
                out.write(markdown)
        except FileExistsError:
            why = f"{path} exists: /export writes a new file, never over one; give another name"
            return CommandResult("export", why, {}, is_error=True)
        except OSError as exc:
            return CommandResult("export", f"Cannot write {path}: {exc.strerror or exc}", {}, is_error=True)
        return CommandResult("export", f"Exported to {path}.", {"path": str(path)})
    return CommandResult("export", markdown, {"markdown": markdown})


async def _rewind(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    points = session.prompt_points()
    if not arg:
        rows = [
            f"{p.number}. {p.text[:70]}" + (f"  ({p.code_note()})" if p.code_note() else "") for p in points
        ]
        listing = "\n".join(rows) or "(no prompts yet)"
        return CommandResult(
            "rewind",
            "Prompts of this session — `/rewind N [both|conversation|code]` goes back to before prompt N:\n\n"
            + listing,
            {"prompts": [p.__dict__ for p in points]},
        )
    if arg.strip() == "undo":
        text = await session.rewind_undo()
        return CommandResult("rewind", text, {"undo": True, "session_id": session.session_id})
    try:
        number, mode = parse_rewind(arg)
    except ValueError as exc:
        return CommandResult("rewind", str(exc), is_error=True)
    said = next((p.text for p in points if p.number == number), "")  # before the rewind changes them
    text = await session.rewind(number, mode)
    data = {"prompt": number, "mode": mode, "session_id": session.session_id, "prompt_text": said}
    return CommandResult("rewind", text, data)


async def _mcp(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    from agent_cli.extensions.mcp.command import mcp_command

    return await mcp_command(session.mcp, arg, session.tools, session.engine.counter, session.workspace)


async def _skills(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    from agent_cli.extensions.skills.command import skills_report

    return skills_report(session.skills, session.engine.counter.text)


async def _shells(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    shells = session.shells.list()
    if not shells:
        return CommandResult("shells", "No background shells in this session.", {"shells": []})
    lines = [f"- {s.id} ({s.status_text()}, {s.output_chars:,} chars): {s.command}" for s in shells]
    data = {"shells": [asdict(s) for s in shells]}
    return CommandResult("shells", "Background shells:\n" + "\n".join(lines), data)


async def _quit(session: CommandHost, arg: str, emit: Emit) -> CommandResult:
    return CommandResult("quit", "Bye.", {"quit": True})


HANDLERS: dict[str, Callable[[CommandHost, str, Emit], Awaitable[CommandResult]]] = {
    "help": _help,
    "compact": _compact,
    "summary": _summary,
    "context": _context,
    "clear": _clear,
    "cost": _cost,
    "model": _model,
    "resume": _resume,
    "memory": _memory,
    "todo": _todo,
    "permissions": _permissions,
    "export": _export,
    "rewind": _rewind,
    "mcp": _mcp,
    "skills": _skills,
    "shells": _shells,
    "quit": _quit,
    "exit": _quit,
}

__all__ = ["COMMANDS", "MODEL_NAMES", "run_command"]
