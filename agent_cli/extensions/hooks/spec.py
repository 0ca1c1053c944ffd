"""Hook definitions in Claude Code's settings format, parsed and checked.

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [
        {"type": "command", "command": "python3 .claude/hooks/guard.py", "timeout": 30}]}]}}

The same shape comes from `[hooks]` in config.toml. A matcher is a tool name, names joined with `|`,
or a regular expression; it is tried against our tool name and Claude Code's name for it (`bash` and
`Bash`). Empty or `*` matches everything. For PreCompact it is matched against the trigger
(manual/auto), for SessionStart against the source (startup/resume/clear/compact); the other
events have no matcher. Anything wrong is one warning naming the file; the rest still loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "Notification",
)
MATCHED_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PreCompact", "SessionStart")
DEFAULT_TIMEOUT = 60.0
_PLAIN = re.compile(r"[A-Za-z0-9_|]+")

# Our tool names -> Claude Code's (tools not listed keep their name: mcp__server__tool, recall).
CLAUDE_NAMES = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "multi_edit": "MultiEdit",
    "grep": "Grep",
    "glob": "Glob",
    "ls": "LS",
    "todo_write": "TodoWrite",
    "task": "Task",
    "skill": "Skill",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
}


FILE_TOOLS = ("read_file", "write_file", "edit_file", "multi_edit")  # Claude Code's take `file_path`


def claude_name(tool: str) -> str:
    return CLAUDE_NAMES.get(tool, tool)


def claude_input(tool: str, tool_input: Mapping[str, Any], workspace: Path | str) -> dict[str, Any]:
    """A call's input as Claude Code shows it — to hooks, in `permission_denials`, in stream-json's
    `tool_use` blocks: ours, plus Claude Code's absolute `file_path` for the file tools, always the
    one `path` names (a `file_path` the model added itself would show a hook another file)."""
    out = dict(tool_input)
    path = out.get("path")
    if tool in FILE_TOOLS and isinstance(path, str):
        out["file_path"] = str((Path(workspace) / path).resolve())
    return out


@dataclass(frozen=True)
class Matcher:
    pattern: str = ""

    def matches(self, *names: str) -> bool:
        if self.pattern in ("", "*"):
            return True
        if _PLAIN.fullmatch(self.pattern):  # `Bash` or `Edit|Write`: exact names
            wanted = set(self.pattern.split("|"))
            return any(name in wanted for name in names)
        return any(re.search(self.pattern, name) for name in names)


@dataclass(frozen=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""  # the file (or config) it came from, for messages


@dataclass(frozen=True)
class HookGroup:
    event: str
    matcher: Matcher
    commands: tuple[HookCommand, ...]


def parse_hooks(table: Any, source: str) -> tuple[list[HookGroup], list[str]]:
    """The groups of a `hooks` table, and one warning per problem (each naming `source`)."""
    if not table:
        return [], []
    if not isinstance(table, Mapping):
        return [], [f'{source}: "hooks" must be an object of events; ignored']
    groups: list[HookGroup] = []
    warnings: list[str] = []
    for event, entries in table.items():
        if event not in EVENTS:
            warnings.append(f"{source}: unknown hook event {event!r} (known: {', '.join(EVENTS)}); ignored")
            continue
        if not isinstance(entries, list):
            warnings.append(f"{source}: hooks.{event} must be a list of {{matcher, hooks}}; ignored")
            continue
        for index, entry in enumerate(entries):
            group, problems = _group(event, entry, f"{source}: hooks.{event}[{index}]", source)
            warnings += problems
            if group is not None:
                groups.append(group)
    return groups, warnings


def _group(event: str, entry: Any, where: str, source: str) -> tuple[HookGroup | None, list[str]]:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("hooks"), list):
        return None, [f'{where}: needs a "hooks" list; ignored']
    pattern = entry.get("matcher", "")
    if not isinstance(pattern, str):
        return None, [f"{where}: matcher must be a string; ignored"]
    try:
        re.compile(pattern if pattern != "*" else "")
    except re.error as exc:
        return None, [f"{where}: matcher {pattern!r} is not a valid regular expression ({exc}); ignored"]
    commands: list[HookCommand] = []
    problems: list[str] = []
    for hook in entry["hooks"]:
        if isinstance(hook, Mapping) and hook.get("type", "command") != "command":
            problems.append(f'{where}: hook type {hook.get("type")!r} is not supported (only "command")')
            continue
        if not isinstance(hook, Mapping) or not isinstance(hook.get("command"), str):
            problems.append(f'{where}: each hook needs a "command" string; one was ignored')
            continue
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            problems.append(f"{where}: timeout {timeout!r} is not a positive number; using 60 s")
            timeout = DEFAULT_TIMEOUT
        commands.append(HookCommand(hook["command"], float(timeout), source))
    matcher = Matcher(pattern if event in MATCHED_EVENTS else "")
    return (HookGroup(event, matcher, tuple(commands)) if commands else None), problems


def select(groups: list[HookGroup], event: str, *names: str) -> list[HookCommand]:
    """The commands to run for `event` (names: the tool's, trigger or source), each command once."""
    seen: dict[str, HookCommand] = {}
    for group in groups:
        if group.event == event and group.matcher.matches(*names):
            for command in group.commands:
                seen.setdefault(command.command, command)
    return list(seen.values())
