"""Sub-agent definitions: Markdown files with YAML frontmatter, as Claude Code writes them.

    ---
    name: reviewer
    description: Reviews a diff for bugs
    tools: Read, Grep, Glob        # optional: Claude Code's names or ours; absent = the parent's tools
    model: haiku                   # optional: inherit | sonnet | opus | haiku | a model id
    ---
    You review code ...            # the body is the system prompt

Looked for in `.claude/agents/` and `.agent/agents/` of the workspace, then the person's own:
`~/.claude/agents/` (`$CLAUDE_CONFIG_DIR`, Claude Code's user sub-agents) and the user config's
`agents/` (a later one of the same name wins). The workspace is not trusted: its definitions (which
set a sub-agent's system prompt, tools and model) load only in a workspace the person trusts, never
from a file linked outside it, and never in place of a built-in or one of the person's own. The
person's own may override the built-in `general-purpose` and `explore`. A malformed file is skipped
with one line naming it; the rest load.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_cli.context.prompts import load_prompt
from agent_cli.llm.models import builtin_registry
from agent_cli.settings.trust import AGENT_DIRS
from agent_cli.tools.task import DEFAULT_AGENT, AgentDefinition

# Claude Code's tool names -> ours (MultiEdit is a sequence of edits: edit_file does one at a time)
CLAUDE_TOOL_NAMES = {
    "read": "read_file",
    "write": "write_file",
    "edit": "edit_file",
    "multiedit": "edit_file",
    "bash": "bash",
    "grep": "grep",
    "glob": "glob",
    "ls": "ls",
    "todowrite": "todo_write",
    "task": "task",
    "skill": "skill",
    "webfetch": "web_fetch",
    "websearch": "web_search",
}
EXPLORE_TOOLS = ("read_file", "grep", "glob", "ls", "recall")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")


@dataclass
class LoadedAgents:
    agents: list[AgentDefinition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def builtin_agents() -> list[AgentDefinition]:
    return [
        AgentDefinition(
            DEFAULT_AGENT,
            "General agent for multi-step work: researching a question, searching and changing code. "
            "Has the same tools as you except task.",
            load_prompt(f"agents/{DEFAULT_AGENT}"),
        ),
        AgentDefinition(
            "explore",
            "Fast read-only agent for searching a codebase: finding files, definitions, usages, and "
            "answering questions about how the code works. Reports paths and lines; cannot change files.",
            load_prompt("agents/explore"),
            tools=EXPLORE_TOOLS,
        ),
    ]


@dataclass(frozen=True)
class AgentDir:
    path: Path
    origin: Literal["user", "workspace"]
    root: Path  # a workspace file must really lie inside this (a link out of it is skipped)


def agent_dirs(workspace: Path, user_config_dir: Path, claude_dir: Path | None = None) -> list[AgentDir]:
    """Lowest precedence first: the workspace's, then the person's own: Claude Code's
    (`claude_dir`, `~/.claude` or `$CLAUDE_CONFIG_DIR`), then ours (as for skills)."""
    theirs = [AgentDir(workspace / d, "workspace", workspace) for d in AGENT_DIRS]
    claude = [AgentDir(claude_dir / "agents", "user", claude_dir)] if claude_dir is not None else []
    return [*theirs, *claude, AgentDir(user_config_dir / "agents", "user", user_config_dir)]


def load_agents(directories: Iterable[AgentDir], known_tools: Iterable[str], trusted: bool) -> LoadedAgents:
    """The built-ins, then every `*.md` of `directories` in order (a later name replaces an earlier;
    the workspace's only when `trusted`, and never a built-in)."""
    known = set(known_tools)
    out = LoadedAgents()
    by_name = {a.name: a for a in builtin_agents()}
    builtin = set(by_name)
    for directory in directories:
        files = sorted(directory.path.glob("*.md")) if directory.path.is_dir() else []
        if directory.origin == "workspace" and not trusted:
            continue  # the trust question and notice name the folder (settings/trust.py)
        for path in files:
            if directory.origin == "workspace" and not path.resolve().is_relative_to(
                directory.root.resolve()
            ):
                out.warnings.append(
                    f"agent definition {path}: a link to a file outside the workspace; skipped"
                )
                continue
            try:
                definition, notes = parse_agent(path, known)
            except ValueError as exc:
                out.warnings.append(f"agent definition {path}: {exc}; skipped")
                continue
            out.warnings += [f"agent definition {path}: {note}" for note in notes]
            if directory.origin == "workspace" and definition.name in builtin:
                out.warnings.append(
                    f"agent definition {path}: {definition.name!r} is a built-in agent, which a workspace "
                    "cannot replace; skipped"
                )
                continue
            prior = by_name.get(definition.name)
            if prior is not None and prior.source != "built-in":
                out.warnings.append(
                    f"agent definition {prior.source}: not used; {path} has the same name and wins"
                )
            by_name[definition.name] = definition
    out.agents = list(by_name.values())
    return out


def parse_agent(path: Path, known_tools: set[str]) -> tuple[AgentDefinition, list[str]]:
    """One definition and its notes (tools it names that do not exist). Raises ValueError when unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read it ({exc})") from exc
    meta, body = split_frontmatter(text)
    name = str(meta.get("name") or path.stem).strip()
    if not _NAME.match(name):
        raise ValueError(f"name {name!r} must be letters, digits, '-', '_', '.' or ':' (at most 64)")
    description = str(meta.get("description") or "").strip()
    if not description:
        raise ValueError("frontmatter needs a `description` (it tells the model when to use the agent)")
    if not body.strip():
        raise ValueError("the body (the agent's system prompt) is empty")
    notes: list[str] = []
    tools = _tools(meta.get("tools"), known_tools, notes)
    model = str(meta.get("model") or "").strip()
    model = "" if model.lower() in ("", "inherit") else builtin_registry().resolve(model)  # `haiku`
    return AgentDefinition(name, description, body.strip(), tools, model, str(path)), notes


def split_frontmatter(text: str) -> tuple[dict, str]:
    """(frontmatter mapping, body). No frontmatter: ({}, text). Raises ValueError when it is not YAML."""
    import yaml

    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            try:
                meta = yaml.safe_load("".join(lines[1:index])) or {}
            except yaml.YAMLError as exc:
                where = getattr(exc, "problem_mark", None)
                line = f" (line {where.line + 2})" if where is not None else ""
                raise ValueError(f"frontmatter is not valid YAML{line}") from exc
            if not isinstance(meta, dict):
                raise ValueError("frontmatter must be a mapping of `key: value` lines")
            return meta, "".join(lines[index + 1 :])
    raise ValueError("frontmatter starts with `---` but has no closing `---`")


def _tools(raw: object, known: set[str], notes: list[str]) -> tuple[str, ...] | None:
    if raw is None or raw == "" or raw == "*":
        return None
    if isinstance(raw, str):
        names = [n.strip() for n in raw.split(",")]
    elif isinstance(raw, list):
        names = [str(n).strip() for n in raw]
    else:
        raise ValueError("`tools` must be a comma-separated list of tool names")
    out: list[str] = []
    for name in filter(None, names):
        ours = name if name in known else CLAUDE_TOOL_NAMES.get(name.lower(), name)
        if ours not in known and not ours.startswith("mcp__"):
            notes.append(f"tool {name!r} does not exist here; left out")
            continue
        if ours not in out:
            out.append(ours)
    return tuple(out)
