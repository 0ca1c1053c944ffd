"""What a session gets from the person's and the workspace's setup: hooks, custom commands, skills,
the built-in prompt commands (/init), the sandbox.

Settings files come parsed once per session (settings/files.py); everything wrong in them, in hook
definitions or in command files is one warning line each, and the session starts regardless.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.core.events import Notice
from agent_cli.extensions.custom_commands import (
    CustomCommands,
    PromptCommand,
    load_custom_commands,
)
from agent_cli.extensions.hooks.api import Emit, HookRunner
from agent_cli.extensions.hooks.load import build_hooks, hook_groups
from agent_cli.extensions.hooks.runner import HookIdentity, Record
from agent_cli.extensions.hooks.spec import HookGroup
from agent_cli.extensions.init_command import InitCommand
from agent_cli.extensions.skills.catalog import SkillCatalog, load_skills, skill_dirs
from agent_cli.extensions.skills.command import SkillCommand
from agent_cli.extensions.skills.grants import SkillGrants
from agent_cli.settings.config import Config
from agent_cli.settings.files import SettingsFile, claude_user_dir, load_settings, trusted_files
from agent_cli.settings.trust import user_config_dir
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.rules import SourcedRule, parse_rules
from agent_cli.tools.sandbox.child_env import ChildEnv


@dataclass(frozen=True)
class SessionExtensions:
    workspace: Path
    groups: tuple[HookGroup, ...]
    commands: CustomCommands  # Markdown commands, skills the person may start, /init
    warnings: tuple[str, ...]
    child_env: ChildEnv = ChildEnv()  # what hook commands see of the environment
    skills: SkillCatalog = SkillCatalog()
    skill_grants: SkillGrants = field(default_factory=lambda: SkillGrants(None, False))

    def hooks(self, identity: Callable[[], HookIdentity], record: Record) -> HookRunner:
        env = self.child_env.build()
        return build_hooks(list(self.groups), self.workspace, identity, record, env)


def load_extensions(
    config: Config,
    workspace: Path,
    trusted: bool,
    settings: Sequence[SettingsFile] | None = None,
    builtin_commands: Sequence[str] = (),
    permissions: Permissions | None = None,
) -> SessionExtensions:
    """`settings`: the session's parsed settings files, all of them (read here when not given);
    hooks come from those trust allows. `builtin_commands`: slash command names a custom command
    may not take. `permissions`: where a skill's allowed-tools are granted while it is in use."""
    settings = (
        trusted_files(settings, trusted)
        if settings is not None
        else load_settings(workspace, trusted=trusted)
    )
    groups, problems = hook_groups(config, workspace, settings, trusted=trusted)
    user_dirs = [claude_user_dir() / "commands", user_config_dir() / "commands"]
    commands = load_custom_commands(workspace, user_dirs, builtin_commands)
    skill_roots = [claude_user_dir() / "skills", user_config_dir() / "skills"]
    skills = load_skills(skill_dirs(workspace, skill_roots), workspace, trusted)
    grants = SkillGrants(permissions, trusted)
    table, clashes = prompt_commands(workspace, commands, skills, grants, builtin_commands)
    # a broken settings file, the person's own or the workspace's, is reported by permission_sources
    # (it reads them all, trusted or not), so each broken file is one line
    warnings = problems + list(commands.warnings) + list(skills.warnings) + clashes
    return SessionExtensions(
        workspace,
        tuple(groups),
        CustomCommands(table, commands.warnings),
        tuple(warnings),
        config.child_env(),
        skills,
        grants,
    )


def prompt_commands(
    workspace: Path,
    commands: CustomCommands,
    skills: SkillCatalog,
    grants: SkillGrants,
    builtin: Sequence[str],
) -> tuple[dict[str, PromptCommand], list[str]]:
    """Every `/name` that becomes a prompt: the Markdown commands, the skills the person may start
    (a skill wins over a command of its name, as in Claude Code, but a workspace's never over one of
    yours; a built-in beats both), and /init.
    The lines saying which name went where."""
    table: dict[str, PromptCommand] = dict(commands.commands)
    reserved = {name.lower() for name in builtin}
    clashes: list[str] = []
    for skill in skills.skills:
        if not skill.user_invocable:
            continue
        if skill.name in reserved:
            still = "the model can still load it" if skill.model_invocable else "it cannot be used"
            clashes.append(f"skill {skill.name!r}: /{skill.name} is a built-in command, which wins; {still}")
            continue
        command = table.get(skill.name)
        if command is not None and command.origin == "user" and skill.origin == "workspace":
            clashes.append(
                f"/{skill.name} is one of yours ({command.path}), which wins over the workspace's skill "
                f"of that name ({skill.path}); the model can still load the skill"
            )
            continue
        if command is not None:
            clashes.append(f"/{skill.name}: the skill ({skill.path}) wins over the command of that name")
        table[skill.name] = SkillCommand(skill, grants)
    table["init"] = InitCommand(workspace)
    return table, clashes


def command_rules(command: PromptCommand, trusted: bool, emit: Emit) -> list[SourcedRule]:
    """A custom command's `allowed-tools` as allow rules for its turn (the permission check applies
    them like any rule: deny rules, writes outside the workspace and sandbox escapes still win)."""
    if not command.allowed_tools:
        return []
    if command.origin == "workspace" and not trusted:
        emit(
            Notice(
                f"/{command.name}: allowed-tools ignored (this workspace is not trusted); tools ask as usual",
                "warning",
            )
        )
        return []
    rules, problems = parse_rules(command.allowed_tools, "allow", f"/{command.name} allowed-tools")
    for problem in problems:
        emit(Notice(problem, "warning"))
    return rules
