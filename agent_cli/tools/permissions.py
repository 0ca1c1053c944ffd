"""Whether a tool call runs, asks the person, or is refused — by mode, workspace and session rules.

Modes: `ask` (read-only tools run; write/edit/bash ask), `auto-edit` (edits in the workspace run;
bash asks), `yolo` (everything runs). Whatever the mode, a write outside the workspace asks, and a
read outside it asks unless in yolo. "Always allow" records a session rule: for bash, the first word
of each command in the line (`pytest …`); for write/edit, the tool inside the workspace; for reads
outside the workspace, the directory read from.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Literal, get_args

from agent_cli.tools.base import Tool
from agent_cli.tools.fs import is_inside, resolve_path
from agent_cli.tools.sandbox import wants_escape

PermissionMode = Literal["ask", "auto-edit", "yolo"]
Decision = Literal["allow", "ask", "deny"]
MODES: tuple[str, ...] = get_args(PermissionMode)

_SEPARATORS = {";", "&&", "||", "|", "&", "\n", "|&", ";;"}
_UNSAFE = ("$(", "`", "<(", ">(")


class Permissions:
    def __init__(self, mode: PermissionMode, workspace: Path) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
        self.mode: PermissionMode = mode
        self.workspace = Path(workspace).expanduser().absolute()
        self._bash_words: set[str] = set()
        self._tools: set[str] = set()
        self._read_dirs: set[Path] = set()

    def set_mode(self, mode: PermissionMode) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; use one of {', '.join(MODES)}")
        self.mode = mode

    # -- deciding ------------------------------------------------------------------------------------

    def decide(self, tool: Tool, input: dict[str, Any]) -> Decision:
        outside = self._outside(tool, input)
        if tool.read_only:
            if not outside or self.mode == "yolo" or all(self._read_allowed(p) for p in outside):
                return "allow"
            return "ask"
        if outside:
            return "ask"  # writes outside the workspace always ask, whatever the mode or rules
        if self.mode == "yolo":
            return "allow"  # bash's sandbox refuses a way out in yolo (tools/sandbox.py)
        if tool.name == "bash" and wants_escape(input):
            return "ask"  # running outside the sandbox needs the person, whatever the rules
        if tool.name == "bash":
            return "allow" if self._bash_allowed(str(input.get("command", ""))) else "ask"
        if self.mode == "auto-edit" and tool.paths(input):
            return "allow"
        return "allow" if tool.name in self._tools else "ask"

    def allow_always(self, tool: Tool, input: dict[str, Any]) -> None:
        """Record the session rule that `describe_rule` describes (nothing for writes outside)."""
        outside = self._outside(tool, input)
        if tool.read_only:
            self._read_dirs.update(_read_root(p) for p in outside)
        elif outside:
            return
        elif tool.name == "bash":
            words = command_words(str(input.get("command", "")))
            if words:
                self._bash_words.update(words)
        else:
            self._tools.add(tool.name)

    def describe_rule(self, tool: Tool, input: dict[str, Any]) -> str:
        """What "always allow" would allow from now on, in words for the permission modal."""
        outside = self._outside(tool, input)
        if tool.read_only:
            if not outside:
                return f"{tool.name} is read-only and always allowed"
            dirs = ", ".join(sorted(str(_read_root(p)) for p in outside))
            return f"always allow {tool.name} and other read-only tools under {dirs} this session"
        if outside:
            return "writes outside the workspace always ask; this allows only this call"
        if tool.name == "bash":
            words = command_words(str(input.get("command", "")))
            if not words:
                return (
                    "this command cannot become a rule (substitutions or unparsable); allows only this call"
                )
            listed = ", ".join(f"`{w} …`" for w in words)
            return f"always allow commands starting with {listed} this session"
        return f"always allow {tool.name} inside the workspace this session"

    def rules(self) -> list[str]:
        """The session rules so far, for /permissions."""
        out = [f"bash: `{w} …`" for w in sorted(self._bash_words)]
        out += [f"{name}: inside the workspace" for name in sorted(self._tools)]
        out += [f"read: {d}" for d in sorted(map(str, self._read_dirs))]
        return out

    # -- helpers -------------------------------------------------------------------------------------

    def _outside(self, tool: Tool, input: dict[str, Any]) -> list[Path]:
        try:
            raw = tool.paths(input)
        except Exception:
            raw = []
        out: list[Path] = []
        for path in raw:
            try:
                resolved = resolve_path(self.workspace, path)
            except Exception:
                continue
            if not is_inside(self.workspace, resolved):
                out.append(resolved.resolve())
        return out

    def _read_allowed(self, path: Path) -> bool:
        return any(path == d or d in path.parents for d in self._read_dirs)

    def _bash_allowed(self, command: str) -> bool:
        words = command_words(command)
        return bool(words) and all(w in self._bash_words for w in words)


def command_words(command: str) -> list[str]:
    """The first word of every command in a shell line (`cd x && pytest -q` -> ['cd', 'pytest']),
    skipping `VAR=value` prefixes. Empty when the line cannot be judged safely: command or process
    substitution, or quoting that does not parse."""
    if not command.strip() or any(marker in command for marker in _UNSAFE):
        return []
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    words: list[str] = []
    expect_command = True
    for token in tokens:
        if token in _SEPARATORS:
            expect_command = True
            continue
        if not expect_command:
            continue
        if token in ("(", ")", "{", "}") or ("=" in token and not token.startswith("=")):
            continue  # a subshell paren or a VAR=value prefix: the command comes next
        if token in ("<", ">", ">>", "<<", "2>", "&>"):
            return []  # a redirection before the command: too unusual to rule on
        if token not in words:
            words.append(token)
        expect_command = False
    return words


def _read_root(path: Path) -> Path:
    return path if path.is_dir() else path.parent
