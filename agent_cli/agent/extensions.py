"""What a session gets from the person's and the workspace's setup: hooks and custom commands.

Settings files are read once here (agent/settings.py); everything wrong in them, in hook
definitions or in command files is one warning line each, and the session starts regardless.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.agent.allowed_tools import AllowedTools, parse_rules
from agent_cli.agent.api import COMMANDS
from agent_cli.agent.config import Config
from agent_cli.agent.custom_commands import CustomCommand, CustomCommands, load_custom_commands
from agent_cli.agent.hooks.api import Emit, HookRunner, NoHooks
from agent_cli.agent.hooks.load import build_hooks, hook_groups
from agent_cli.agent.hooks.runner import HookIdentity, Record
from agent_cli.agent.hooks.spec import HookGroup
from agent_cli.agent.settings import claude_user_dir, load_settings
from agent_cli.agent.trust import user_config_dir
from agent_cli.core.events import Event, Notice, PermissionRequest

BUILTIN_NAMES = tuple(c.name for c in COMMANDS) + ("exit",)


@dataclass(frozen=True)
class SessionExtensions:
    workspace: Path
    groups: tuple[HookGroup, ...]
    commands: CustomCommands
    warnings: tuple[str, ...]

    def hooks(self, identity: Callable[[], HookIdentity], record: Record) -> HookRunner:
        return build_hooks(list(self.groups), self.workspace, identity, record)


def load_extensions(config: Config, workspace: Path, trusted: bool) -> SessionExtensions:
    settings = load_settings(workspace, trusted=trusted)
    groups, problems = hook_groups(config, workspace, settings, trusted=trusted)
    user_dirs = [claude_user_dir() / "commands", user_config_dir() / "commands"]
    commands = load_custom_commands(workspace, user_dirs, BUILTIN_NAMES)
    warnings = [f.error for f in settings if f.error] + problems + list(commands.warnings)
    return SessionExtensions(workspace, tuple(groups), commands, tuple(warnings))


def command_hooks(
    command: CustomCommand, hooks: HookRunner, workspace: Path, trusted: bool, emit: Emit
) -> HookRunner:
    """The hook runner for a custom command's turn: its `allowed-tools` on top, when they count."""
    if not command.allowed_tools:
        return hooks
    if command.origin == "workspace" and not trusted:
        emit(
            Notice(
                f"/{command.name}: allowed-tools ignored (this workspace is not trusted); tools ask as usual",
                "warning",
            )
        )
        return hooks
    rules, bad = parse_rules(command.allowed_tools)
    if bad:
        emit(Notice(f"/{command.name}: allowed-tools not understood: {', '.join(bad)}", "warning"))
    return AllowedTools(hooks, rules, workspace) if rules else hooks


def notifying(hooks: HookRunner, emit: Emit, tasks: set[asyncio.Task]) -> Emit:
    """`emit`, plus Notification hooks (in the background, kept in `tasks`) when a permission
    question opens: the agent is waiting for the person."""
    if isinstance(hooks, NoHooks):
        return emit

    def notify(event: Event) -> None:
        emit(event)
        if isinstance(event, PermissionRequest):
            name = event.call.name if event.call else "a tool"
            task = asyncio.ensure_future(
                hooks.notification(f"agent needs your permission to use {name}", emit)
            )
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    return notify


def run_detached(work: Coroutine[Any, Any, None]) -> None:
    """Run `work` to the end on an event loop of its own (from sync code, even inside a running loop)."""
    thread = threading.Thread(target=asyncio.run, args=(work,), name="session-end-hooks", daemon=True)
    thread.start()
    thread.join()
