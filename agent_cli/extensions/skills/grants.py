"""A skill's `allowed-tools` while it is in use, and which skills the person started this turn.

When the model loads a skill (the `skill` tool) or the person types `/name`, the skill's
`allowed-tools` become allow rules until the turn ends, as in Claude Code. They are allow rules like
any other: deny and ask rules, plan mode, writes outside the workspace and the sandbox still win,
and a protected path still asks unless the rule names it. They count only for a skill the person put in their own folders, or one of a
workspace they trusted (an untrusted workspace's skills are not loaded at all; this is checked here
again all the same).

Loading a skill of the person's own (outside the workspace) also lets the model read its folder
without asking, for the rest of the session: `Read(//<folder>/**)`, matched against real paths, so a
symlink in it to elsewhere still asks. Reads inside the workspace need no rule.
"""

from __future__ import annotations

from agent_cli.extensions.skills.catalog import Skill
from agent_cli.tools.fs import is_inside
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.rules import RuleError, SourcedRule, parse_rules


class SkillGrants:
    def __init__(self, permissions: Permissions | None, trusted: bool) -> None:
        self.permissions = permissions
        self.trusted = trusted
        self._granted: list[SourcedRule] = []
        self.started_by_person: set[str] = set()  # skills the person started with /name this turn

    def grant(self, skill: Skill) -> tuple[list[str], list[str]]:
        """Allow `skill`'s allowed-tools for the rest of the turn: (the rules, one line per problem)."""
        if self.permissions is None:
            return [], []
        self._folder(skill, self.permissions)
        if not skill.allowed_tools:
            return [], []
        if skill.origin == "workspace" and not self.trusted:
            return [], [f"skill {skill.name}: allowed-tools ignored (this workspace is not trusted)"]
        rules, problems = parse_rules(skill.allowed_tools, "allow", f"skill {skill.name} allowed-tools")
        held = self.permissions.rules
        fresh = [
            r for r in rules if not any(r.rule.text == h.rule.text and h.effect == "allow" for h in held)
        ]
        held.extend(fresh)
        self._granted.extend(fresh)
        return [r.rule.text for r in rules], problems

    def _folder(self, skill: Skill, permissions: Permissions) -> None:
        if skill.origin != "user":
            return
        try:
            folder = skill.folder.resolve()
            if is_inside(permissions.workspace, folder):
                return
            permissions.add_rule(f"Read(/{folder}/**)", "allow", f"skill {skill.name} folder")
        except (OSError, RuleError):
            return  # an odd path: reading there asks, as it would anyway

    def end_turn(self) -> None:
        """The turn is over: the rules granted in it go, and so do the marks of /name."""
        self.started_by_person.clear()
        if self._granted and self.permissions is not None:
            granted, self._granted = self._granted, []
            self.permissions.rules = [r for r in self.permissions.rules if all(r is not g for g in granted)]
