"""`skill(name)`: a skill's body on demand; `skill_search(query)`: the skills the listing's cap left out.

The body goes through the same capture as bash's output (tools/capture.py): up to the inline limit
it enters the context whole (escaped: it is text from outside), past it the whole body is written to
the session store while it is read, and the context gets a `<persisted-output>` preview with the
ref (`recall` pages through it). A 50 MB SKILL.md never enters the context whole, nor memory.
The result starts with the skill's folder, so the model reads the files beside SKILL.md with the
ordinary tools (and their permission checks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_cli.context.prompts import load_prompt
from agent_cli.core.tags import escape_tags
from agent_cli.extensions.custom_commands import CustomCommand
from agent_cli.extensions.skills.catalog import CHUNK_BYTES, Skill, SkillCatalog, SkillError
from agent_cli.extensions.skills.grants import SkillGrants
from agent_cli.extensions.skills.listing import SkillListing, build_listing, search
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.capture import Captured, OutputCapture
from agent_cli.tools.registry import ToolRegistry

NAME = "skill"
SEARCH_NAME = "skill_search"
EXPAND_BYTES = 1 << 20  # bodies up to this are read whole, so `$ARGUMENTS` can be filled in
SHOWN_NAMES = 30
DEFAULT_RESULTS = 10
MAX_RESULTS = 50


@dataclass(frozen=True)
class SessionSkills:
    """What a session holds of its skills: the catalog, the listing its system prompt carries, and
    the turn's grants."""

    catalog: SkillCatalog
    listing: SkillListing
    grants: SkillGrants


def install_skill_tools(
    tools: ToolRegistry, catalog: SkillCatalog, grants: SkillGrants, cap: int, count: Callable[[str], int]
) -> tuple[ToolRegistry, SessionSkills]:
    """`tools` plus `skill` (when a skill is for the model) and `skill_search` (when the listing
    could not hold them all)."""
    listing = build_listing(catalog, cap, count)
    extra: list[Any] = []
    if listing.listed or listing.left_out:
        extra.append(SkillTool(catalog, grants))
    if listing.left_out:
        extra.append(SkillSearchTool(catalog, listing))
    registry = ToolRegistry([*tools, *extra]) if extra else tools
    return registry, SessionSkills(catalog, listing, grants)


def header(skill: Skill) -> str:
    return f"Base directory for this skill: {skill.folder}\n\n"


class SkillTool:
    name = NAME
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, exactly as listed under Skills."},
            "arguments": {
                "type": "string",
                "description": "Optional text for the skill (what it should work on).",
            },
        },
        "required": ["name"],
    }
    read_only = True  # it reads one SKILL.md the person (or a workspace they trusted) provided
    compactable = False  # instructions the rest of the task follows

    def __init__(self, catalog: SkillCatalog, grants: SkillGrants) -> None:
        self.catalog = catalog
        self.grants = grants
        self.description = load_prompt("skill").strip()

    def target(self, input: dict[str, Any]) -> str:
        """The name as it is looked up, so a rule `Skill(deploy)` also sees `Deploy` and `/deploy`."""
        return str(input.get("name", "")).strip().lstrip("/").lower()

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []  # only a catalogued SKILL.md is read, never a path the model names

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(input.get("name") or "").strip()
        skill = self.catalog.get(name)
        if skill is None:
            names = [s.name for s in self.catalog.for_model()]
            shown = ", ".join(names[:SHOWN_NAMES]) + (" …" if len(names) > SHOWN_NAMES else "")
            return ToolResult(f"no skill named {name!r}; skills: {shown or 'none'}", is_error=True)
        if not skill.model_invocable and skill.name not in self.grants.started_by_person:
            return ToolResult(
                f"the skill {skill.name!r} is started only by the person (/{skill.name}): "
                "it sets disable-model-invocation",
                is_error=True,
            )
        arguments = str(input.get("arguments") or "")
        try:
            captured = await asyncio.to_thread(_capture_body, skill, arguments, ctx)
        except SkillError as exc:
            return ToolResult(f"the skill {skill.name!r} cannot be loaded: {exc}", is_error=True)
        rules, problems = self.grants.grant(skill)
        notes = [f"allowed without asking until this turn ends: {', '.join(rules)}"] if rules else []
        text = captured.text if captured.ref else escape_tags(captured.text)
        output = "\n\n".join([text.rstrip(), *notes, *problems])
        meta: dict[str, Any] = {"skill": skill.name, "path": str(skill.path)}
        if captured.ref:
            meta.update(output_ref=captured.ref, output_chars=captured.total_chars)
        if captured.dropped_chars:
            meta["dropped_chars"] = captured.dropped_chars
        return ToolResult(output, meta=meta)


def _capture_body(skill: Skill, arguments: str, ctx: ToolContext) -> Captured:
    """The header and the body through the capture (in a thread: a large file is read in chunks)."""
    capture = OutputCapture(ctx)
    try:
        if skill.body_bytes() <= EXPAND_BYTES:
            body = CustomCommand(skill.name, skill.path, skill.origin, skill.read_body()).expand(arguments)
            capture.feed(header(skill) + body)
        else:
            said = f"ARGUMENTS: {arguments.strip()}\n\n" if arguments.strip() else ""
            capture.feed(header(skill) + said)
            for chunk in skill.chunks(CHUNK_BYTES):
                capture.feed(chunk)
    except BaseException:
        capture.abort()
        raise
    return capture.finish()


class SkillSearchTool:
    name = SEARCH_NAME
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords of the task."},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": f"How many matches to list (default {DEFAULT_RESULTS}).",
            },
        },
        "required": ["query"],
    }
    read_only = True
    compactable = True

    def __init__(self, catalog: SkillCatalog, listing: SkillListing) -> None:
        self.catalog = catalog
        self.listing = listing
        self.description = load_prompt("skill_search").strip()

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("query", ""))

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(input.get("query") or "").strip()
        if not query:
            return ToolResult("give a `query`: keywords of the task", is_error=True)
        limit = max(1, min(MAX_RESULTS, int(input.get("max_results") or DEFAULT_RESULTS)))
        found = search(self.catalog.for_model(), query)
        if not found:
            return ToolResult(f"no skill matches {query!r}")
        lines = [
            f"{len(found)} skill(s) match {query!r}"
            + (f"; the first {limit}:" if len(found) > limit else ":")
        ]
        for skill in found[:limit]:
            listed = " [listed]" if skill.name in self.listing.listed else ""
            lines.append(f"- {skill.name}{listed}: {escape_tags(skill.description)}")
        lines.append("Load one with the skill tool.")
        return ToolResult("\n".join(lines))
