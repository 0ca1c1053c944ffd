"""The OpenAI-compatible provider with the REAL `openai` client against the fake chat-completions
server over loopback: streaming, parallel tool calls, usage, retries, error classification."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from agent_cli.core.errors import ContextOverflowError, ProviderError
from agent_cli.llm.base import (
    Request,
    StreamDone,
    StreamRetry,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
)
from agent_cli.llm.openai_compat import OpenAICompatProvider, OpenAISettings
from agent_cli.llm.retry import Backoff
from tests.fakeapi import (
    Disconnect,
    StreamError,
    Text,
    Thinking,
    ToolUse,
    rate_limited,
    reply,
    server_error,
    text,
)
from tests.fakeapi.fixtures import Sleeps
from tests.fakeapi.openai_server import FakeOpenAI, context_length_exceeded
from tests.fakeapi.replies import Fault


def make(
    server: FakeOpenAI, sleeps: Sleeps | None = None, key: str | None = "sk-test"
) -> OpenAICompatProvider:
    backoff = Backoff(sleep=sleeps or Sleeps(), rng=random.Random(7))
    env = {"OPENAI_API_KEY": key} if key else {}
    return OpenAICompatProvider(OpenAISettings(base_url=server.url), backoff=backoff, env=env)


TOOLS = [
    {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}},
    {"name": "ls", "description": "List", "input_schema": {"type": "object"}},
]


def request(*messages: dict[str, Any]) -> Request:
    msgs = list(messages) or [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    return Request(
        model="fake-model", system=[{"type": "text", "text": "Be a test."}], messages=msgs, tools=TOOLS
    )


async def run(provider: OpenAICompatProvider, req: Request | None = None) -> list[Any]:
    return [event async for event in provider.stream(req or request())]


def done_of(events: list[Any]) -> StreamDone:
    assert sum(isinstance(e, StreamDone) for e in events) == 1 and isinstance(events[-1], StreamDone)
    return events[-1]


async def test_text_streams_in_deltas_with_usage_and_stop_reason(fake_openai):
    fake_openai.push(reply("Hello there, how are you?", chunk_chars=5))
    events = await run(make(fake_openai))
    texts = [e.text for e in events if isinstance(e, StreamText)]
    assert len(texts) > 3 and "".join(texts) == "Hello there, how are you?"
    done = done_of(events)
    assert done.stop_reason == "end_turn" and done.message.text == "Hello there, how are you?"
    assert done.id.startswith("chatcmpl_fake_") and done.model == fake_openai.requests[-1]["model"]
    assert done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    sent = fake_openai.requests[-1]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"][0] == {"role": "system", "content": "Be a test."}


async def test_parallel_tool_calls_interleaved_become_separate_tool_uses(fake_openai):
    fake_openai.push(
        reply(
            Thinking("both at once"),
            Text("Reading."),
            ToolUse("read_file", {"path": "src/app.py"}),
            ToolUse("ls", {"path": "tests"}),
            chunk_chars=4,
        )
    )
    events = await run(make(fake_openai))
    starts = [(e.id, e.name) for e in events if isinstance(e, StreamToolStart)]
    assert [name for _, name in starts] == ["read_file", "ls"]
    inputs = [e for e in events if isinstance(e, StreamToolInput)]
    order = [e.id for e in inputs]
    assert order.index(starts[1][0]) < len(order) - order[::-1].index(starts[0][0]) - 1  # interleaved
    for call_id, _ in starts:
        assert json.loads("".join(e.partial_json for e in inputs if e.id == call_id))
    done = done_of(events)
    assert done.stop_reason == "tool_use"
    assert [(b.name, b.input) for b in done.message.tool_uses()] == [
        ("read_file", {"path": "src/app.py"}),
        ("ls", {"path": "tests"}),
    ]
    assert "".join(e.text for e in events if isinstance(e, StreamThinking)) == "both at once"


async def test_the_tool_results_go_back_as_tool_messages_the_server_accepts(fake_openai):
    fake_openai.push(reply(ToolUse("read_file", {"path": "a"}), ToolUse("ls", {})), text("done"))
    provider = make(fake_openai)
    first = done_of(await run(provider))
    ids = [b.id for b in first.message.tool_uses()]
    follow = request(
        {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        {"role": "assistant", "content": [b.to_api() for b in first.message.blocks if b.type != "thinking"]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": ids[0], "content": "a's text"},
                {"type": "tool_result", "tool_use_id": ids[1], "content": "x\ny", "is_error": True},
            ],
        },
    )
    second = done_of(await run(provider, follow))
    assert second.message.text == "done" and fake_openai.statuses == [200, 200]
    tools = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools] == [
        (ids[0], "a's text"),
        (ids[1], "ERROR: x\ny"),
    ]


async def test_cached_tokens_become_cache_reads(fake_openai):
    fake_openai.push(text("one"), text("two"))
    provider = make(fake_openai)
    long = [{"role": "user", "content": [{"type": "text", "text": "context " * 400}]}]
    await run(provider, request(*long))
    again = long + [
        {"role": "assistant", "content": [{"type": "text", "text": "one"}]},
        {"role": "user", "content": [{"type": "text", "text": "more"}]},
    ]
    usage = done_of(await run(provider, request(*again))).usage
    assert usage.cache_read_input_tokens > 700 and usage.input_tokens > 0
    assert usage.cache_creation_input_tokens == 0


async def test_429_honours_retry_after_and_500_backs_off_then_succeeds(fake_openai):
    fake_openai.push(rate_limited(retry_after=3), server_error(500), text("made it"))
    sleeps = Sleeps()
    events = await run(make(fake_openai, sleeps))
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert (
        [r.attempt for r in retries] == [1, 2] and "429" in retries[0].reason and "500" in retries[1].reason
    )
    assert sleeps.delays[0] == 3 and 0 < sleeps.delays[1] <= 2
    assert done_of(events).message.text == "made it" and fake_openai.statuses == [429, 500, 200]


async def test_retries_give_up_after_the_limit(fake_openai):
    fake_openai.push(*[server_error(503)] * 6)
    with pytest.raises(ProviderError) as caught:
        await run(make(fake_openai))
    assert caught.value.kind == "server" and "gave up after 5 attempts" in str(caught.value)
    assert fake_openai.statuses == [503] * 5


async def test_a_bad_key_is_an_auth_error_naming_the_variable_without_retries():
    with FakeOpenAI(require_key="sk-right") as server:
        with pytest.raises(ProviderError) as caught:
            await run(make(server, key="sk-wrong"))
        assert server.statuses == [401]
    assert caught.value.kind == "auth" and "OPENAI_API_KEY" in caught.value.hint


async def test_no_key_for_openai_itself_fails_before_any_request():
    provider = OpenAICompatProvider(OpenAISettings(), env={})
    with pytest.raises(ProviderError) as caught:
        await run(provider)
    assert caught.value.kind == "auth" and "OPENAI_API_KEY is not set" in str(caught.value)


@pytest.mark.parametrize("style", ["openai", "vllm", "llamacpp"])
async def test_context_length_errors_are_context_overflow_with_numbers(style):
    with FakeOpenAI(max_prompt_tokens=50, overflow_style=style) as server:
        with pytest.raises(ContextOverflowError) as caught:
            await run(make(server))
        assert server.statuses == [400]  # not retried
    assert caught.value.maximum == 50 and caught.value.tokens > 50


async def test_a_dropped_stream_is_retried_until_a_tool_call_started(fake_openai):
    fake_openai.push(Disconnect(0, text("lost")), text("second try"))
    events = await run(make(fake_openai))
    assert done_of(events).message.text == "second try"
    fake_openai.push(Disconnect(1, reply("partial text", ToolUse("ls", {}))), text("whole"))
    events = await run(make(fake_openai))
    assert [e.discards for e in events if isinstance(e, StreamRetry)] == [True]
    assert done_of(events).message.text == "whole"
    fake_openai.push(Disconnect(2, reply("partial text", ToolUse("ls", {}))))
    with pytest.raises(ProviderError) as caught:
        await run(make(fake_openai))
    assert caught.value.kind == "network" and "cut off" in str(caught.value)


async def test_an_error_inside_the_stream_is_classified(fake_openai):
    fake_openai.push(StreamError("server_error", "upstream exploded", 0, text("x")), text("fine"))
    events = await run(make(fake_openai))
    assert any(isinstance(e, StreamRetry) for e in events) and done_of(events).message.text == "fine"


async def test_an_unknown_model_is_a_bad_request_with_a_hint(fake_openai):
    fake_openai.push(
        Fault(404, "invalid_request_error", "The model `nope` does not exist", code="model_not_found")
    )
    with pytest.raises(ProviderError) as caught:
        await run(make(fake_openai))
    assert caught.value.kind == "bad_request" and "--model" in caught.value.hint


async def test_an_invalid_history_is_rejected_by_the_fake_like_a_server(fake_openai):
    orphan = request(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_x", "content": "?"}]}
    )
    with pytest.raises(ProviderError) as caught:
        await run(make(fake_openai), orphan)
    assert caught.value.kind == "bad_request" and "tool" in str(caught.value)


def test_context_length_fault_helper_words_each_style():
    assert "resulted in 9 tokens" in context_length_exceeded(9, 5).message
    assert context_length_exceeded(9, 5, "llamacpp").extra == {"n_prompt_tokens": 9, "n_ctx": 5}


def test_importing_the_provider_does_not_load_the_sdk():
    code = (
        "import sys, agent_cli.llm.openai_compat, agent_cli.settings.config; print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
