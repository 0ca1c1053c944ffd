"""Whether a tool call runs, asks the person, or is refused — by mode, rules and the workspace.

Modes: `ask` (read-only tools run; write/edit/bash ask), `auto-edit` (edits in the workspace run;
bash asks), `plan` (read-only tools only: everything else is refused, bash too unless rules allow
it and it writes nothing), `yolo` (everything runs). Rules (tools/rules.py) come from flags, config,
settings files and "always allow"; deny beats ask beats allow, whatever their source. Whatever the
mode or rules, a write outside the workspace asks, and a read outside it asks unless in yolo or
allowed by a `Read(...)` rule. web_fetch and web_search are judged by host (tools/web/permission.py).
A deny rule on reading refuses a search (grep, glob, ls) in a folder it covers too, a search over a
folder that holds denied files leaves them out, and an edit_file of a file it covers is refused (its
errors and excerpts show the file), as an ask rule on reading asks for it (tools/denied_reads.py).

A bash line is judged by its reading (tools/shell/): rules allow it only when every simple command
it runs (pipelines, lists, every substitution and expansion that runs a command, here-document
bodies, `bash -c` scripts, wrapped commands) matches an allow rule and every file a redirect writes
may be edited (auto-edit mode, or an `Edit(...)` rule). A deny or ask rule applies when it matches
any of those commands, or any redirect target. A line with a doubt (what it runs is only known when
it runs) is never allowed by rules; in yolo mode it asks when a deny or ask rule could apply to it.

`decide` is the one seam: it returns a `Decision` with the reason, which the loop (and hooks) use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from agent_cli.tools.base import Tool
from agent_cli.tools.denied_reads import deny_check, reads_back, searches_in
from agent_cli.tools.fs import display_path, is_inside, resolve_path
from agent_cli.tools.rules import (
    READ_FAMILY,
    WRITE_FAMILY,
    Effect,
    Rule,
    SourcedRule,
    canonical_tool,
    command_rule,
    path_rule,
)
from agent_cli.tools.sandbox.bwrap import wants_escape
from agent_cli.tools.sandbox.protected import is_protected
from agent_cli.tools.shell import ShellLine, SimpleCommand, parse_shell
from agent_cli.tools.web.permission import is_web_tool, web_always_rules, web_verdict

PermissionMode = Literal["ask", "auto-edit", "plan", "yolo"]
Action = Literal["allow", "ask", "deny"]
MODES: tuple[str, ...] = get_args(PermissionMode)
CYCLE: tuple[str, ...] = ("ask", "auto-edit", "plan")  # Shift+Tab in the TUI; yolo only on purpose
PLAN_REFUSAL = (
    "plan mode: only read-only tools run while planning. Do not try to change anything yet; finish "
    "the plan and present it. The person will approve it before any change is made."
)


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # why, in words the person and the model read
    rule: str = ""  # the rule that decided, when one did
    always: bool = False  # an ask nothing but the person answers (no hook's allow): see combine_permission


class Permissions:
    def __init__(
        self,
        mode: PermissionMode,
        workspace: Path,
        rules: Iterable[SourcedRule] = (),
        home: Path | None = None,
    ) -> None:
        self.mode: PermissionMode = _checked(mode)
        self.workspace = Path(workspace).expanduser().absolute()
        self.home = home or Path.home()
        self.rules: list[SourcedRule] = list(rules)

    def set_mode(self, mode: PermissionMode) -> None:
        self.mode = _checked(mode)

    # -- rules -----------------------------------------------------------------------------------------
    def add_rule(self, text: str, effect: Effect, source: str = "session") -> SourcedRule:
        """Add a rule (raises RuleError when it does not parse); an identical one is not repeated."""
        sourced = SourcedRule(Rule.parse(text), effect, source)
        if not any(r.rule.text == sourced.rule.text and r.effect == effect for r in self.rules):
            self.rules.append(sourced)
        return sourced

    def revoke(self, text: str) -> list[SourcedRule]:
        """Remove every rule written as `text` (for this session, whatever its source)."""
        wanted = Rule.parse(text)
        gone = [r for r in self.rules if (r.rule.tool, r.rule.spec) == (wanted.tool, wanted.spec)]
        self.rules = [r for r in self.rules if r not in gone]
        return gone

    def _of(self, effect: Effect) -> list[SourcedRule]:
        return [r for r in self.rules if r.effect == effect]

    # -- deciding --------------------------------------------------------------------------------------
    def decide(self, tool: Tool, input: dict[str, Any]) -> Decision:
        name = tool.name
        if is_web_tool(name):  # by host: WebFetch(domain:…) rules, private addresses guarded
            return Decision(*astuple(web_verdict(self.rules, self.mode, name, input)))
        bash = canonical_tool(name) == "bash"
        line = parse_shell(str(input.get("command", ""))) if bash else None
        paths = self._paths(tool, input)
        outside = [p for p in paths if not is_inside(self.workspace, p)]
        if hit := self._match(self._of("deny"), tool, input, paths, line):
            return Decision("deny", f"denied by the rule {hit.rule.text} ({hit.source})", hit.rule.text)
        if self.mode == "plan" and not tool.read_only:
            if bash and line is not None and not line.writes and self._bash_allowed(line):
                return Decision("allow", "allowed by rules (plan mode)")
            return Decision("deny", PLAN_REFUSAL)
        if not tool.read_only and (guarded := protected_write(self, tool, paths, line)) is not None:
            return guarded
        if line is not None and line.doubts and (guard := self._bash_guard()):
            reason = (
                f"the rule {guard.rule.text} ({guard.source}) cannot be checked against it: {line.doubts[0]}"
            )
            return Decision("ask", reason, guard.rule.text)
        if hit := self._match(self._of("ask"), tool, input, paths, line):
            return Decision("ask", f"the rule {hit.rule.text} ({hit.source}) asks", hit.rule.text)
        if tool.read_only:
            if not outside or self.mode == "yolo" or self._read_allowed(tool, outside):
                return Decision("allow")
            return Decision("ask", "it reads outside the workspace")
        if outside:
            return Decision("ask", "it writes outside the workspace (that always asks)", always=True)
        if self.mode == "yolo":
            return Decision("allow", "yolo mode")  # bash's sandbox refuses a way out in yolo
        if bash and wants_escape(input):
            why = "it asks to run outside the sandbox (that always asks, whatever the rules)"
            return Decision("ask", why, always=True)
        if bash:
            if line is None or line.doubts:
                doubt = line.doubts[0] if line is not None else "it could not be read"
                return Decision("ask", f"no rule can allow it: {doubt}")
            if self._bash_allowed(line):
                return Decision("allow", "every command in it is allowed by a rule")
            return Decision("ask", self._bash_gap(line))
        if self.mode == "auto-edit" and canonical_tool(name) in WRITE_FAMILY:
            return Decision("allow", "auto-edit mode")
        if hit := self._match(self._of("allow"), tool, input, paths, line):
            return Decision("allow", f"allowed by the rule {hit.rule.text} ({hit.source})", hit.rule.text)
        return Decision("ask", f"{name} asks in {self.mode} mode")

    def _match(
        self,
        rules: list[SourcedRule],
        tool: Tool,
        input: dict[str, Any],
        paths: list[Path],
        line: ShellLine | None,
    ) -> SourcedRule | None:
        """The first rule that covers (part of) this call: any command of a bash line, any redirect
        target, any path. Deny and ask rules read commands loosely and paths by link and target."""
        name = canonical_tool(tool.name)
        for sourced in rules:
            rule = sourced.rule
            strict = sourced.effect == "allow"
            if rule.names_tool(tool.name):
                return sourced
            if name == "bash" and line is not None:
                if any(rule.matches_command(c, loose=not strict) for c in line.commands):
                    return sourced
                if any(self._path_rule(rule, "edit_file", self._resolve(w), strict) for w in line.writes):
                    return sourced
                if any(self._path_rule(rule, "read_file", self._resolve(r), strict) for r in line.reads):
                    return sourced
            elif name in READ_FAMILY | WRITE_FAMILY:
                if any(self._path_rule(rule, tool.name, p, strict) for p in paths):
                    return sourced
                if not strict and reads_back(rule, tool.name, paths, self.workspace, self.home):
                    return sourced  # edit_file shows what it reads: a rule on reading covers it
                folders = paths if sourced.effect != "allow" else []  # an allow rule keeps to the root
                if searches_in(rule, tool.name, folders, self.workspace, self.home):
                    return sourced
            elif rule.matches_target(tool.name, _target(tool, input)):
                return sourced
        return None

    def read_check(self) -> Callable[[Path], bool] | None:
        """base.ReadGuard: for one search, whether a deny rule forbids reading a path it found."""
        return deny_check(self._of("deny"), self.workspace, self.home)

    def _path_rule(self, rule: Rule, tool_name: str, path: Path, resolved_only: bool) -> bool:
        return rule.matches_path(tool_name, path, self.workspace, self.home, resolved_only)

    def _bash_guard(self) -> SourcedRule | None:
        """A deny or ask rule that could apply to a bash line (a command or a path rule)."""
        for sourced in self._of("deny") + self._of("ask"):
            rule = sourced.rule
            if (rule.tool == "bash" and rule.spec is not None) or (
                rule.tool in WRITE_FAMILY | READ_FAMILY and rule.spec is not None
            ):
                return sourced
        return None

    def _bash_allowed(self, line: ShellLine) -> bool:
        if line.doubts:
            return False
        allow = self._of("allow")
        commands_ok = all(
            any(r.rule.matches_command(c) for r in allow)
            for c in line.commands
            if not (c.wrapper and not c.risk)
        )
        return (
            bool(line.commands or line.writes)
            and commands_ok
            and all(self._write_allowed(w) for w in line.writes)
        )

    def _bash_gap(self, line: ShellLine) -> str:
        """Why a bash line is not allowed by the rules: its first command or write that is not."""
        allow = self._of("allow")
        if not any(r.rule.tool == "bash" for r in allow):
            return f"bash asks in {self.mode} mode"
        for command in line.commands:
            if (command.wrapper and not command.risk) or any(r.rule.matches_command(command) for r in allow):
                continue
            if command.risk and any(r.rule.matches_command(command, loose=True) for r in allow):
                return f"`{command.text}` is not allowed by a prefix rule: {command.risk}"
            return f"`{command.text}` is not allowed by any rule"
        for target in line.writes:
            if not self._write_allowed(target):
                return f"it writes {target} (a redirect needs edit permission for that file)"
        return f"bash asks in {self.mode} mode"

    def _write_allowed(self, target: str) -> bool:
        path = self._resolve(target)
        if not is_inside(self.workspace, path):
            return False
        if self.mode in ("auto-edit", "yolo"):
            return True
        return any(self._path_rule(r.rule, "edit_file", path, True) for r in self._of("allow"))

    def _read_allowed(self, tool: Tool, outside: list[Path]) -> bool:
        allow = self._of("allow")
        return all(
            any(self._path_rule(r.rule, tool.name, p, True) for r in allow)
            or any(self._path_rule(r.rule, tool.name, p / "_", True) for r in allow if p.is_dir())
            for p in outside
        )

    # -- "always allow" --------------------------------------------------------------------------------
    def always_rules(self, tool: Tool, input: dict[str, Any]) -> list[str]:
        """The narrowest rules that would allow this call from now on ([] = it can only be allowed once)."""
        paths = self._paths(tool, input)
        outside = [p for p in paths if not is_inside(self.workspace, p)]
        name = canonical_tool(tool.name)
        if is_web_tool(name):
            return web_always_rules(name, input)
        if tool.read_only:
            return [path_rule("Read", _read_root(p), self.workspace, "/**") for p in outside]
        if outside:
            return []  # writes outside the workspace always ask
        if name == "bash":
            return self._bash_rules(str(input.get("command", "")))
        if name in WRITE_FAMILY:
            label = "Write" if name == "write" else "Edit"
            root = self.workspace.resolve()
            return [path_rule(label, p.resolve(), root) for p in paths]  # allow rules match targets
        return [tool.name]

    def _bash_rules(self, command: str) -> list[str]:
        line = parse_shell(command)
        if line.doubts:
            return []
        allow = self._of("allow")
        out: list[str] = []
        for simple in line.commands:
            if (simple.wrapper and not simple.risk) or any(r.rule.matches_command(simple) for r in allow):
                continue
            rule = command_rule(simple)
            if rule is None:
                return []
            if rule not in out:
                out.append(rule)
        root = self.workspace.resolve()
        for target in line.writes:
            path = self._resolve(target)
            if not is_inside(self.workspace, path):
                return []
            if not self._write_allowed(target):
                out.append(path_rule("Edit", path.resolve(), root))
        return out

    def allow_always(self, tool: Tool, input: dict[str, Any]) -> list[str]:
        """Add the rules `always_rules` names as session rules; returns them."""
        rules = self.always_rules(tool, input)
        for text in rules:
            self.add_rule(text, "allow", "session")
        return rules

    def describe_rule(self, tool: Tool, input: dict[str, Any]) -> str:
        """What "always allow" would save, in words for the permission modal."""
        rules = self.always_rules(tool, input)
        if rules:
            noun = "rule" if len(rules) == 1 else "rules"
            return f"saves the {noun} {', '.join(rules)} for this session"
        if self._paths(tool, input) and not tool.read_only:
            return "writes outside the workspace always ask; always allows only this call"
        if canonical_tool(tool.name) == "bash":
            return (
                "this command cannot become a rule (it cannot be read with certainty, names no plain "
                "command, or does what no prefix rule may allow); allows only this call"
            )
        return "allows only this call"

    # -- helpers ---------------------------------------------------------------------------------------
    def _resolve(self, path: str) -> Path:
        try:
            return resolve_path(self.workspace, path)
        except Exception:  # noqa: BLE001 - an odd path is judged as outside
            return Path("/nonexistent-path")

    def _paths(self, tool: Tool, input: dict[str, Any]) -> list[Path]:
        try:
            raw = tool.paths(input)
        except Exception:  # noqa: BLE001
            raw = []
        out: list[Path] = []
        for path in raw:
            try:
                out.append(resolve_path(self.workspace, path))
            except Exception:  # noqa: BLE001
                continue
        return out


def _checked(mode: str) -> PermissionMode:
    if mode not in MODES:
        raise ValueError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
    return mode  # type: ignore[return-value]


def _target(tool: Tool, input: dict[str, Any]) -> str:
    try:
        return tool.target(input)
    except Exception:  # noqa: BLE001
        return ""


def _read_root(path: Path) -> Path:
    path = path.resolve() if path.exists() else path
    return path if path.is_dir() else path.parent


def protected_write(
    permissions: Permissions, tool: Tool, paths: list[Path], line: ShellLine | None
) -> Decision | None:
    """An ask, in every mode (yolo too; headless: a denial with this reason), when a write_file/edit_file
    or a bash redirect writes a protected path (tools/sandbox/protected.py: git's config and hooks, .agent,
    .claude, .mcp.json, .vscode, shell start-up files …), symlinks resolved. An allow rule that names
    the protected path itself (`Edit(.git/hooks/**)`, not `Edit` or `Edit(**)`) is the person's yes."""
    name = canonical_tool(tool.name)
    if name == "bash":
        targets = [permissions._resolve(w) for w in line.writes] if line is not None else []
    elif name in WRITE_FAMILY:
        targets = paths
    else:
        return None
    workspace, home = permissions.workspace, permissions.home
    for path in targets:
        label = is_protected(path, workspace, home)
        if not label or any(
            _names_protected(r.rule, path, workspace, home, label) for r in permissions._of("allow")
        ):
            continue
        shown = display_path(workspace, path)
        return Decision(
            "ask",
            f"it writes {shown}, in {label}: a protected path, which can make code run later outside "
            "the sandbox, so in every mode (yolo too) it needs your yes, or an allow rule that names it "
            f"(e.g. {path_rule('Edit', path, workspace)})",
            "protected path",
        )
    return None


def _names_protected(rule: Rule, path: Path, workspace: Path, home: Path, label: str) -> bool:
    """Whether an Edit/Write rule covers `path` and names its protected path (`label`): its literal
    part (before any wildcard) lies in that same protected path (`Edit(.git/**)` names `.git`, not
    `.git/hooks`)."""
    if rule.tool not in WRITE_FAMILY or rule.spec is None:
        return False
    if not rule.matches_path("edit_file", path, workspace, home):
        return False
    literal = re.split(r"[*?\[\\]", rule.spec, maxsplit=1)[0]
    if literal.startswith("//"):
        bases = [Path(literal[1:])]
    elif literal == "~" or literal.startswith("~/"):
        bases = [home / literal[2:]]
    elif literal.startswith("/"):
        bases = [Path(literal), workspace / literal.lstrip("/")]
    else:
        bases = [workspace / literal]
    return any(is_protected(base, workspace, home) == label for base in bases if literal.strip("./"))


def command_words(command: str) -> list[str]:
    """The first word of every simple command a shell line runs (empty when it cannot be read)."""
    line = parse_shell(command)
    if line.doubts:
        return []
    words: list[str] = []
    for simple in line.commands:
        if simple.words and simple.words[0] not in words:
            words.append(simple.words[0])
    return words


__all__ = ["CYCLE", "MODES", "PLAN_REFUSAL", "Decision", "Permissions", "SimpleCommand", "command_words"]
