"""The commands the TUI knows before (or without) a backend, and which of them it handles itself."""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.agent.api import COMMANDS, CommandSpec

BUILTIN_COMMANDS: tuple[CommandSpec, ...] = COMMANDS  # known before the backend has loaded

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
