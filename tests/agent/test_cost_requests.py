"""`/cost` counts every request sent: the conversation's, the summaries and notes beside it, and the
sub-agents'; the gauge's first number is the provider's count, which billing then goes on from."""

from __future__ import annotations

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.side_requests import measure_prefix
from agent_cli.api.compose import compose_session
from agent_cli.core.events import CommandResult
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config

from .helpers import make_session, run


async def _cost(session) -> CommandResult:
    [result] = [e for e in await run(session, "/cost") if isinstance(e, CommandResult)]
    return result


async def test_cost_counts_every_request_sent_and_says_which_kind(workspace):
    answers = [{"text": f"Answer {i}. " + "Some detail. " * 300} for i in range(3)]
    answers.insert(
        1, {"tool_calls": [{"name": "task", "input": {"description": "look", "prompt": "Look around."}}]}
    )
    session = make_session(workspace, answers, summaries=["## Goal\nAnswer."] * 3, interactive=True)
    provider = session.provider
    for prompt in ("one", "two", "three"):
        await run(session, prompt)
    await run(session, "/compact")
    await run(session, "/summary")
    sent = len(provider.requests) + len(provider.completions)
    assert len(provider.completions) >= 2  # a summary and a note at least
    result = await _cost(session)
    data = result.data
    assert data["requests"] == sent
    assert data["side_requests"] == len(provider.completions)
    assert data["subagent_requests"] >= 1
    assert data["conversation_requests"] + data["subagent_requests"] == len(provider.requests)
    assert f"over {sent} requests (" in result.text and "for summaries and notes" in result.text
    assert "by sub-agents" in result.text
    session.close()
    # a resumed session counts them all again from its log
    again = make_session(workspace, [], resume=session.session_id)
    assert (await _cost(again)).data["requests"] == sent


async def test_one_request_is_one_request(workspace):
    session = make_session(workspace, [{"text": "Hi."}])
    await run(session, "hello")
    assert "over 1 request\n" in (await _cost(session)).text


async def test_the_gauge_before_the_first_prompt_is_on_the_scale_billing_goes_on_with(workspace):
    config = Config(model="claude-sonnet-5-5", provider="scripted", permission_mode="yolo")
    provider = ScriptedProvider(Script(responses=[{"text": "Hello."}]))
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    await measure_prefix(session.provider, session.engine)
    before = session.status().used
    await run(session, "hi")
    after = session.status().used
    # the first prompt only adds (a prompt, the <env> block, a short answer): the gauge never drops
    assert before <= after < before + 400, (before, after)
