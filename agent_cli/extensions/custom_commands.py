"""Custom slash commands: Markdown prompt templates in the same places and format as Claude Code's.

Directories, later ones winning on a name clash: `~/.claude/commands/` and
`$XDG_CONFIG_HOME/agent/commands/` (the person's own), then the workspace's `.claude/commands/` and
`.agent/commands/`. `review.md` is `/review`; `frontend/component.md` is `/component`, as in Claude
Code, and `/frontend:component` (`short_names` says who has a short name two files share).
Optional YAML frontmatter: `description`, `argument-hint`, `allowed-tools`, `model`. The body is the
prompt; `$ARGUMENTS` is everything after the name, `$1`, `$2`… the words of it (shell quoting). Its
`@file` mentions attach the file, and its `` !`command` ``s run first, as the person's calls
(agent/prompt_commands.py): a command file is not the person's yes to either.

Workspace commands are loaded even in an untrusted workspace (they only send text to the model),
but their `allowed-tools` (which skip permission questions) and `model` count only in a trusted one.
A workspace command never replaces one of the person's own of that name (theirs wins, with one
warning), and a workspace file linked outside the workspace is not read.
A built-in command keeps its name (the file is skipped, with one warning); a file whose frontmatter
does not parse is loaded without it, with one warning.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import yaml

from agent_cli.core.types import CommandSpec
from agent_cli.tools.rules import split_rule_list

Origin = Literal["user", "workspace"]
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|\d+)")
_SHELL = re.compile(r"(?<!\S)!`([^`\n]+)`")  # !`git status`: run before the prompt is sent
MAX_BYTES = 256_000


class PromptCommand(Protocol):
    """A `/name args` that becomes a prompt: a Markdown command, a skill (extensions/skills/) or a
    built-in prompt such as /init. `expand` may raise AgentError (one line for the person)."""

    @property
    def name(self) -> str: ...

    @property
    def origin(self) -> str: ...  # "user", "workspace" or "builtin"

    @property
    def allowed_tools(self) -> tuple[str, ...]: ...

    @property
    def model(self) -> str: ...

    def expand(self, arguments: str) -> str: ...

    def spec(self, workspace: Path) -> CommandSpec: ...


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review", "frontend:component"
    path: Path
    origin: Origin
    body: str
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str = ""

    def expand(self, arguments: str) -> str:
        """The prompt this command sends for `arguments`."""
        arguments = arguments.strip()
        text = _filled(self.body, arguments)
        uses_arguments = _PLACEHOLDER.search(self.body) is not None
        if arguments and not uses_arguments:
            text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
        return text.strip()

    def shell_commands(self, arguments: str) -> list[str]:
        """The commands of the body's `` !`command` `` (with `$ARGUMENTS`, `$1`… filled), in order:
        they run, as bash calls judged like the model's, before the prompt goes (agent/prompt_commands.py).
        Only the file's own: an argument that looks like one is words."""
        return [_filled(match.group(1), arguments.strip()).strip() for match in _SHELL.finditer(self.body)]

    def spec(self, workspace: Path) -> CommandSpec:
        where = _shown_path(self.path, workspace)
        help_text = self.description or _first_line(self.body) or "custom command"
        return CommandSpec(self.name, self.argument_hint, f"{help_text} ({where})")


@dataclass(frozen=True)
class CustomCommands:
    commands: Mapping[str, PromptCommand]
    warnings: tuple[str, ...] = ()

    def find(self, text: str) -> tuple[PromptCommand, str] | None:
        """(command, its arguments) when `text` is `/name args` for a custom command."""
        if not text.startswith("/") or text.startswith("//"):
            return None
        name, _, arguments = text[1:].strip().partition(" ")
        command = self.commands.get(name.lower())
        return (command, arguments) if command else None

    def specs(self, workspace: Path) -> list[CommandSpec]:
        """The commands' help lines (the built-in ones are in agent/api.py's list already), one each:
        under its short name when it has one (`/component`), its full one said beside it."""
        names: dict[int, list[str]] = {}
        commands: list[PromptCommand] = []
        for key, command in self.commands.items():
            if id(command) not in names:
                names[id(command)] = []
                commands.append(command)
            names[id(command)].append(key)
        out: list[CommandSpec] = []
        for command in commands:
            if command.origin == "builtin":
                continue
            spec = command.spec(workspace)
            first, *others = sorted(names[id(command)], key=lambda k: (":" in k, k))
            also = "; also " + ", ".join(f"/{k}" for k in others) if others else ""
            out.append(replace(spec, name=first, help=spec.help + also))
        return sorted(out, key=lambda s: s.name)


def command_dirs(workspace: Path, user_dirs: Sequence[Path]) -> list[tuple[Path, Origin]]:
    dirs: list[tuple[Path, Origin]] = [(d, "user") for d in user_dirs]
    return dirs + [
        (workspace / ".claude" / "commands", "workspace"),
        (workspace / ".agent" / "commands", "workspace"),
    ]


def load_custom_commands(
    workspace: Path, user_dirs: Sequence[Path], builtin: Sequence[str]
) -> CustomCommands:
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    reserved = {name.lower() for name in builtin}
    for directory, origin in command_dirs(workspace, user_dirs):
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*.md")):
            name = ":".join(path.relative_to(directory).with_suffix("").parts).lower()
            if not name or " " in name:
                warnings.append(f"{path}: a command name cannot contain spaces; skipped")
                continue
            if name in reserved:
                warnings.append(f"{path}: /{name} is a built-in command, which wins; this file is ignored")
                continue
            prior = found.get(name)
            if origin == "workspace" and prior is not None and prior.origin == "user":
                warnings.append(
                    f"{path}: /{name} is one of yours ({prior.path}), which wins; this file is ignored"
                )
                continue
            if origin == "workspace" and not path.resolve().is_relative_to(workspace.resolve()):
                warnings.append(f"{path}: a link to a file outside the workspace; skipped")
                continue
            command, problem = read_command(path, name, origin)
            if problem:
                warnings.append(problem)
            if command is not None:
                found.pop(name, None)  # so the table's order is the order read: a later one wins
                found[name] = command
    table: dict[str, CustomCommand] = dict(found)
    for alias, command in short_names(list(found.values()), reserved, warnings).items():
        if alias in table:  # a workspace's /component never replaces your frontend/component.md
            warnings.append(
                f"{table[alias].path}: /{alias} is one of yours ({command.path}), which wins; this file is ignored"
            )
        table[alias] = command
    return CustomCommands(table, tuple(warnings))


def short_names(
    commands: Sequence[CustomCommand], reserved: set[str], warnings: list[str]
) -> dict[str, CustomCommand]:
    """`/component` for `frontend/component.md`, as Claude Code calls it; `commands` lowest
    precedence first. A built-in's name is never taken, nor a command's full name, unless that is the
    workspace's and the short name the person's. Of two with the same short name, the one that would
    win were their names the same has it (the later loaded; the person's over the workspace's); the
    other keeps its full name only, which one line says."""
    full = {c.name: c for c in commands}
    short: dict[str, CustomCommand] = {}
    for command in commands:
        alias = command.name.rsplit(":", 1)[-1]
        named = full.get(alias)
        if alias == command.name or alias in reserved:
            continue
        if named is not None and not (command.origin == "user" and named.origin == "workspace"):
            continue
        prior = short.get(alias)
        yours_first = prior is not None and prior.origin == "user" and command.origin == "workspace"
        winner = prior if yours_first else command
        if prior is not None:
            loser = command if winner is prior else prior
            warnings.append(
                f"/{alias} is /{winner.name} ({winner.path}); /{loser.name} keeps its full name only"
            )
        short[alias] = winner
    return short


def read_command(path: Path, name: str, origin: Origin) -> tuple[CustomCommand | None, str]:
    """The command in `path`, and one line saying what was wrong with it ('' when nothing)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return None, f"{path}: larger than {MAX_BYTES // 1000} kB; skipped"
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}: cannot be read ({exc}); skipped"
    meta, body, problem = parse_frontmatter(text)
    if problem:
        problem = f"{path}: {problem}; loaded without its frontmatter"
    return (
        CustomCommand(
            name=name,
            path=path,
            origin=origin,
            body=body,
            description=_one_line(meta.get("description")),
            argument_hint=_one_line(meta.get("argument-hint")),
            allowed_tools=_tool_rules(meta.get("allowed-tools")),
            model=_one_line(meta.get("model")),
        ),
        problem,
    )


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str, str]:
    """(fields, body, problem): YAML between `---` lines at the top, if any."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, text.strip(), ""
    body = text[match.end() :].strip()
    try:
        data = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or type(exc).__name__
        return {}, body, f"frontmatter is not valid YAML{where} ({reason})"
    if not isinstance(data, dict):
        return {}, body, "frontmatter must be `key: value` lines"
    return data, body, ""


def _tool_rules(value: Any) -> tuple[str, ...]:
    """`allowed-tools`: a YAML list, or one string of rules (as --allowed-tools takes them)."""
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return tuple(split_rule_list(value)) if isinstance(value, str) else ()


def without_shell(text: str) -> str:
    """`text` without its `` !`command` `` (where `@` is a command's, not a mention)."""
    return _SHELL.sub(" ", text)


def _filled(template: str, arguments: str) -> str:
    """`$ARGUMENTS`, `$1`, `$2`… of `template` filled, in one pass (arguments are never expanded again)."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        return arguments if key == "ARGUMENTS" else _nth(words, int(key))

    return _PLACEHOLDER.sub(fill, template)


def _nth(words: list[str], n: int) -> str:
    return words[n - 1] if 1 <= n <= len(words) else ""


def _one_line(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _first_line(body: str) -> str:
    line = next((ln.strip().lstrip("# ") for ln in body.splitlines() if ln.strip()), "")
    return line if len(line) <= 60 else line[:57] + "…"


def _shown_path(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path).replace(str(Path.home()), "~", 1)
