"""A custom command's `allowed-tools`: for that command's turn, matching calls run without asking.

Rules in Claude Code's syntax: `Bash` (any command), `Bash(git status)` (exactly), `Bash(git add:*)`
(that prefix; a line with `;`, `&&`, `|`, redirects or substitutions never matches a prefix rule),
`Edit(src/**)` / `Write(…)` / `Read(…)` (a path glob, relative to the workspace), `mcp__server`
(its tools) or `mcp__server__tool`. It only widens: a hook's deny or ask, and a permission deny,
still win. It rides on the hook seam: a HookRunner that says "allow" for matching PreToolUse calls.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from agent_cli.agent.hooks.api import Emit, HookDelegate, HookRunner, PreToolOutcome
from agent_cli.agent.hooks.spec import claude_name
from agent_cli.core.types import ToolCall

_RULE = re.compile(r"^([A-Za-z0-9_]+)(?:\((.*)\))?$", re.S)
_COMPOUND = re.compile(r"[;&|<>`\n]|\$\(")


@dataclass(frozen=True)
class ToolRule:
    tool: str
    spec: str | None = None

    @classmethod
    def parse(cls, text: str) -> ToolRule | None:
        match = _RULE.match(text.strip())
        return cls(match.group(1), match.group(2)) if match else None

    def allows(self, call: ToolCall, workspace: Path) -> bool:
        names = (call.name, claude_name(call.name))
        if self.tool.startswith("mcp__") and self.spec is None:
            return call.name == self.tool or call.name.startswith(self.tool + "__")
        if self.tool not in names:
            return False
        if self.spec is None or self.spec in ("", "*"):
            return True
        if claude_name(call.name) == "Bash":
            return _command_allowed(str(call.input.get("command", "")), self.spec)
        path = call.input.get("path") or call.input.get("file_path")
        return isinstance(path, str) and _path_allowed(path, self.spec, workspace)


def _command_allowed(command: str, spec: str) -> bool:
    command = command.strip()
    if not spec.endswith(":*"):
        return command == spec.strip()
    prefix = spec[:-2].strip()
    if _COMPOUND.search(command):
        return False
    return command == prefix or command.startswith(prefix + " ")


def _path_allowed(path: str, pattern: str, workspace: Path) -> bool:
    target = (workspace / path).resolve()
    try:
        relative = target.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return False  # outside the workspace: a command's rules never reach there
    return fnmatch.fnmatch(relative, pattern.removeprefix("./"))


def parse_rules(texts: Sequence[str]) -> tuple[list[ToolRule], list[str]]:
    rules, bad = [], []
    for text in texts:
        rule = ToolRule.parse(text)
        if rule is None:
            bad.append(text)
        else:
            rules.append(rule)
    return rules, bad


class AllowedTools(HookDelegate):
    """Wraps the session's HookRunner for one custom command's turn."""

    def __init__(self, inner: HookRunner, rules: Sequence[ToolRule], workspace: Path) -> None:
        super().__init__(inner)
        self.rules = list(rules)
        self.workspace = workspace

    async def pre_tool_use(self, call: ToolCall, emit: Emit) -> PreToolOutcome:
        outcome = await self.inner.pre_tool_use(call, emit)
        if outcome.permission is None and any(r.allows(call, self.workspace) for r in self.rules):
            return replace(outcome, permission="allow")
        return outcome
