"""The commands the TUI knows before (or without) a backend, and which of them it handles itself."""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.agent.api import CommandSpec

BUILTIN_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "show the commands and keys"),
    CommandSpec("compact", "[focus]", "summarize the conversation now, optionally steered by a focus"),
    CommandSpec("summary", "", "update the session-memory note now and show it"),
    CommandSpec("context", "", "show what fills the context window"),
    CommandSpec("clear", "", "start a new conversation"),
    CommandSpec("cost", "", "tokens, cache hit rate and cost of this session"),
    CommandSpec("model", "[name]", "show or switch the model"),
    CommandSpec("resume", "[id]", "resume an earlier session (a picker without an id)"),
    CommandSpec("memory", "", "show the session-memory note"),
    CommandSpec("todo", "", "show the todo list"),
    CommandSpec("permissions", "[mode]", "show or set the permission mode: ask, auto-edit, yolo"),
    CommandSpec("export", "[path]", "write the conversation to a Markdown file"),
    CommandSpec("quit", "", "leave agent (also /exit)"),
)

KEYS_HELP: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt"),
    ("Shift+Enter / Ctrl+J", "new line"),
    ("Up / Down", "earlier prompts (on the first / last line)"),
    ("Tab", "accept a completion"),
    ("Esc / Ctrl+C", "interrupt the running turn"),
    ("Ctrl+C twice", "quit when idle"),
    ("Ctrl+L", "clear the screen (the session stays)"),
)


def merged_commands(backend_commands: Sequence[CommandSpec] | None) -> list[CommandSpec]:
    """The backend's commands, plus the ones the TUI handles itself when the backend lacks them."""
    if not backend_commands:
        return list(BUILTIN_COMMANDS)
    out = list(backend_commands)
    names = {spec.name for spec in out}
    for spec in BUILTIN_COMMANDS:
        if spec.name in ("quit", "context", "resume") and spec.name not in names:
            out.append(spec)
    return out


def command_name(text: str) -> tuple[str, str]:
    """`("model", "claude-opus-5-5")` for `/model claude-opus-5-5`."""
    head, _, rest = text.strip()[1:].partition(" ")
    return head.lower(), rest.strip()


def local_help(commands: Sequence[CommandSpec], note: str = "") -> str:
    """Markdown help for when the backend cannot answer /help itself."""
    lines = ["## Commands", ""]
    for spec in commands:
        usage = f"/{spec.name} {spec.args}".rstrip()
        lines.append(f"- `{usage}` — {spec.help}")
    lines += ["", "## Keys", ""]
    lines += [f"- **{key}** — {what}" for key, what in KEYS_HELP]
    if note:
        lines += ["", note]
    return "\n".join(lines)
