"""The optional OpenAI-compatible provider: request/response translation and the missing-extra error."""

from __future__ import annotations

import json
import sys

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.llm.base import Request, StreamText, StreamToolInput, StreamToolStart, StreamUsage
from agent_cli.llm.openai_compat import ChatTurn, OpenAICompatProvider, OpenAISettings, to_chat_params
from tests.fakeapi.replies import text


def test_request_becomes_chat_completions():
    request = Request(
        model="qwen3-coder",
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "list files"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "text", "text": "Listing."},
                    {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py"},
                    {"type": "text", "text": "<system-reminder>x</system-reminder>"},
                    {"type": "text", "text": "thanks"},
                ],
            },
        ],
        tools=[
            {"name": "ls", "description": "List", "input_schema": {"type": "object"}, "cache_control": {}}
        ],
        max_tokens=500,
    )
    params = to_chat_params(request)
    assert params["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "Listing.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "ls", "arguments": '{"path": "."}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py\nb.py"},
        {"role": "user", "content": "<system-reminder>x</system-reminder>\n\nthanks"},
    ]
    assert params["tools"] == [
        {
            "type": "function",
            "function": {"name": "ls", "description": "List", "parameters": {"type": "object"}},
        }
    ]
    assert params["stream"] is True and params["max_tokens"] == 500


def test_chunks_become_events_and_a_message():
    turn = ChatTurn(clock=lambda: 0.0)
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me "}}]},
        {"choices": [{"index": 0, "delta": {"content": "check."}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_9",
                                "function": {"name": "read_file", "arguments": '{"pa'},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.py"}'}}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 100},
            },
        },
    ]
    events = [e for chunk in chunks for e in turn.feed(chunk)]
    assert "".join(e.text for e in events if isinstance(e, StreamText)) == "Let me check."
    assert [(e.id, e.name) for e in events if isinstance(e, StreamToolStart)] == [("call_9", "read_file")]
    assert json.loads("".join(e.partial_json for e in events if isinstance(e, StreamToolInput))) == {
        "path": "a.py"
    }
    usage = [e for e in events if isinstance(e, StreamUsage)][-1].usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (20, 100, 30)
    message = turn.message()
    assert message.text == "Let me check." and turn.stop_reason == "tool_use"
    assert [(b.id, b.name, b.input) for b in message.tool_uses()] == [
        ("call_9", "read_file", {"path": "a.py"})
    ]


def test_a_missing_sdk_is_a_clear_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match=r"pip install openai"):
        OpenAICompatProvider(OpenAISettings(base_url="http://127.0.0.1:9/v1")).prepare()


def _cached_request() -> Request:
    ephemeral = {"type": "ephemeral"}
    return Request(
        model="claude-sonnet-5-5",
        system=[{"type": "text", "text": "Be brief.", "cache_control": ephemeral}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "a.py",
                        "cache_control": ephemeral,
                    },
                    {"type": "text", "text": "and now?", "cache_control": ephemeral},
                ],
            },
        ],
        tools=[{"name": "ls", "input_schema": {"type": "object"}, "cache_control": ephemeral}],
    )


def test_cache_control_is_kept_for_gateways_and_dropped_otherwise():
    kept = to_chat_params(_cached_request(), keep_cache=True)
    ephemeral = {"type": "ephemeral"}
    assert kept["messages"][0] == {
        "role": "system",
        "content": [{"type": "text", "text": "Be brief.", "cache_control": ephemeral}],
    }
    assert kept["tools"][0]["cache_control"] == ephemeral
    assert kept["messages"][3] == {
        "role": "tool",
        "tool_call_id": "t1",
        "content": "a.py",
        "cache_control": ephemeral,
    }
    assert kept["messages"][4]["content"] == [
        {"type": "text", "text": "and now?", "cache_control": ephemeral}
    ]
    plain = to_chat_params(_cached_request())
    assert "cache_control" not in json.dumps(plain)
    assert plain["messages"][0] == {"role": "system", "content": "Be brief."}


async def test_a_claude_model_behind_the_endpoint_gets_cache_control(fake_openai):
    fake_openai.push(text("one"), text("two"))
    settings = OpenAISettings(base_url=fake_openai.url)
    for model in ("claude-sonnet-5-5", "qwen3"):
        provider = OpenAICompatProvider(settings, env={})
        request = _cached_request()
        async for _ in provider.stream(Request(**{**request.__dict__, "model": model})):
            pass
    claude, qwen = fake_openai.requests
    assert "cache_control" in json.dumps(claude) and "cache_control" not in json.dumps(qwen)


def test_gateway_usage_splits_cache_reads_and_writes_out_of_prompt_tokens():
    turn = ChatTurn(clock=lambda: 0.0)
    usage = {
        "prompt_tokens": 1558,
        "completion_tokens": 8,
        "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 1508},
    }
    turn.feed({"choices": [], "usage": usage})
    u = turn.usage
    assert (u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) == (50, 1508, 0)


def test_calls_without_an_index_or_reusing_one_with_a_new_id_stay_separate():
    turn = ChatTurn(clock=lambda: 0.0)
    whole = [  # Ollama-style: each call whole, no index
        {"id": "a", "function": {"name": "ls", "arguments": "{}"}},
        {"id": "b", "function": {"name": "read_file", "arguments": '{"path": "x"}'}},
    ]
    turn.feed({"choices": [{"delta": {"tool_calls": whole}}]})
    same_index = [  # one index, two ids (some gateways)
        {"index": 0, "id": "c", "function": {"name": "ls", "arguments": '{"path": "d"}'}},
        {"index": 0, "id": "d", "function": {"name": "ls", "arguments": '{"path": "e"}'}},
    ]
    turn.feed({"choices": [{"delta": {"tool_calls": same_index}, "finish_reason": "tool_calls"}]})
    calls = [(b.id, b.name, b.input) for b in turn.message().tool_uses()]
    assert calls == [
        ("a", "ls", {}),
        ("b", "read_file", {"path": "x"}),
        ("c", "ls", {"path": "d"}),
        ("d", "ls", {"path": "e"}),
    ]
