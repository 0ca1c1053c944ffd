"""`/permissions`: the mode, the active rules with their source, and session rules added or revoked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from agent_cli.core.events import CommandResult
from agent_cli.tools.rules import RuleError

if TYPE_CHECKING:
    from agent_cli.tools.permissions import Permissions


class EventSink(Protocol):
    """Where a rule change is recorded (the session's event log)."""

    def append(self, kind: str, **fields: Any) -> Any: ...


class RuleHost(Protocol):
    """What /permissions reads and changes (agent/runner.py's AgentSession has it)."""

    permission_mode: str
    permissions: Permissions
    rule_warnings: list[str]
    log: EventSink


MODE_HELP = (
    "Modes: ask (read-only tools run; edits and bash ask), auto-edit (edits run; bash asks), plan "
    "(read-only tools only, for planning), yolo (everything runs; writes outside the workspace still ask)."
)
USAGE = "`/permissions MODE`, `/permissions allow|ask|deny RULE`, `/permissions revoke RULE`"


def permissions_text(session: RuleHost) -> str:
    rules = session.permissions.rules
    lines = [f"Permission mode: {session.permission_mode}. {MODE_HELP}", ""]
    if rules:
        lines += ["| rule | effect | from |", "|---|---|---|"]
        lines += [f"| `{r.rule.text}` | {r.effect} | {r.source} |" for r in rules]
    else:
        lines.append(
            "No rules. Rules come from --allowed-tools/--disallowed-tools, [permissions] in config, "
        )
        lines[-1] += 'permissions in .claude/settings.json, and "always allow".'
    if session.rule_warnings:
        lines += ["", "Ignored:"] + [f"- {w}" for w in session.rule_warnings]
    lines += ["", f"Change them with {USAGE}. Deny beats ask beats allow."]
    return "\n".join(lines)


def permissions_data(session: RuleHost) -> dict[str, Any]:
    return {
        "mode": session.permission_mode,
        "rules": [
            {"rule": r.rule.text, "effect": r.effect, "source": r.source} for r in session.permissions.rules
        ],
    }


def change_rule(session: RuleHost, verb: str, rule: str) -> CommandResult:
    if not rule:
        return CommandResult(
            "permissions", f"Which rule? {USAGE}, e.g. `/permissions allow Bash(npm test:*)`.", is_error=True
        )
    try:
        if verb == "revoke":
            gone = session.permissions.revoke(rule)
            if not gone:
                return CommandResult(
                    "permissions", f"No rule {rule} is active; /permissions lists them.", is_error=True
                )
            listed = ", ".join(f"{r.effect} {r.rule.text} ({r.source})" for r in gone)
            text = f"Revoked for this session: {listed}."
        else:
            added = session.permissions.add_rule(rule, verb, "session")  # type: ignore[arg-type]
            text = f"Added for this session: {verb} {added.rule.text}."
    except RuleError as exc:
        return CommandResult("permissions", f"Not a rule: {exc}", is_error=True)
    session.log.append("permission_rule", action=verb, rule=rule)
    return CommandResult("permissions", text + "\n\n" + permissions_text(session), permissions_data(session))
