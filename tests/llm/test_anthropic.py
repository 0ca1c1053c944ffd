"""The Anthropic provider with the REAL anthropic client against the fake Messages API over loopback."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest

from agent_cli.core.errors import ContextOverflowError, ProviderError
from agent_cli.core.types import Trust
from agent_cli.llm.anthropic import AnthropicProvider
from agent_cli.llm.base import (
    Provider,
    Request,
    StreamDone,
    StreamRetry,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
    StreamUsage,
)
from tests.fakeapi import (
    Disconnect,
    FakeAnthropic,
    Stall,
    StreamError,
    Thinking,
    ToolUse,
    overloaded,
    prompt_too_long,
    rate_limited,
    reply,
    server_error,
    text,
)
from tests.fakeapi.fixtures import Sleeps
from tests.fakeapi.server import api_key_from


def make(server: FakeAnthropic, sleeps: Sleeps | None = None, **kwargs: Any) -> AnthropicProvider:
    return AnthropicProvider(
        api_key="sk-ant-test", base_url=server.url, sleep=sleeps or Sleeps(), rng=random.Random(7), **kwargs
    )


def request(*messages: dict[str, Any], **kwargs: Any) -> Request:
    msgs = list(messages) or [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    return Request(
        model="claude-sonnet-5-5",
        system=[{"type": "text", "text": "You are a test."}],
        messages=msgs,
        **kwargs,
    )


async def run(provider: AnthropicProvider, req: Request | None = None) -> list[Any]:
    return [event async for event in provider.stream(req or request())]


def done_of(events: list[Any]) -> StreamDone:
    assert isinstance(events[-1], StreamDone)
    assert sum(isinstance(e, StreamDone) for e in events) == 1
    return events[-1]


# -- streaming --------------------------------------------------------------------------------------


async def test_streams_text_in_deltas(fake_anthropic):
    fake_anthropic.push(reply("The quick brown fox jumps over the lazy dog.", chunk_chars=6))
    provider = make(fake_anthropic)
    assert isinstance(provider, Provider)
    events = await run(provider)
    deltas = [e.text for e in events if isinstance(e, StreamText)]
    assert len(deltas) > 3 and "".join(deltas) == "The quick brown fox jumps over the lazy dog."
    done = done_of(events)
    assert done.stop_reason == "end_turn"
    assert done.id.startswith("msg_fake_") and done.model == "claude-sonnet-5-5"  # message_start's
    assert (
        done.message.role == "assistant"
        and done.message.text == "The quick brown fox jumps over the lazy dog."
    )
    assert (
        done.message.blocks[0].meta.trust == Trust.ASSISTANT
        and done.message.blocks[0].meta.source == "assistant"
    )
    sent = fake_anthropic.requests[0]
    assert sent["stream"] is True and sent["model"] == "claude-sonnet-5-5"
    assert sent["system"] == [{"type": "text", "text": "You are a test."}]
    assert api_key_from(fake_anthropic.headers[0]) == "sk-ant-test"
    assert fake_anthropic.headers[0]["x-stainless-retry-count"] == "0"


async def test_tool_use_input_streamed_in_several_json_deltas(fake_anthropic):
    args = {"path": "src/agent_cli/llm/anthropic.py", "offset": 10, "limit": 200}
    fake_anthropic.push(
        reply("Let me look.", ToolUse("read_file", args, id="toolu_A"), ToolUse("ls", {}, id="toolu_B"))
    )
    events = await run(make(fake_anthropic))
    starts = [e for e in events if isinstance(e, StreamToolStart)]
    assert [(s.id, s.name) for s in starts] == [("toolu_A", "read_file"), ("toolu_B", "ls")]
    parts = [e.partial_json for e in events if isinstance(e, StreamToolInput) and e.id == "toolu_A"]
    assert len(parts) > 2 and json.loads("".join(parts)) == args
    done = done_of(events)
    assert done.stop_reason == "tool_use"
    uses = done.message.tool_uses()
    assert [(u.id, u.name, u.input) for u in uses] == [("toolu_A", "read_file", args), ("toolu_B", "ls", {})]
    assert uses[0].meta.tool_name == "read_file" and uses[0].meta.trust == Trust.ASSISTANT
    assert [b.type for b in done.message.blocks] == ["text", "tool_use", "tool_use"]


async def test_thinking_is_streamed_and_kept_with_its_signature(fake_anthropic):
    fake_anthropic.push(reply(Thinking("Consider the edge cases first.", signature="sig-123"), "Done."))
    events = await run(make(fake_anthropic), request(thinking_budget=2048, max_tokens=8000))
    assert (
        "".join(e.text for e in events if isinstance(e, StreamThinking)) == "Consider the edge cases first."
    )
    thinking = done_of(events).message.blocks[0]
    assert (thinking.type, thinking.text, thinking.signature) == (
        "thinking",
        "Consider the edge cases first.",
        "sig-123",
    )
    assert fake_anthropic.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


async def test_usage_reports_cache_fields(fake_anthropic):
    system = [{"type": "text", "text": "S" * 2000, "cache_control": {"type": "ephemeral"}}]
    first = Request(
        model="m", system=system, messages=[{"role": "user", "content": [{"type": "text", "text": "one"}]}]
    )
    provider = make(fake_anthropic)
    events = await run(provider, first)
    start = next(e for e in events if isinstance(e, StreamUsage)).usage
    assert (
        start.cache_creation_input_tokens >= 500
        and start.cache_read_input_tokens == 0
        and start.input_tokens > 0
    )
    second = Request(
        model="m", system=system, messages=[{"role": "user", "content": [{"type": "text", "text": "two"}]}]
    )
    done = done_of(await run(provider, second))
    assert done.usage.cache_read_input_tokens == start.cache_creation_input_tokens
    assert done.usage.cache_creation_input_tokens == 0 and done.usage.output_tokens > 0
    assert done.usage.total_input > done.usage.cache_read_input_tokens


async def test_a_write_kept_an_hour_is_reported_and_priced_as_such(fake_anthropic):
    from agent_cli.core.types import ModelInfo

    hour = {"type": "ephemeral", "ttl": "1h"}
    system = [{"type": "text", "text": "S" * 2000, "cache_control": hour}]
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "T" * 4000, "cache_control": {"type": "ephemeral"}}],
        }
    ]
    events = await run(make(fake_anthropic), Request(model="m", system=system, messages=messages))
    done = done_of(events)
    written, kept = done.usage.cache_creation_input_tokens, done.usage.cache_creation_1h_input_tokens
    assert 0 < kept < written  # the system prompt an hour, the message five minutes
    info = ModelInfo("m", input_price=1.0, output_price=0.0)
    per = 1 / 1_000_000
    assert info.cost(done.usage) == pytest.approx(
        done.usage.input_tokens * per + (written - kept) * 1.25 * per + kept * 2.0 * per
    )


async def test_complete_and_count_tokens(fake_anthropic):
    fake_anthropic.push(text("summary"))
    provider = make(fake_anthropic)
    done = await provider.complete(request())
    assert done.message.text == "summary"
    count = await provider.count_tokens(request(max_tokens=123, temperature=0.2))
    assert isinstance(count, int) and count > 0
    assert "max_tokens" not in fake_anthropic.count_requests[0]
    assert provider.model_info("claude-sonnet-5-5").context_window == 1_000_000


# -- retries ----------------------------------------------------------------------------------------


async def test_rate_limit_honours_retry_after_then_succeeds(fake_anthropic):
    fake_anthropic.push(rate_limited(retry_after=3), text("after the wait"))
    sleeps = Sleeps()
    events = await run(make(fake_anthropic, sleeps))
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert [(r.attempt, r.delay) for r in retries] == [(1, 3.0)] and "rate limited" in retries[0].reason
    assert sleeps.delays == [3.0]
    assert done_of(events).message.text == "after the wait"
    assert fake_anthropic.statuses == [429, 200] and len(fake_anthropic.requests) == 2


async def test_retry_after_ms_is_preferred_and_long_waits_are_capped(fake_anthropic):
    fake_anthropic.push(overloaded(headers={"retry-after-ms": "250", "retry-after": "9"}))
    fake_anthropic.push(rate_limited(retry_after=3600), text("ok"))
    sleeps = Sleeps()
    await run(make(fake_anthropic, sleeps))
    assert sleeps.delays == [0.25, 60.0]


async def test_overloaded_529_then_success_with_backoff(fake_anthropic):
    fake_anthropic.push(overloaded(), text("fine now"))
    sleeps = Sleeps()
    events = await run(make(fake_anthropic, sleeps, backoff_base=2.0))
    retry = next(e for e in events if isinstance(e, StreamRetry))
    assert "overloaded" in retry.reason and 1.0 <= retry.delay <= 2.0
    assert sleeps.delays == [retry.delay]
    assert done_of(events).message.text == "fine now"


async def test_overloaded_sse_error_before_content_is_retried(fake_anthropic):
    fake_anthropic.push(StreamError("overloaded_error", "Overloaded", after_blocks=0), text("second try"))
    events = await run(make(fake_anthropic))
    assert sum(isinstance(e, StreamRetry) for e in events) == 1
    assert "".join(e.text for e in events if isinstance(e, StreamText)) == "second try"
    assert done_of(events).message.text == "second try"
    assert len(fake_anthropic.requests) == 2


async def test_an_overload_after_text_is_retried_and_the_partial_text_discarded(fake_anthropic):
    fake_anthropic.push(
        StreamError("overloaded_error", "Overloaded", after_blocks=1, reply=reply("PARTIAL ", "more")),
        text("the whole answer"),
    )
    events = await run(make(fake_anthropic))
    (retry,) = [e for e in events if isinstance(e, StreamRetry)]
    assert retry.discards and "overloaded" in retry.reason
    after = events[events.index(retry) :]
    assert "".join(e.text for e in after if isinstance(e, StreamText)) == "the whole answer"
    assert done_of(events).message.text == "the whole answer"  # nothing of the failed attempt
    assert len(fake_anthropic.requests) == 2


async def test_an_error_once_a_tool_call_started_is_raised_not_retried(fake_anthropic):
    fake_anthropic.push(
        StreamError(
            "overloaded_error", "Overloaded", after_blocks=2, reply=reply("partial", ToolUse("ls", {}))
        )
    )
    fake_anthropic.push(text("never fetched"))
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        async for event in make(fake_anthropic).stream(request()):
            seen.append(event)
    assert info.value.kind == "overloaded" and "cut off" in info.value.message
    assert any(isinstance(e, StreamToolStart) for e in seen)
    assert not any(isinstance(e, StreamRetry | StreamDone) for e in seen)
    assert len(fake_anthropic.requests) == 1 and fake_anthropic.pending == 1


async def test_mid_stream_errors_share_the_retry_limit(fake_anthropic):
    cut = StreamError("overloaded_error", "Overloaded", after_blocks=1, reply=reply("partial", "more"))
    fake_anthropic.push(cut, overloaded(), cut, text("never fetched"))
    with pytest.raises(ProviderError) as info:
        await run(make(fake_anthropic, max_retries=2))
    assert "cut off" in info.value.message and "attempt 3" in info.value.message
    assert len(fake_anthropic.requests) == 3 and fake_anthropic.pending == 1


async def test_retries_exhausted_raise_overloaded(fake_anthropic):
    fake_anthropic.push(*[overloaded() for _ in range(10)])
    sleeps = Sleeps()
    provider = make(fake_anthropic, sleeps, max_retries=3, backoff_base=4.0, backoff_max=10.0)
    with pytest.raises(ProviderError) as info:
        await run(provider)
    err = info.value
    assert err.kind == "overloaded" and err.status == 529 and "4 attempts" in err.message and err.hint
    assert len(fake_anthropic.requests) == 4 and len(sleeps.delays) == 3
    assert 2.0 <= sleeps.delays[0] <= 4.0 and all(d <= 10.0 for d in sleeps.delays)


async def test_server_error_then_success_and_dropped_connection_is_retried(fake_anthropic):
    fake_anthropic.push(server_error(503), Disconnect(after_blocks=0), text("recovered"))
    events = await run(make(fake_anthropic))
    reasons = [e.reason for e in events if isinstance(e, StreamRetry)]
    assert len(reasons) == 2 and "503" in reasons[0] and "network" in reasons[1]
    assert done_of(events).message.text == "recovered"


async def test_dropped_connection_after_content_is_retried_as_a_network_error(fake_anthropic):
    fake_anthropic.push(Disconnect(after_blocks=1, reply=reply("half", "rest")), text("whole"))
    events = await run(make(fake_anthropic))
    (retry,) = [e for e in events if isinstance(e, StreamRetry)]
    assert retry.discards and "network" in retry.reason and done_of(events).message.text == "whole"


async def test_unreachable_server_is_a_network_error():
    with FakeAnthropic() as server:
        url = server.url
    provider = AnthropicProvider(api_key="sk-ant-test", base_url=url, max_retries=1, sleep=Sleeps())
    events: list[Any] = []
    with pytest.raises(ProviderError) as info:
        async for event in provider.stream(request()):
            events.append(event)
    assert info.value.kind == "network" and info.value.hint
    assert sum(isinstance(e, StreamRetry) for e in events) == 1
    assert await provider.count_tokens(request()) is None


# -- errors that are not retried ---------------------------------------------------------------------


async def test_prompt_too_long_is_a_context_overflow(fake_anthropic):
    fake_anthropic.push(prompt_too_long(212_345, 200_000))
    with pytest.raises(ContextOverflowError) as info:
        await run(make(fake_anthropic))
    err = info.value
    assert (err.kind, err.tokens, err.maximum, err.status) == ("context_overflow", 212_345, 200_000, 400)
    assert len(fake_anthropic.requests) == 1


async def test_server_side_prompt_limit_is_a_context_overflow():
    with FakeAnthropic(max_prompt_tokens=40) as server:
        with pytest.raises(ContextOverflowError) as info:
            await run(
                make(server), request({"role": "user", "content": [{"type": "text", "text": "x" * 1000}]})
            )
    assert info.value.maximum == 40 and info.value.tokens > 40


async def test_bad_key_is_auth_with_hint_and_one_request():
    with FakeAnthropic(require_key="sk-ant-right") as server:
        with pytest.raises(ProviderError) as info:
            await run(make(server))
        assert len(server.requests) == 1
    err = info.value
    assert err.kind == "auth" and err.status == 401
    assert "ANTHROPIC_API_KEY" in err.hint and "agent --demo" in err.hint


async def test_invalid_request_is_bad_request_with_the_api_message(fake_anthropic):
    orphan = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}],
    }
    with pytest.raises(ProviderError) as info:
        await run(make(fake_anthropic), request(orphan))
    assert info.value.kind == "bad_request" and "toolu_gone" in info.value.message
    assert len(fake_anthropic.requests) == 1


async def test_missing_key_fails_without_a_request(fake_anthropic, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    provider = AnthropicProvider(base_url=fake_anthropic.url)
    with pytest.raises(ProviderError) as info:
        await run(provider)
    assert info.value.kind == "auth" and "export ANTHROPIC_API_KEY=" in info.value.hint
    assert await provider.count_tokens(request()) is None
    assert fake_anthropic.requests == [] and fake_anthropic.count_requests == []


async def test_environment_supplies_key_and_base_url(fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.push(text("via env"))
    provider = AnthropicProvider(sleep=Sleeps())
    provider.prepare()
    assert done_of(await run(provider)).message.text == "via env"
    assert api_key_from(fake_anthropic.headers[0]) == "sk-ant-from-env"


async def test_auth_token_stands_in_for_a_key(fake_anthropic, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "gateway-token")
    provider = AnthropicProvider(base_url=fake_anthropic.url, sleep=Sleeps())
    assert done_of(await run(provider)).message.text == "ok"
    assert fake_anthropic.headers[0]["authorization"] == "Bearer gateway-token"


async def test_closing_the_stream_mid_response_does_not_hang(fake_anthropic):
    fake_anthropic.push(Stall(after_blocks=1, reply=reply("first block", "second block")), text("next"))
    provider = make(fake_anthropic)
    stream = provider.stream(request())
    async for event in stream:
        if isinstance(event, StreamText):
            break
    await stream.aclose()
    fake_anthropic.release()
    assert done_of(await run(provider)).message.text == "next"


def test_module_import_does_not_load_the_sdk():
    code = "import sys, agent_cli.llm.anthropic; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
