"""The skill listing the system prompt carries: names and descriptions only, in a fixed order (by
name, no clock, no counts that change), so the cached prefix stays the same from request to request.

It is capped at `LISTING_FRACTION` of the context budget. Skills are taken by name while they fit
(one that does not fit is passed over for the next), and the listing ends by saying how many were
left out; the `skill_search` tool finds those (tool.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.prompts import load_prompt
from agent_cli.core.tags import escape_tags
from agent_cli.extensions.skills.catalog import DESCRIPTION_CHARS, Skill, SkillCatalog

LISTING_FRACTION = 0.02
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class SkillListing:
    text: str = ""  # the system block ("" when no skill is for the model)
    listed: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()  # for the model, but past the cap: skill_search finds them
    tokens: int = 0
    cap: int = 0


def listing_cap(budget: int) -> int:
    return int(budget * LISTING_FRACTION)


def entry(skill: Skill) -> str:
    """One skill's line: its name and its description (cut at 1,024 characters, escaped)."""
    description = skill.description
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"- {skill.name}: {escape_tags(description)}"


def build_listing(catalog: SkillCatalog, cap: int, count: Callable[[str], int]) -> SkillListing:
    """The listing of the model's skills within `cap` tokens (`count` measures a text)."""
    skills = catalog.for_model()
    if not skills:
        return SkillListing(cap=cap)
    header = load_prompt("skills").rstrip() + "\n"
    entries = [entry(s) + "\n" for s in skills]
    costs = [count(e) for e in entries]
    used = count(header)
    if used + sum(costs) <= cap:
        return SkillListing(
            header + "".join(entries), tuple(s.name for s in skills), (), used + sum(costs), cap
        )
    used += count(_footer(len(skills)))  # room for the line that names skill_search
    chosen: list[int] = []
    for i, cost in enumerate(costs):
        if used + cost <= cap:
            chosen.append(i)
            used += cost
    left = [s.name for i, s in enumerate(skills) if i not in chosen]
    body = "".join(entries[i] for i in chosen) or "(none fit here)\n"
    text = header + body + _footer(len(left))
    return SkillListing(text, tuple(skills[i].name for i in chosen), tuple(left), count(text), cap)


def _footer(left: int) -> str:
    return f"\n{left} more skill(s) are not listed here, to save context: find them with skill_search.\n"


def search(skills: Sequence[Skill], query: str) -> list[Skill]:
    """The skills matching `query`'s words, best first (name words count three times)."""
    words = set(_WORD.findall(query.lower()))
    scored = []
    for skill in skills:
        score = 3 * len(words & set(_WORD.findall(skill.name))) + len(
            words & set(_WORD.findall(skill.description.lower()))
        )
        if score or query.strip().lower() in skill.name:
            scored.append((-score, skill.name, skill))
    return [skill for *_, skill in sorted(scored, key=lambda item: (item[0], item[1]))]
