"""Permission rules in Claude Code's syntax, parsed: `Bash(git diff:*)`, `Edit(src/**)`, `mcp__srv`.

A rule is a tool name, optionally with a specifier in parentheses:
- `Bash` (every command), `Bash(npm test)` (exactly that command), `Bash(git diff:*)` (commands whose
  words start with `git diff`), `Bash(npm run *)` (a `*` wildcard over the command text). An
  assignment before a command is part of it (`FOO=1 pytest` is not `pytest`) unless it is harmless
  (`LANG=C`); a command that sets a variable that runs programs (`GIT_*`, `LD_PRELOAD`, `PAGER`…) or
  has another risk (shell/programs.py) is allowed only by an exact rule or a bare `Bash`. Deny and ask
  rules read a command loosely: with or without its assignments, its program by base name;
- `Read(path)` applies to every tool that reads files (read_file, grep, glob, ls; as a deny or ask
  rule edit_file too, which shows what it reads: tools/denied_reads.py), `Edit(path)` and
  `Write(path)` to every tool that writes them (edit_file, write_file). Paths are gitignore-style
  globs: `src/**`, `*.env`; `./x` is anchored at the workspace, `~/x` at the home directory, `//x` is
  absolute; `/x` is tried both as absolute and as anchored at the workspace (Claude Code reads it as
  relative to the project), so a deny rule is never weaker than meant. An allow rule matches a
  symlink only by its resolved target (`Edit(src/**)` does not allow an edit through `src/x ->
  ../.git/config`); a deny or ask rule matches the link's own path and its target;
- `WebFetch(domain:docs.python.org)` (web_fetch of that host; `domain:*.python.org` its subdomains),
  `WebFetch` and `WebSearch` (every fetch, every search): tools/web/permission.py;
- `mcp__server` (every tool of that MCP server), `mcp__server__tool`, or any other tool name.
Tool names are case-insensitive and ours and Claude Code's are the same tool (`Read` = `read_file`).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pathspec

from agent_cli.tools.shell import SimpleCommand
from agent_cli.tools.shell.env import is_safe
from agent_cli.tools.web.address import UrlError, normalize_host

Effect = Literal["allow", "ask", "deny"]
EFFECTS: tuple[Effect, ...] = ("allow", "ask", "deny")

# Claude Code's names and ours, lowercased, to one canonical name per tool.
_ALIASES = {
    "bash": "bash",
    "read": "read",
    "read_file": "read",
    "write": "write",
    "write_file": "write",
    "edit": "edit",
    "edit_file": "edit",
    "multiedit": "edit",
    "notebookedit": "edit",
    "grep": "grep",
    "glob": "glob",
    "ls": "ls",
    "todowrite": "todo_write",
    "todo_write": "todo_write",
    "webfetch": "web_fetch",
    "web_fetch": "web_fetch",
    "websearch": "web_search",
    "web_search": "web_search",
}
# Every tool a rule may name: ours and Claude Code's (canonical, lowercase); `mcp__…` besides.
KNOWN_TOOLS = frozenset(
    {*_ALIASES.values(), "task", "agent", "recall", "skill", "bash_output", "kill_shell", "bashoutput"}
    | {"killshell", "killbash", "exitplanmode", "notebookread", "todoread", "slashcommand"}
)
READ_FAMILY = frozenset({"read", "grep", "glob", "ls"})
WRITE_FAMILY = frozenset({"edit", "write"})
_DOMAIN = re.compile(r"^(\*|(\*\.)?[a-z0-9_\[\]:-]+(\.[a-z0-9_-]+)*)$")  # a host, `*.` subdomains, `*` all
_RULE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that does not parse; the message names the rule and what is wrong."""


def canonical_tool(name: str) -> str:
    lowered = name.strip().lower()
    return _ALIASES.get(lowered, lowered)


@dataclass(frozen=True)
class Rule:
    tool: str  # canonical, lowercase
    spec: str | None  # what is inside the parentheses; None for a bare tool name
    text: str  # as the person wrote it (trimmed)

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text or "")
        if not match:
            raise RuleError(f"{text!r} is not a rule: write Tool or Tool(specifier), e.g. Bash(git diff:*)")
        name, spec = match.group(1), match.group(2)
        if spec is not None:
            spec = spec.strip()
            if not spec:
                raise RuleError(f"{text!r}: the parentheses are empty (write {name} for every call)")
            if spec in ("*", "**"):
                spec = None  # Bash(*) = Bash
        tool = canonical_tool(name)
        if tool == "bash" and spec is not None:
            try:
                words = shlex.split(spec.removesuffix(":*"))
            except ValueError as exc:
                raise RuleError(f"{text!r}: the command does not parse ({exc})") from None
            if not words:
                raise RuleError(f"{text!r}: no command before ':*'")
        if tool == "web_fetch" and spec is not None:
            try:
                host = normalize_host(spec.removeprefix("domain:"))
            except UrlError:
                host = ""
            if not spec.startswith("domain:") or not _DOMAIN.match(host):
                raise RuleError(
                    f"{text!r}: write WebFetch(domain:HOST), e.g. WebFetch(domain:docs.python.org)"
                )
            spec = f"domain:{host}"
        return cls(tool, spec, text.strip())

    # -- matching ----------------------------------------------------------------------------------
    def names_tool(self, tool_name: str) -> bool:
        """Whether a bare rule (no specifier) covers every call of this tool."""
        if self.spec is not None:
            return False
        name = canonical_tool(tool_name)
        if self.tool == name or (self.tool in WRITE_FAMILY and name in WRITE_FAMILY):
            return True  # Edit and Write cover every tool that writes files
        server = self.tool.removesuffix("__*")
        return server.startswith("mcp__") and server.count("__") == 1 and name.startswith(server + "__")

    def matches_command(self, command: SimpleCommand, loose: bool = False) -> bool:
        """A `Bash(...)` rule against one simple command (a bare `Bash` matches every command).

        As an allow rule (`loose` False): harmless assignments are left out, any other is part of
        the command, and a command with a risk matches only an exact rule. As a deny or ask rule
        (`loose`): any reading of the command matches, its risk aside."""
        if self.tool != "bash":
            return False
        if self.spec is None:
            return True
        strict = tuple(a for a in command.assignments if not is_safe(a)) + command.words
        if not loose:
            if command.risk:
                return self._exact(command.assignments + command.words) or self._exact(strict)
            return self._spec_matches(strict)
        return any(self._spec_matches(view) for view in _loose_views(command, strict))

    def _exact(self, words: tuple[str, ...]) -> bool:
        spec = self.spec or ""
        return not spec.endswith(":*") and "*" not in spec and tuple(shlex.split(spec)) == words

    def _spec_matches(self, words: tuple[str, ...]) -> bool:
        spec = self.spec or ""
        if not words:
            return False
        if spec.endswith(":*"):
            prefix = tuple(shlex.split(spec[:-2]))
            return words[: len(prefix)] == prefix
        if "*" in spec:
            return fnmatch.fnmatchcase(" ".join(words), spec)
        return tuple(shlex.split(spec)) == words

    def matches_path(
        self, tool_name: str, path: Path, workspace: Path, home: Path, resolved_only: bool = False
    ) -> bool:
        """A `Read(...)` / `Edit(...)` / `Write(...)` rule against a path the tool reads or writes;
        with `resolved_only` (allow rules) a symlink is matched by its target alone."""
        name = canonical_tool(tool_name)
        if self.spec is None:
            return self.names_tool(tool_name)
        family = (
            READ_FAMILY if self.tool in READ_FAMILY else WRITE_FAMILY if self.tool in WRITE_FAMILY else None
        )
        if family is None or name not in family:
            return False
        return path_matches(self.spec, path, workspace, home, resolved_only)

    def matches_target(self, tool_name: str, target: str) -> bool:
        """Any other `Tool(spec)`: the spec as a wildcard over the call's label (its target)."""
        return (
            self.tool == canonical_tool(tool_name)
            and self.spec is not None
            and fnmatch.fnmatchcase(target, self.spec)
        )


@dataclass(frozen=True)
class SourcedRule:
    rule: Rule
    effect: Effect
    source: str  # "--allowed-tools", "config", ".claude/settings.json", "session", …


def path_matches(spec: str, path: Path, workspace: Path, home: Path, resolved_only: bool = False) -> bool:
    """Whether `path` matches a path rule's spec: by the path as given and by its resolved target,
    or (`resolved_only`) by the target alone."""
    resolved = _resolved(path)
    candidates = {resolved} if resolved is not None else set()
    if not resolved_only:
        candidates.add(path)
    return PathSpec.of(spec, workspace, home).matches(candidates)


@dataclass(frozen=True)
class PathSpec:
    """A path rule's spec, compiled: each (root, pattern) it is anchored at, its root as written and
    resolved. `matches` tries paths as given (resolving them is the caller's part); it is called for
    every file a search finds, so it compares normalized strings."""

    anchored: tuple[tuple[str, str], ...]  # (the root as a prefix ending in '/', the pattern under it)

    @classmethod
    def of(cls, spec: str, workspace: Path, home: Path) -> PathSpec:
        if spec.startswith("//"):
            bases = [(Path("/"), spec[1:])]
        elif spec == "~" or spec.startswith("~/"):
            bases = [(home, spec[1:] or "/**")]
        elif spec.startswith("/"):
            bases = [(Path("/"), spec), (workspace, spec)]
        elif spec.startswith("./"):
            bases = [(workspace, spec[1:])]
        else:
            bases = [(workspace, spec)]
        anchored: list[tuple[str, str]] = []
        for base, pattern in bases:  # the root as written and as resolved
            roots = dict.fromkeys(_normalized(root) for root in (base, _resolved(base) or base))
            anchored += [(root.rstrip("/") + "/", pattern) for root in roots]
        return cls(tuple(anchored))

    def matches(self, paths: Collection[str | Path]) -> bool:
        texts = list(dict.fromkeys(_normalized(path) for path in paths))
        for prefix, pattern in self.anchored:
            for text in texts:
                rel = text[len(prefix) :] if text.startswith(prefix) else ""
                if rel and _compiled(pattern).match_file(rel):
                    return True
        return False


def _normalized(path: str | Path) -> str:
    """A path as a normalized string; `//x` (which POSIX lets mean something else) read as `/x`."""
    text = os.path.normpath(path)
    return text[1:] if text.startswith("//") else text


def _resolved(path: Path) -> Path | None:
    try:
        return Path(os.path.realpath(path))
    except (OSError, RuntimeError, ValueError):
        return None


_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})


def _loose_views(command: SimpleCommand, strict: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The readings of a command a deny or ask rule is tried on: with and without its assignments,
    with its program by base name (`/usr/bin/rm` is `rm`), and git without its global options
    (`git --no-pager -C . push` is `git push`)."""
    views = [command.words, strict, command.assignments + command.words]
    words = command.words
    if words and "/" in words[0]:
        words = (words[0].rsplit("/", 1)[-1],) + words[1:]
        views.append(words)
    if words[:1] == ("git",):
        i = 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _GIT_OPTIONS_WITH_VALUE else 1
        views.append(("git",) + words[i:])
    return views


def _relative(path: Path, base: Path) -> str | None:
    try:
        rel = Path(os.path.normpath(path)).relative_to(os.path.normpath(base))
    except ValueError:
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def split_rule_list(text: str) -> list[str]:
    """`--allowed-tools "Bash(git diff:*) Edit,Read(~/x y)"` -> the rules: commas and spaces separate
    rules, except inside parentheses."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                rules.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        rules.append("".join(current))
    return rules


def parse_rules(
    texts: list[str] | tuple[str, ...], effect: Effect, source: str
) -> tuple[list[SourcedRule], list[str]]:
    """The rules that parse, and one warning line for each that does not (naming its source)."""
    rules: list[SourcedRule] = []
    warnings: list[str] = []
    for text in texts:
        try:
            rule = Rule.parse(str(text))
        except RuleError as exc:
            warnings.append(f"{source}: ignoring {effect} rule: {exc}")
            continue
        rules.append(SourcedRule(rule, effect, source))
        if not names_known_tool(rule):  # kept (a tool may come later), but a typo must not pass unseen
            warnings.append(
                f"{source}: {effect} rule {rule.text!r} names no tool there is; it matches nothing"
            )
    return rules, warnings


def names_known_tool(rule: Rule) -> bool:
    return rule.tool in KNOWN_TOOLS or rule.tool.startswith("mcp__")


def is_tool_rule(text: str) -> bool:
    """Whether `text` is a rule naming a known tool (`Read`, `Bash(git diff:*)`, `mcp__x`)."""
    try:
        return names_known_tool(Rule.parse(text))
    except RuleError:
        return False


# -- the narrowest rule "always allow" saves ---------------------------------------------------------

# Commands whose second word picks what they do: `git diff` is a different thing from `git push`.
SUBCOMMAND_TOOLS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "gh",
    }
)
_UNSAFE_WORD = re.compile(r"[$`*?\[\]{}()<>|;&\\\n]")


def command_rule(command: SimpleCommand) -> str | None:
    """`pytest -q tests/x.py` -> `Bash(pytest:*)`; `git diff HEAD` -> `Bash(git diff:*)`;
    `python -m pytest -x` -> `Bash(python -m pytest:*)`; `FOO=1 make` -> `Bash(FOO=1 make:*)`. None
    when the command name is not plain or the command has a risk no prefix rule may allow."""
    words = command.words
    if command.risk or not words or _UNSAFE_WORD.search(words[0]):
        return None
    assigns = tuple(a for a in command.assignments if not is_safe(a))
    if any(_UNSAFE_WORD.search(a) for a in assigns):
        return None
    take = 1
    if words[0] in SUBCOMMAND_TOOLS and len(words) > 1 and not words[1].startswith("-"):
        take = 2
    elif words[0] in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        take = 3
    prefix = words[:take]
    if any(_UNSAFE_WORD.search(w) for w in prefix):
        prefix = words[:1]
    return f"Bash({' '.join(shlex.quote(w) for w in assigns + prefix)}:*)"


def path_rule(tool: str, path: Path, workspace: Path, suffix: str = "") -> str:
    """`Edit(src/app.py)` (anchored at the workspace), or `Read(//abs/dir/**)` outside it."""
    rel = _relative(path, workspace)
    if rel is None:
        return f"{tool}(/{_escape(path.as_posix())}{suffix})"
    return f"{tool}({_escape(rel) if '/' in rel else './' + _escape(rel)}{suffix})"


def _escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\!])", r"\\\1", text)
