"""Finding skills and reading their frontmatter; bodies are read only when a skill is used.

A skill is a folder with a `SKILL.md` right inside one of these folders, lowest precedence first:
the workspace's `.agents/skills/`, `.claude/skills/`, `.agent/skills/` (only when the workspace is
trusted: a skill's words reach the system prompt and its `allowed-tools` skip questions; the trust
question names these folders, settings/trust.py), then the
person's `~/.claude/skills/` (`$CLAUDE_CONFIG_DIR`) and `~/.config/agent/skills/`
(`$XDG_CONFIG_HOME`). On a name clash the later one wins, so the person's own skill always beats a
workspace's: a repository cannot replace the `deploy` skill you wrote. Each clash is one line.

Frontmatter (YAML between `---` lines, within the first 64 kB): `name` (else the folder's name;
lowercase letters, digits, `-` and `_`, at most 64), `description` (else the body's first
paragraph), `allowed-tools`, `disable-model-invocation`, `user-invocable`, `argument-hint`,
`model`. A SKILL.md whose frontmatter does not parse is not loaded (it may say
`disable-model-invocation`, which cannot be known), with one line naming it; the rest load.
A folder without SKILL.md is skipped silently unless it looks like a skill (Markdown inside, a
`skill.md` in the wrong case, or a SKILL.md one level too deep): then one line says why.
A workspace SKILL.md whose real path leaves the workspace (a symlink) is not loaded.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import AgentError
from agent_cli.extensions.custom_commands import parse_frontmatter
from agent_cli.settings.trust import SKILL_DIRS, SKILL_FILE, skill_folders
from agent_cli.tools.rules import parse_rules, split_rule_list

Origin = Literal["user", "workspace"]
HEAD_BYTES = 64 * 1024  # the frontmatter must end within this
CHUNK_BYTES = 1 << 20
DESCRIPTION_CHARS = 1024  # the Agent Skills limit; longer ones are cut in the listing
_OPENING = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n")
_FRONTMATTER = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n.*?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


class SkillError(AgentError):
    """A skill that cannot be read now (its file changed or went away since the session started)."""


@dataclass(frozen=True)
class SkillDir:
    path: Path
    origin: Origin
    label: str  # as shown: "~/.claude/skills", ".agent/skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str  # one line, as written (escaped where it enters the context)
    path: Path  # its SKILL.md
    origin: Origin
    source: str  # the skills folder it was found in, as shown
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True  # not `disable-model-invocation: true`
    user_invocable: bool = True  # `/name` exists
    argument_hint: str = ""
    model: str = ""
    size: int = 0  # bytes of SKILL.md when the session started

    @property
    def folder(self) -> Path:
        return self.path.parent

    def body_offset(self) -> int:
        """Where the body starts now (the frontmatter read again: the file may have changed)."""
        try:
            with self.path.open("rb") as handle:
                head = handle.read(HEAD_BYTES)
        except OSError as exc:
            raise SkillError(f"{self.path}: cannot be read ({exc.strerror or exc})") from exc
        _, offset, problem = read_frontmatter(head)
        if problem:
            raise SkillError(f"{self.path}: {problem}")
        return offset

    def body_bytes(self) -> int:
        """The body's size in bytes now."""
        try:
            return max(0, self.path.stat().st_size - self.body_offset())
        except OSError as exc:
            raise SkillError(f"{self.path}: cannot be read ({exc.strerror or exc})") from exc

    def chunks(self, size: int = CHUNK_BYTES) -> Iterator[str]:
        """The body as text, piece by piece (bounded memory; bad UTF-8 replaced)."""
        offset = self.body_offset()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            with self.path.open("rb") as handle:
                handle.seek(offset)
                while data := handle.read(size):
                    if text := decoder.decode(data):
                        yield text
        except OSError as exc:
            raise SkillError(f"{self.path}: cannot be read ({exc.strerror or exc})") from exc
        if tail := decoder.decode(b"", final=True):
            yield tail

    def read_body(self) -> str:
        return "".join(self.chunks()).strip()


@dataclass(frozen=True)
class SkillCatalog:
    skills: tuple[Skill, ...] = ()  # by name
    warnings: tuple[str, ...] = ()
    untrusted: str = ""  # what an untrusted workspace holds that was not loaded (for /skills)

    def get(self, name: str) -> Skill | None:
        wanted = name.strip().lstrip("/").lower()
        return next((s for s in self.skills if s.name == wanted), None)

    def for_model(self) -> list[Skill]:
        return [s for s in self.skills if s.model_invocable]


def skill_dirs(workspace: Path, user_dirs: Sequence[Path]) -> list[SkillDir]:
    """Every place skills are looked for, lowest precedence first (whether or not it exists)."""
    dirs = [SkillDir(workspace / d, "workspace", d) for d in SKILL_DIRS]
    return dirs + [SkillDir(d, "user", _home_label(d)) for d in user_dirs]


def load_skills(dirs: Sequence[SkillDir], workspace: Path, trusted: bool) -> SkillCatalog:
    """The skills of `dirs` (the workspace's only when `trusted`: an untrusted one's are counted for
    /skills, and the trust question names their folders) and one line per problem."""
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    untrusted: list[str] = []
    for directory in dirs:
        if directory.origin == "workspace" and not trusted:
            if count := len(skill_folders(directory.path)):
                untrusted.append(f"{count} in {directory.label}")
            continue
        for skill in _load_dir(directory, workspace, warnings):
            prior = found.get(skill.name)
            if prior is not None and not _same_file(prior.path, skill.path):
                warnings.append(
                    f"skill {skill.name!r}: {_shown(prior.path, workspace)} is not used; "
                    f"{_shown(skill.path, workspace)} has the same name and wins"
                )
            found[skill.name] = skill
    skipped = f"not loaded, this workspace is not trusted: {', '.join(untrusted)}" if untrusted else ""
    skills = tuple(sorted(found.values(), key=lambda s: s.name))
    return SkillCatalog(skills, tuple(warnings), skipped)


def _load_dir(directory: SkillDir, workspace: Path, warnings: list[str]) -> list[Skill]:
    try:
        entries = sorted(directory.path.iterdir()) if directory.path.is_dir() else []
    except OSError as exc:
        warnings.append(f"{directory.path}: cannot be listed ({exc.strerror or exc}); its skills are skipped")
        return []
    skills: list[Skill] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if not entry.is_dir():
            if entry.name.lower() == SKILL_FILE.lower():
                warnings.append(f"{entry}: a skill is a folder with a SKILL.md in it; this file is ignored")
            continue
        path = entry / SKILL_FILE
        if not path.is_file():
            if why := _looks_like_a_skill(entry):
                warnings.append(f"{entry}/: {why}; not loaded")
            continue
        if directory.origin == "workspace" and not _inside(path, workspace):
            warnings.append(f"{path}: its real path is outside the workspace; not loaded")
            continue
        skill, problem = read_skill(path, directory)
        if problem:
            warnings.append(problem)
        if skill is not None:
            skills.append(skill)
    return skills


def read_skill(path: Path, directory: SkillDir) -> tuple[Skill | None, str]:
    """The skill of one SKILL.md, and one line saying what was wrong ('' when nothing)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except OSError as exc:
        return None, f"{path}: cannot be read ({exc.strerror or exc}); skipped"
    meta, offset, problem = read_frontmatter(head)
    if problem:
        return None, f"{path}: {problem}; this skill is not loaded"
    name = _one_line(meta.get("name")).lower() or path.parent.name.lower()
    if not _NAME.match(name):
        return None, (
            f"{path}: the name {name!r} is not valid (lowercase letters, digits, '-' and '_', "
            "at most 64 characters); this skill is not loaded"
        )
    description = _one_line(meta.get("description")) or _first_paragraph(head[offset:])
    if not description:
        return None, f"{path}: no description (add `description:` saying when to use it); not loaded"
    flags: dict[str, bool] = {}
    for key, default in (("disable-model-invocation", False), ("user-invocable", True)):
        value = meta.get(key, default)
        if not isinstance(value, bool):
            return None, f"{path}: `{key}` must be true or false, not {value!r}; this skill is not loaded"
        flags[key] = value
    rules, bad = parse_rules(_tool_rules(meta.get("allowed-tools")), "allow", f"{path} allowed-tools")
    return (
        Skill(
            name=name,
            description=description,
            path=path,
            origin=directory.origin,
            source=directory.label,
            allowed_tools=tuple(r.rule.text for r in rules),
            model_invocable=not flags["disable-model-invocation"],
            user_invocable=flags["user-invocable"],
            argument_hint=_one_line(meta.get("argument-hint")),
            model=_one_line(meta.get("model")),
            size=size,
        ),
        "; ".join(bad),
    )


def read_frontmatter(head: bytes) -> tuple[dict[str, Any], int, str]:
    """(fields, where the body starts, problem) of a SKILL.md's first bytes."""
    if not _OPENING.match(head):
        return {}, 3 if head.startswith(b"\xef\xbb\xbf") else 0, ""
    match = _FRONTMATTER.match(head)
    if match is None:
        if len(head) >= HEAD_BYTES:
            return {}, 0, f"the frontmatter does not end within the first {HEAD_BYTES // 1024} kB"
        return {}, 0, "the frontmatter has no closing `---` line"
    try:
        text = match.group(0).decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return {}, 0, "the frontmatter is not UTF-8"
    data, _, problem = parse_frontmatter(text)
    return data, match.end(), problem


def _looks_like_a_skill(folder: Path) -> str:
    """Why a folder without SKILL.md was probably meant as a skill ('' when it was not)."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return ""
    if wrong := next((e.name for e in entries if e.name.lower() == SKILL_FILE.lower()), ""):
        return f"the file must be named {SKILL_FILE} exactly, not {wrong}"
    if deeper := sorted(e.name for e in entries if (e / SKILL_FILE).is_file()):
        return f"{deeper[0]}/{SKILL_FILE} is one level too deep: a skill's folder sits right in skills/"
    if any(e.suffix.lower() == ".md" for e in entries):
        return f"it holds Markdown but no {SKILL_FILE}"
    return ""


def _first_paragraph(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [
            ln for ln in paragraph.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")
        ]
        if lines:
            return _one_line(" ".join(lines))
    return ""


def _tool_rules(value: Any) -> tuple[str, ...]:
    """`allowed-tools`: a YAML list, or one string of rules (`Read, Grep, Bash(git status:*)`)."""
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return tuple(split_rule_list(value)) if isinstance(value, str) else ()


def _one_line(value: Any) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _inside(path: Path, workspace: Path) -> bool:
    try:
        path.resolve().relative_to(workspace.resolve())
    except (OSError, ValueError):
        return False
    return True


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _shown(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return _home_label(path)


def _home_label(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and (text == home or text.startswith(home + "/")) else text
