"""The optional OpenAI-compatible provider: request/response translation and the missing-extra error."""

from __future__ import annotations

import json
import sys

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.llm.base import Request, StreamText, StreamToolInput, StreamToolStart, StreamUsage
from agent_cli.llm.openai_compat import ChatTurn, OpenAICompatProvider, OpenAISettings, to_chat_params


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
