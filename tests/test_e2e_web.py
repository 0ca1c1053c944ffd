"""web_fetch end to end: the real CLI (`agent -p`) against the local API server, fetching from a local
web server (tests/web_pages.py) — no test touches the internet."""

from __future__ import annotations

import json

import pytest

from tests.e2e import agent, tool_results, user_config
from tests.e2e import denials as denials_of
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic
from tests.web_pages import PageServer, big_page

MIDDLE = "The quartz heron migrates only at midnight."
ALLOW_LOCAL = ("--allowed-tools", "WebFetch(domain:127.0.0.1)")
JSON = ("--output-format", "json")


@pytest.fixture
def web():
    server = PageServer().start()
    yield server
    server.stop()


def _results(body: dict) -> list[str]:
    out = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def test_a_2mb_page_reaches_the_model_as_a_preview_and_recall_finds_its_middle(workspace, web):
    web.page("/big", big_page(2_000_000, MIDDLE))
    with FakeAnthropic(separate_summaries=True) as server:
        server.push(tool_call("web_fetch", {"url": web.url("/big")}, id="toolu_web1"))
        server.push(tool_call("recall", {"ref": "toolu_web1", "pattern": "quartz heron"}, id="toolu_rec1"))
        server.push(text("Herons migrate at midnight."))
        out = agent(workspace, server, "-p", "when do herons migrate?", *ALLOW_LOCAL, *JSON)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["result"] == "Herons migrate at midnight."
        fetched = _results(server.requests[1])[-1]
        assert fetched.startswith('<persisted-output ref="toolu_web1"'), fetched[:300]
        assert len(fetched) < 5_000 and MIDDLE not in fetched
        assert 'Use the recall tool with ref "toolu_web1"' in fetched and 'title "A big page"' in fetched
        recalled = _results(server.requests[2])[-1]
        assert MIDDLE in recalled and "1 matching line" in recalled
        assert web.hits["/big"] == 1


def test_a_second_fetch_uses_the_cache_and_a_prompt_is_answered_by_the_summarizer(workspace, web):
    web.page("/doc", f"<html><body><h1>Birds</h1><p>{MIDDLE}</p></body></html>")
    with FakeAnthropic() as server:
        server.route("<web-page", text("At midnight (heading Birds)."))
        server.push(tool_call("web_fetch", {"url": web.url("/doc")}, id="toolu_a"))
        server.push(tool_call("web_fetch", {"url": web.url("/doc"), "prompt": "When?"}, id="toolu_b"))
        server.push(text("done"))
        out = agent(workspace, server, "-p", "read it twice", *ALLOW_LOCAL, *JSON)
        assert out.returncode == 0, out.stderr
        first, second = _results(server.requests[-1])[-2:]
        assert MIDDLE in first and "cache" not in first
        assert "From this session's cache" in second and "At midnight (heading Birds)." in second
        assert 'kept under ref "toolu_b"' in second
        assert web.hits["/doc"] == 1  # the second fetch sent nothing over the network
        side = server.conversations("<web-page")
        assert len(side) == 1 and "tools" not in side[0] and MIDDLE in json.dumps(side[0])
        assert side[0]["model"] == "claude-haiku-5-5"  # the summarizer model, metered with the session


def test_without_a_rule_a_headless_fetch_is_denied_with_the_reason(workspace, web):
    web.page("/doc", "secret")
    with FakeAnthropic() as server:
        server.push(tool_call("web_fetch", {"url": "https://docs.python.org/3/"}, id="toolu_a"))
        server.push(tool_call("web_fetch", {"url": web.url("/doc")}, id="toolu_b"))
        server.push(text("could not read them"))
        out = agent(workspace, server, "-p", "read the docs", *JSON)
        assert out.returncode == 0, out.stderr
        denials = denials_of(json.loads(out.stdout))
        assert len(denials) == 2, denials
        assert "docs.python.org" in denials[0] and "WebFetch(domain:docs.python.org)" in denials[0]
        assert "127.0.0.1 is a loopback address" in denials[1]
        public, local = tool_results(server)[-2:]
        assert public.startswith("Permission denied: web_fetch https://docs.python.org/3/")
        assert "--allowed-tools 'WebFetch(domain:docs.python.org)'" in public
        assert "only with an explicit rule for that host, WebFetch(domain:127.0.0.1)" in local
        assert web.hits["/doc"] == 0
        last = server.requests[-1]["messages"][-1]["content"]
        assert all(b["is_error"] for b in last if b.get("type") == "tool_result")


def test_bad_answers_are_one_clear_line_each_and_the_session_goes_on(workspace, web):
    user_config(workspace, "[web]\nfetch_timeout = 1\n")
    web.stall("/slow")
    web.page("/err", "boom", "text/plain", status=500)
    web.redirect("/a", "/b")
    web.redirect("/b", "/a")
    web.page("/bin", b"\x89PNG\r\n\x1a\n....", "image/png")
    web.redirect("/away", "https://elsewhere.example/page")
    calls = ["/slow", "/err", "/a", "/bin", "/away"]
    with FakeAnthropic() as server:
        for i, path in enumerate(calls):
            server.push(tool_call("web_fetch", {"url": web.url(path)}, id=f"toolu_{i}"))
        server.push(text("all reported"))
        out = agent(workspace, server, "-p", "fetch them", *ALLOW_LOCAL, *JSON)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["result"] == "all reported"
        blocks = [
            b
            for body in server.requests[1:]
            for b in body["messages"][-1]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        by_id = {b["tool_use_id"]: b for b in blocks}
        said = {path: by_id[f"toolu_{i}"] for i, path in enumerate(calls)}
        expected = {
            "/slow": f"web_fetch: timed out after 1 s fetching {web.url('/slow')}",
            "/err": f"web_fetch: HTTP 500 Internal Server Error from {web.url('/err')}",
            "/a": f"web_fetch: redirect loop: {web.url('/a')} → {web.url('/b')} → {web.url('/a')}",
            "/bin": f"web_fetch: {web.url('/bin')} is binary content (image/png, 12 bytes): web_fetch reads text "
            "(HTML, Markdown, plain text, JSON, XML)",
        }
        for path, line in expected.items():
            block = said[path]
            assert block["is_error"] is True and _text(block) == line, (path, block)
        away = said["/away"]
        assert not away.get("is_error") and "to another host: https://elsewhere.example/page" in _text(away)
        assert 'call web_fetch with url "https://elsewhere.example/page")' in _text(away)
        assert "\n" not in _text(away)


def _text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
