"""`/model NAME` switches only to a model the session's provider can serve, and says what it assumes."""

from __future__ import annotations

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.core.events import CommandResult, Notice
from agent_cli.llm.anthropic import AnthropicProvider
from agent_cli.llm.openai_compat import OpenAICompatProvider, OpenAISettings
from agent_cli.settings.config import Config

from .helpers import make_session, run


def _session(workspace, provider, model: str):
    config = Config(model=model, provider=provider.name, permission_mode="yolo")
    return compose_session(config, provider, SessionSetup(workspace, None, True))


def _result(events) -> CommandResult:
    [result] = [e for e in events if isinstance(e, CommandResult)]
    return result


def _model_choices(session) -> tuple[str, ...]:
    return next(c.choices for c in session.commands() if c.name == "model")


async def test_anthropics_api_refuses_an_openai_model_and_stays_on_its_own(workspace):
    session = _session(workspace, AnthropicProvider(api_key="sk-test"), "claude-sonnet-5-5")
    result = _result(await run(session, "/model gpt-5"))
    assert result.is_error
    assert "Still on claude-sonnet-5-5" in result.text and "--provider openai --model gpt-5" in result.text
    assert session.model == "claude-sonnet-5-5" and session.info.name == "claude-sonnet-5-5"
    # completion offers only what this provider serves
    assert "claude-opus-5-5" in _model_choices(session) and "gpt-5" not in _model_choices(session)


async def test_openais_api_refuses_a_claude_model(workspace):
    provider = OpenAICompatProvider(OpenAISettings(), env={"OPENAI_API_KEY": "sk-test"})
    session = _session(workspace, provider, "gpt-5")
    result = _result(await run(session, "/model claude-opus-5-5"))
    assert result.is_error and "OpenAI's API" in result.text
    assert session.model == "gpt-5"


async def test_a_gateway_may_route_another_providers_model_and_the_switch_says_so(workspace):
    provider = OpenAICompatProvider(OpenAISettings(base_url="http://127.0.0.1:9/v1"), env={})
    session = _session(workspace, provider, "gpt-5")
    assert "claude-opus-5-5" in _model_choices(session)
    result = _result(await run(session, "/model claude-opus-5-5"))
    assert not result.is_error and session.model == "claude-opus-5-5"
    assert "model of anthropic" in result.text and "must route it" in result.text


async def test_an_unknown_model_is_switched_to_with_what_is_assumed_said_once(workspace):
    session = make_session(workspace, [{"text": "hi"}], interactive=True)
    result = _result(await run(session, "/model my-local-model"))
    assert not result.is_error and session.model == "my-local-model"
    assert "not in the model registry" in result.text and "next request" in result.text
    events = await run(session, "hello")
    assert not [e for e in events if isinstance(e, Notice) and "model registry" in e.text]
