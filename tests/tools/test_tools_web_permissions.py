"""Who may fetch what: `WebFetch(domain:…)` rules in Claude Code's syntax, decided by host, and the
loopback/private/link-local guard that only an explicit rule for that very host opens."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.tools.permissions import Permissions
from agent_cli.tools.rules import Rule, RuleError, parse_rules
from agent_cli.tools.web.search import WebSearchTool
from agent_cli.tools.web.tool import WebFetchTool

FETCH = WebFetchTool()
SEARCH = WebSearchTool("http://127.0.0.1:1/search")


def perms(mode: str = "ask", allow=(), ask=(), deny=(), ws: Path = Path("/ws")) -> Permissions:
    rules = []
    for effect, texts in (("allow", allow), ("ask", ask), ("deny", deny)):
        parsed, warnings = parse_rules(list(texts), effect, "--test")
        assert not warnings, warnings
        rules += parsed
    return Permissions(mode, ws, rules)


def fetch(p: Permissions, url: str):
    return p.decide(FETCH, {"url": url})


def test_the_rule_syntax_is_claude_codes():
    assert Rule.parse("WebFetch(domain:Docs.Python.org)").spec == "domain:docs.python.org"
    assert Rule.parse("web_fetch(domain:*.python.org)").tool == "web_fetch"
    assert Rule.parse("WebFetch").spec is None and Rule.parse("WebSearch").tool == "web_search"
    for bad in ("WebFetch(docs.python.org)", "WebFetch(domain:)", "WebFetch(domain:a/b)", "WebFetch(url:x)"):
        with pytest.raises(RuleError, match=r"write WebFetch\(domain:HOST\)"):
            Rule.parse(bad)


def test_without_a_rule_a_fetch_asks_and_always_saves_the_domain_rule():
    p = perms()
    decision = fetch(p, "https://docs.python.org/3/library/os.html")
    assert decision.action == "ask" and "docs.python.org" in decision.reason
    assert p.always_rules(FETCH, {"url": "https://docs.python.org/3/"}) == [
        "WebFetch(domain:docs.python.org)"
    ]
    assert p.describe_rule(FETCH, {"url": "https://docs.python.org/3/"}) == (
        "saves the rule WebFetch(domain:docs.python.org) for this session"
    )
    p.allow_always(FETCH, {"url": "https://docs.python.org/3/"})
    assert fetch(p, "https://docs.python.org/3/glossary.html").action == "allow"
    assert fetch(p, "https://evil.example/?q=secret").action == "ask"


@pytest.mark.parametrize("mode", ["ask", "auto-edit", "plan"])
def test_every_mode_but_yolo_asks_for_an_unknown_host(mode):
    assert fetch(perms(mode), "https://example.com/").action == "ask"
    assert fetch(perms("yolo"), "https://example.com/").action == "allow"


def test_domain_rules_allow_ask_and_deny_by_host():
    p = perms(allow=["WebFetch(domain:docs.python.org)", "WebFetch(domain:*.rust-lang.org)"])
    assert fetch(p, "https://DOCS.python.org./x").action == "allow"
    assert fetch(p, "https://doc.rust-lang.org/std/").action == "allow"
    assert fetch(p, "https://rust-lang.org/").action == "ask"  # *. is the subdomains
    assert fetch(p, "https://docs.python.org.evil.example/").action == "ask"
    assert fetch(perms(allow=["WebFetch"]), "https://anything.example/").action == "allow"
    denied = fetch(
        perms("yolo", allow=["WebFetch"], deny=["WebFetch(domain:pastebin.com)"]), "https://pastebin.com/x"
    )
    assert denied.action == "deny" and "WebFetch(domain:pastebin.com) (--test)" in denied.reason
    assert (
        fetch(
            perms(allow=["WebFetch"], ask=["WebFetch(domain:gist.github.com)"]), "https://gist.github.com/"
        ).action
        == "ask"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://localhost/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/",
        "http://[::1]/",
        "http://2130706433/",
        "http://0x7f.1/",
    ],
)
def test_loopback_private_and_link_local_hosts_need_an_explicit_rule(url):
    for p in (perms(), perms("yolo"), perms(allow=["WebFetch"]), perms(allow=["WebFetch(domain:*)"])):
        decision = fetch(p, url)
        assert decision.action == "deny" and "only with an explicit rule for that host" in decision.reason


def test_an_explicit_rule_opens_that_host_and_only_that_one():
    p = perms(allow=["WebFetch(domain:127.0.0.1)"])
    assert fetch(p, "http://127.0.0.1:9000/page").action == "allow"
    assert fetch(p, "http://localhost:9000/page").action == "deny"
    assert fetch(p, "http://169.254.169.254/").action == "deny"
    both = perms(allow=["WebFetch(domain:127.0.0.1)"], deny=["WebFetch"])
    assert fetch(both, "http://127.0.0.1/").action == "deny"  # deny still wins


def test_an_unparsable_url_is_left_to_the_tool_to_refuse():
    assert fetch(perms(), "file:///etc/passwd").action == "allow"  # the tool says why, fetching nothing
    assert fetch(perms(deny=["WebFetch"]), "file:///etc/passwd").action == "deny"


def test_web_search_asks_unless_a_rule_or_yolo_allows_it():
    assert perms().decide(SEARCH, {"query": "x"}).action == "ask"
    assert perms(allow=["WebSearch"]).decide(SEARCH, {"query": "x"}).action == "allow"
    assert perms("yolo", deny=["WebSearch"]).decide(SEARCH, {"query": "x"}).action == "deny"
    assert perms().always_rules(SEARCH, {"query": "x"}) == ["WebSearch"]
