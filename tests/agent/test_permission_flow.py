"""Permissions in the session: the question's diff and command, "always allow", /permissions, plan mode."""

from __future__ import annotations

from agent_cli.core.events import CommandResult, Notice, PermissionDenied, PermissionRequest, ToolStarted

from .helpers import make_session, run, with_provider

EDIT = {"name": "edit_file", "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}}


def _texts(request) -> str:
    return "\n".join(
        block.get("text", "") if isinstance(block, dict) else ""
        for message in request.messages
        for block in (message["content"] if isinstance(message["content"], list) else [])
    )


async def test_the_question_carries_the_diff_and_the_command(workspace):
    session = make_session(
        workspace,
        [
            {"tool_calls": [EDIT, {"name": "bash", "input": {"command": "pytest -q tests/x.py"}}]},
            {"text": "ok"},
        ],
        mode="ask",
        interactive=True,
    )
    asked: list[PermissionRequest] = []

    async def answer(event):
        if isinstance(event, PermissionRequest):
            asked.append(event)
            event.future.set_result("deny")

    await run(session, "go", answer)
    edit, bash = asked
    assert edit.detail_kind == "diff"
    assert "-    return a - b\n+    return a + b" in edit.detail and "b/app.py" in edit.detail
    assert edit.rule == "saves the rule Edit(./app.py) for this session"
    assert (bash.detail_kind, bash.detail, bash.cwd) == ("command", "pytest -q tests/x.py", str(workspace))
    assert bash.rule == "saves the rule Bash(pytest:*) for this session"


async def test_always_allow_saves_the_narrow_rule_and_says_so(workspace):
    calls = [
        {"tool_calls": [{"name": "bash", "input": {"command": "echo one"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo two | echo three"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo four; touch x"}}]},
        {"text": "ok"},
    ]
    session = make_session(workspace, calls, mode="ask", interactive=True)
    answers = iter(["allow_always", "deny"])
    asked = []

    async def answer(event):
        if isinstance(event, PermissionRequest):
            asked.append(event.target)
            event.future.set_result(next(answers))

    events = await run(session, "go", answer)
    assert asked == ["echo one", "echo four; touch x"]  # `echo two | echo three` did not ask
    assert any(isinstance(e, Notice) and "Bash(echo:*)" in e.text for e in events)
    assert [e.call.input["command"] for e in events if isinstance(e, ToolStarted)] == [
        "echo one",
        "echo two | echo three",
    ]


async def test_permissions_command_lists_adds_and_revokes(workspace):
    session = make_session(workspace, [{"text": "ok"}], mode="ask")
    events = await run(session, "/permissions allow Bash(npm test:*)")
    result = next(e for e in events if isinstance(e, CommandResult))
    assert not result.is_error and "| `Bash(npm test:*)` | allow | session |" in result.text
    events = await run(session, "/permissions deny Read(~/.ssh/**)")
    listing = next(e for e in events if isinstance(e, CommandResult)).data["rules"]
    assert listing == [
        {"rule": "Bash(npm test:*)", "effect": "allow", "source": "session"},
        {"rule": "Read(~/.ssh/**)", "effect": "deny", "source": "session"},
    ]
    events = await run(session, "/permissions revoke Bash(npm test:*)")
    assert "Revoked for this session: allow Bash(npm test:*) (session)" in events[0].text
    for bad in ("/permissions allow Bash(npm", "/permissions revoke Bash(nothing)", "/permissions allow"):
        result = next(e for e in await run(session, bad) if isinstance(e, CommandResult))
        assert result.is_error, bad
    result = next(e for e in await run(session, "/permissions plan") if isinstance(e, CommandResult))
    assert result.data["mode"] == "plan" and session.permissions.mode == "plan"
    result = next(e for e in await run(session, "/permissions ask") if isinstance(e, CommandResult))
    assert result.data["mode"] == "ask"


async def test_plan_mode_tells_the_model_refuses_edits_and_approval_lets_it_proceed(workspace):
    session = make_session(
        workspace, [{"tool_calls": [EDIT]}, {"text": "Plan: fix the sign."}], mode="auto-edit"
    )
    session.set_permission_mode("plan")
    events = await run(session, "fix add")
    denied = [e for e in events if isinstance(e, PermissionDenied)]
    assert len(denied) == 1 and "plan mode" in denied[0].reason
    assert "a - b" in (workspace / "app.py").read_text()
    first = session.provider.requests[0]
    assert "<system-reminder>" in _texts(first) and "Plan mode is on" in _texts(first)
    refusal = session.provider.requests[1].messages[-1]["content"][0]
    assert refusal["is_error"] and "plan mode" in str(refusal["content"])
    assert str(refusal["content"]).rstrip().endswith("before any change is made.")  # one period, not two

    session.set_permission_mode(session.mode_before_plan)  # the person approved the plan
    assert session.permission_mode == "auto-edit"
    provider = with_provider(session, [{"tool_calls": [{**EDIT, "id": "toolu_after"}]}, {"text": "Done."}])
    await run(session, "go ahead")
    assert "a + b" in (workspace / "app.py").read_text()
    sent = _texts(provider.requests[0])
    assert "the person approved the plan" in sent and "permission mode: auto-edit" in sent
    assert sent.count("Plan mode is on") == 1  # the old reminder stays where it was; no new one


async def test_a_fetch_asks_with_its_url_and_host_and_always_saves_the_domain_rule(workspace, monkeypatch):
    from agent_cli.tools.web import fetch as fetch_module
    from tests.web_pages import PageServer

    async def local(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]  # docs.test is served here, on loopback: only an explicit rule reaches it

    monkeypatch.setattr(fetch_module, "resolve", local)
    web = PageServer().start()
    try:
        web.page("/a", "<p>page a</p>")
        web.page("/b", "<p>page b</p>")
        port = web.base.rsplit(":", 1)[1]
        urls = [f"http://docs.test:{port}/a", f"http://docs.test:{port}/b"]
        calls = [
            {"tool_calls": [{"name": "web_fetch", "input": {"url": url, "prompt": "x"}}]} for url in urls
        ]
        session = make_session(workspace, [*calls, {"text": "ok"}], mode="ask", interactive=True)
        asked: list[PermissionRequest] = []

        async def answer(event):
            if isinstance(event, PermissionRequest):
                asked.append(event)
                event.future.set_result("allow_always")

        events = await run(session, "read the docs", answer)
        assert len(asked) == 1  # the second page of that host did not ask
        question = asked[0]
        assert (
            question.target == urls[0]
            and question.rule == "saves the rule WebFetch(domain:docs.test) for this session"
        )
        assert question.detail == f"URL: {urls[0]}\nhost: docs.test\nprompt: x"
        assert "no rule allows fetching from docs.test" in question.reason
        assert any(isinstance(e, Notice) and "WebFetch(domain:docs.test)" in e.text for e in events)
        assert (
            web.hits["/a"] == 1 and web.hits["/b"] == 1
        )  # the saved rule is the explicit one loopback needs
    finally:
        web.stop()
