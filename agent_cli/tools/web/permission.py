"""Who may fetch what: `WebFetch(domain:HOST)` rules, in Claude Code's syntax.

`WebFetch(domain:docs.python.org)` covers that host, `WebFetch(domain:*.python.org)` its subdomains,
`WebFetch` (or `domain:*`) every host; `WebSearch` every search. Deny beats ask beats allow, from
any source (flags, config, settings files, "always allow"). Without a rule a fetch asks (headless:
denied, with the rule that would allow it), in every mode but yolo.

A loopback, private or link-local host (`localhost`, 127.0.0.1, 10.x, 169.254.169.254 …) is reached
only with an **explicit** allow rule naming that very host: not `WebFetch`, not a wildcard, not yolo.
A repository that tells the model to fetch the cloud metadata service or a service on the person's
machine gets a denial. Names are judged here by what they say; the addresses they resolve to are
checked again when the fetch connects (address.py), with the same explicit rule as the only way in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_cli.tools.rules import Rule, SourcedRule, canonical_tool
from agent_cli.tools.web.address import host_of, literal_kind

WEB_TOOLS = frozenset({"web_fetch", "web_search"})
RULE_NAMES = {"web_fetch": "WebFetch", "web_search": "WebSearch"}


def is_web_tool(name: str) -> bool:
    return canonical_tool(name) in WEB_TOOLS


@dataclass(frozen=True)
class WebVerdict:
    action: str  # allow | ask | deny
    reason: str = ""
    rule: str = ""  # the rule that decided, when one did


def domain_matches(rule: Rule, host: str) -> bool:
    """Whether a web_fetch rule covers `host` (a bare rule covers every host)."""
    if rule.spec is None:
        return True
    pattern = rule.spec.removeprefix("domain:")
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def explicit_rule(rules: Iterable[SourcedRule], host: str) -> SourcedRule | None:
    """An allow rule naming exactly this host (`WebFetch(domain:127.0.0.1)`): the only way to a
    loopback, private or link-local address."""
    for sourced in rules:
        rule = sourced.rule
        if sourced.effect == "allow" and rule.tool == "web_fetch" and rule.spec == f"domain:{host}":
            return sourced
    return None


def web_verdict(rules: list[SourcedRule], mode: str, tool_name: str, input: dict[str, Any]) -> WebVerdict:
    """Allow, ask or deny a web_fetch or web_search call, and why."""
    tool = canonical_tool(tool_name)
    label = RULE_NAMES.get(tool, tool_name)
    host = host_of(input.get("url")) if tool == "web_fetch" else None

    def first(effect: str) -> SourcedRule | None:
        for sourced in rules:
            rule = sourced.rule
            if sourced.effect == effect and rule.tool == tool:
                if rule.spec is None or (host is not None and domain_matches(rule, host)):
                    return sourced
        return None

    if hit := first("deny"):
        return WebVerdict("deny", f"denied by the rule {hit.rule.text} ({hit.source})", hit.rule.text)
    if tool == "web_fetch" and host is None:
        return WebVerdict("allow", "the URL does not parse; web_fetch says why without fetching")
    if hit := first("ask"):
        return WebVerdict("ask", f"the rule {hit.rule.text} ({hit.source}) asks", hit.rule.text)
    if host is not None and (kind := literal_kind(host)):
        if (explicit := explicit_rule(rules, host)) is None:
            return WebVerdict(
                "deny",
                f"{host} is a {kind} address: web_fetch reaches loopback, private and link-local "
                f"addresses only with an explicit rule for that host, WebFetch(domain:{host})",
            )
        return WebVerdict(
            "allow", f"allowed by the rule {explicit.rule.text} ({explicit.source})", explicit.rule.text
        )
    if hit := first("allow"):
        return WebVerdict("allow", f"allowed by the rule {hit.rule.text} ({hit.source})", hit.rule.text)
    if mode == "yolo":
        return WebVerdict("allow", "yolo mode")
    if host is not None:
        return WebVerdict("ask", f"no rule allows fetching from {host} ({label}(domain:{host}) would)")
    return WebVerdict("ask", f"{tool_name} asks in {mode} mode ({label} would allow it)")


def web_always_rules(tool_name: str, input: dict[str, Any]) -> list[str]:
    """What "always allow" saves: `WebFetch(domain:HOST)` (for a private host too: it is then the
    explicit rule), `WebSearch`."""
    tool = canonical_tool(tool_name)
    if tool == "web_search":
        return ["WebSearch"]
    host = host_of(input.get("url"))
    return [f"WebFetch(domain:{host})"] if host else []
