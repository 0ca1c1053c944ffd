"""One hook command: run it (JSON on stdin, its own process group, a timeout) and read its answer.

Exit 0 goes on (stdout may be JSON with decisions, or plain text); exit 2 blocks, with stderr as the
reason; any other exit, a timeout, a crash or unreadable JSON is a warning and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.extensions.hooks.api import HookPermission
from agent_cli.extensions.hooks.spec import HookCommand

OUTPUT_CHARS = 10_000  # what a hook may add to the context, like Claude Code's cap
CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")  # plain stdout is added as context
BLOCK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop")
# what a hook's JSON may hold (Claude Code's fields that we honour); anything else is warned about
KEYS = (
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
)
SPECIFIC_KEYS = (
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "additionalContext",
    "updatedInput",
)


@dataclass(frozen=True)
class HookRun:
    command: HookCommand
    exit_code: int | None  # None: it did not finish (timed out or could not start)
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # why it did not finish


@dataclass(frozen=True)
class HookReply:
    """What one hook said, in our terms (see interpret)."""

    block: str | None = None  # exit 2 / decision "block" / permissionDecision "deny": the reason
    stop: str | None = None  # `continue: false`: the stopReason
    permission: HookPermission | None = None
    permission_reason: str = ""
    context: str = ""  # additionalContext, or plain stdout for UserPromptSubmit / SessionStart
    updated_input: Any = None  # PreToolUse's updatedInput, as given (the tool's schema judges it)
    message: str = ""  # systemMessage: shown to the person
    warning: str = ""  # it failed, timed out, or printed something unreadable
    suppress_output: bool = False


async def run_hook(command: HookCommand, payload: str, cwd: Path, env: Mapping[str, str]) -> HookRun:
    """Run `command` through the shell with `payload` on stdin; never raises but CancelledError (and
    then the process group is killed, as it is on timeout)."""
    try:
        process = await asyncio.create_subprocess_shell(
            command.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(command, None, error=f"could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(process.communicate(payload.encode()), command.timeout)
    except TimeoutError:
        await _kill(process)
        return HookRun(command, None, error=f"timed out after {command.timeout:g} s and was killed")
    except BaseException:
        await _kill(process)
        raise
    return HookRun(command, process.returncode, _text(out), _text(err))


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _cap(text: str) -> str:
    text = text.strip()
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS] + "\n[… hook output truncated]"


def label(command: HookCommand) -> str:
    """The command, shortened to its start and end (the script's name is usually last)."""
    text = " ".join(command.command.split())
    return text if len(text) <= 80 else f"{text[:30]}…{text[-45:]}"


def interpret(event: str, run: HookRun) -> HookReply:
    """Claude Code's contract: exit 0 (JSON on stdout honoured), 2 (block, stderr the reason), other."""
    name = f"{event} hook `{label(run.command)}`"
    if run.exit_code is None:
        return HookReply(warning=f"{name} {run.error}")
    if run.exit_code == 2:
        reason = _cap(run.stderr) or f"blocked by {name} (it gave no reason)"
        return HookReply(
            block=reason if event in BLOCK_EVENTS else None, message=_unless_blocking(event, reason)
        )
    if run.exit_code != 0:
        first = (run.stderr.strip() or run.stdout.strip()).splitlines()[:1]
        detail = f": {first[0][:200]}" if first else ""
        return HookReply(warning=f"{name} failed with exit code {run.exit_code}{detail}")
    stdout = run.stdout.strip()
    if stdout[:1] in ("{", "["):
        try:
            data = json.loads(stdout)
        except ValueError as exc:
            return HookReply(warning=f"{name} printed invalid JSON ({exc}); its output was ignored")
        if not isinstance(data, dict):
            return HookReply(warning=f"{name} printed JSON that is not an object; its output was ignored")
        return _from_json(event, data, name)
    return HookReply(context=_cap(stdout) if event in CONTEXT_EVENTS else "")


def _unless_blocking(event: str, reason: str) -> str:
    """Exit 2 on an event that cannot block (PreCompact, Notification, ...): the person sees stderr."""
    return "" if event in BLOCK_EVENTS else reason


def _from_json(event: str, data: dict[str, Any], name: str) -> HookReply:
    problems: list[str] = []
    stop = None
    if data.get("continue", True) is False:
        stop = _string(data.get("stopReason")) or f"stopped by {name}"
    reason = _cap(_string(data.get("reason")))
    decision = data.get("decision")
    block = None
    permission: HookPermission | None = None
    if decision not in (None, "block", "approve"):
        problems.append(f'decision {decision!r} (use "block" or "approve")')
    elif decision == "block" and event in BLOCK_EVENTS:
        block = reason or f"blocked by {name}"
    elif decision == "approve" and event == "PreToolUse":
        permission = "allow"
    specific = data.get("hookSpecificOutput") or {}
    if not isinstance(specific, dict):
        problems.append("hookSpecificOutput is not an object")
        specific = {}
    unknown = [repr(k) for k in data if k not in KEYS]
    unknown += [repr(f"hookSpecificOutput.{k}") for k in specific if k not in SPECIFIC_KEYS]
    if unknown:
        problems.append(f"unknown key{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
    updated_input = specific.get("updatedInput")
    if updated_input is not None and event != "PreToolUse":
        problems.append("updatedInput (only a PreToolUse hook can change a call's input)")
        updated_input = None
    permission_reason = _cap(_string(specific.get("permissionDecisionReason"))) or reason
    wanted = specific.get("permissionDecision")
    if wanted is not None and event == "PreToolUse":
        if wanted in ("allow", "deny", "ask"):
            permission = wanted
            if wanted == "deny":
                block = permission_reason or f"denied by {name}"
        else:
            problems.append(f"permissionDecision {wanted!r} (use allow, deny or ask)")
    context = _cap(_string(specific.get("additionalContext")))
    warning = f"{name} printed JSON with {'; '.join(problems)}; that part was ignored" if problems else ""
    return HookReply(
        block=block,
        stop=stop,
        permission=permission,
        permission_reason=permission_reason,
        context=context,
        updated_input=updated_input,
        message=_cap(_string(data.get("systemMessage"))),
        warning=warning,
        suppress_output=data.get("suppressOutput") is True,
    )


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
