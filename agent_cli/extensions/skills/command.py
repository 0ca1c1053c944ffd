"""Each skill the person may start is a `/name args` command (like a custom command, and winning
over one of the same name, as in Claude Code), and `/skills` lists them with what they cost.

`/name args` sends the skill's body as the prompt (`$ARGUMENTS`, `$1`… filled in as for custom
commands), after the line naming its folder, and grants its `allowed-tools` for the turn
(grants.py). A body over 256 kB is sent as its head, with where the rest is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_cli.context.prompts import load_prompt
from agent_cli.core.events import CommandResult
from agent_cli.core.tags import escape_tags
from agent_cli.core.types import CommandSpec
from agent_cli.extensions.custom_commands import MAX_BYTES, CustomCommand
from agent_cli.extensions.skills.catalog import Skill, SkillError
from agent_cli.extensions.skills.grants import SkillGrants
from agent_cli.extensions.skills.listing import LISTING_FRACTION, entry
from agent_cli.extensions.skills.tool import SessionSkills, header

COUNTED_BYTES = 1 << 20  # /skills counts bodies up to this; larger ones are estimated (chars / 4)


@dataclass(frozen=True)
class SkillCommand:
    """A skill as a prompt command (extensions/custom_commands.py's PromptCommand)."""

    skill: Skill
    grants: SkillGrants

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def origin(self) -> str:
        return self.skill.origin

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        return ()  # granted by `expand`, through the skill's own grants (the same as the tool's)

    @property
    def model(self) -> str:
        return self.skill.model

    def expand(self, arguments: str) -> str:
        """The prompt `/name arguments` sends. Raises SkillError when SKILL.md cannot be read now."""
        skill = self.skill
        size = skill.body_bytes()
        if size <= MAX_BYTES:
            body = CustomCommand(skill.name, skill.path, skill.origin, skill.read_body()).expand(arguments)
        else:
            head = _head(skill, MAX_BYTES)
            said = f"ARGUMENTS: {arguments.strip()}\n\n" if arguments.strip() else ""
            rest = (
                load_prompt("skill_rest")
                .strip()
                .format(shown=f"{len(head):,}", total=f"~{size:,}", path=skill.path)
            )
            body = f"{said}{head}\n\n{rest}"
        self.grants.started_by_person.add(skill.name)
        self.grants.grant(skill)
        return escape_tags(header(skill) + body)

    def spec(self, workspace: Path) -> CommandSpec:
        return CommandSpec(
            self.name, self.skill.argument_hint, f"{self.skill.description} (skill, {self.skill.source})"
        )


def _head(skill: Skill, limit: int) -> str:
    parts: list[str] = []
    size = 0
    for chunk in skill.chunks(64 * 1024):
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return "".join(parts)[:limit]


def skills_report(skills: SessionSkills | None, count: Callable[[str], int]) -> CommandResult:
    """`/skills`: each skill, where it comes from, whether the model sees it, and its tokens."""
    notes = [f"Workspace skills {skills.catalog.untrusted}."] if skills and skills.catalog.untrusted else []
    if skills is None or not skills.catalog.skills:
        problems = list(skills.catalog.warnings) if skills is not None else []
        text = (
            "No skills. A skill is a folder with a SKILL.md in ~/.config/agent/skills/ or "
            "~/.claude/skills/, or (in a trusted workspace) .agent/skills/, .claude/skills/ or "
            ".agents/skills/."
        )
        return CommandResult("skills", "\n\n".join([text, *notes, *_problems(problems)]), {"skills": []})
    listing = skills.listing
    rows = [
        "| skill | source | for the model | description tokens | body tokens |",
        "|---|---|---|---:|---:|",
    ]
    data = []
    for skill in skills.catalog.skills:
        if not skill.model_invocable:
            seen = f"no (/{skill.name} only)"
        elif skill.name in listing.listed:
            seen = "listed"
        else:
            seen = "via skill_search"
        described = count(entry(skill))
        body, exact = _body_tokens(skill, count)
        shown_body = f"{body:,}" if exact else (f"≈{body:,}" if body >= 0 else "unreadable")
        rows.append(f"| {skill.name} | {skill.source} | {seen} | {described:,} | {shown_body} |")
        data.append(
            {
                "name": skill.name,
                "source": skill.source,
                "path": str(skill.path),
                "for_model": seen,
                "description_tokens": described,
                "body_tokens": body,
            }
        )
    share = f"{LISTING_FRACTION:.0%} of the budget"
    head = (
        f"Skills: {len(skills.catalog.skills)}. The system prompt lists {len(listing.listed)} of them in "
        f"{listing.tokens:,} tokens (cap {listing.cap:,}, {share})"
        + (f"; {len(listing.left_out)} more are found with skill_search." if listing.left_out else ".")
        + " A body enters the context only when the skill is used."
    )
    text = "\n\n".join([head, "\n".join(rows), *notes, *_problems(list(skills.catalog.warnings))])
    return CommandResult(
        "skills", text, {"skills": data, "listing_tokens": listing.tokens, "cap": listing.cap}
    )


def _body_tokens(skill: Skill, count: Callable[[str], int]) -> tuple[int, bool]:
    """(tokens, exact): counted when small enough, else estimated; (-1, False) when unreadable."""
    try:
        size = skill.body_bytes()
        if size <= COUNTED_BYTES:
            return count(skill.read_body()), True
    except SkillError:
        return -1, False
    return size // 4, False


def _problems(warnings: list[str]) -> list[str]:
    return (
        ["Problems found when the skills were loaded:\n" + "\n".join(f"- {w}" for w in warnings)]
        if warnings
        else []
    )
