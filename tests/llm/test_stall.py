"""A stream that stops sending is abandoned after the idle timeout and retried with the usual back-off
(llm/retry.py), with both real SDKs against the fake servers' `Stall`; one that stalls after content
is cut off with a message that says why. The stalled server stream is never released: the timeout
is what ends it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_cli.core.errors import ProviderError
from agent_cli.llm.anthropic import AnthropicProvider
from agent_cli.llm.base import Request, StreamDone, StreamRetry, StreamText, StreamUsage
from agent_cli.llm.openai_compat import OpenAICompatProvider, OpenAISettings
from agent_cli.llm.retry import STALL_TIMEOUT, Backoff, stream_with_retries
from agent_cli.settings.config import load_config
from tests.fakeapi import Stall, reply, text
from tests.fakeapi.fixtures import Sleeps

IDLE = 0.5  # seconds: the stall is endless, so this only decides how soon the test goes on
GUARD = 60  # seconds: without the idle timeout a stall would never end; fail instead of hanging


def request() -> Request:
    messages = [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    return Request(model="claude-sonnet-5-5", system=[{"type": "text", "text": "A test."}], messages=messages)


async def events_of(provider: Any) -> list[Any]:
    async with asyncio.timeout(GUARD):
        return [event async for event in provider.stream(request())]


def anthropic(server: Any, sleeps: Sleeps) -> AnthropicProvider:
    return AnthropicProvider(
        api_key="sk-ant-test", base_url=server.url, sleep=sleeps, rng=random.Random(7), idle_timeout=IDLE
    )


def openai(server: Any, sleeps: Sleeps) -> OpenAICompatProvider:
    backoff = Backoff(sleep=sleeps, rng=random.Random(7))
    settings = OpenAISettings(base_url=server.url)
    return OpenAICompatProvider(settings, backoff=backoff, env={"OPENAI_API_KEY": "k"}, idle_timeout=IDLE)


@pytest.mark.parametrize("which", ["anthropic", "openai"])
async def test_a_stalled_stream_is_retried_with_backoff_and_the_retry_says_why(
    which, fake_anthropic, fake_openai
):
    server, make = (fake_anthropic, anthropic) if which == "anthropic" else (fake_openai, openai)
    server.push(Stall(reply=text("never sent")), Stall(reply=text("never sent")), text("Recovered."))
    sleeps = Sleeps()
    events = await events_of(make(server, sleeps))
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert [r.attempt for r in retries] == [1, 2]
    assert all(r.reason == f"no data from the API for {IDLE:g} s" for r in retries)
    assert len(sleeps.delays) == 2 and sleeps.delays[1] > sleeps.delays[0] * 0.9  # the usual back-off
    assert isinstance(events[-1], StreamDone) and events[-1].message.text == "Recovered."
    assert len(server.requests) == 3


async def test_a_stream_that_stalls_after_content_is_retried_from_the_start(fake_anthropic):
    fake_anthropic.push(Stall(after_blocks=1, reply=reply("first block", "second block")), text("Whole."))
    events = await events_of(anthropic(fake_anthropic, Sleeps()))
    (retry,) = [e for e in events if isinstance(e, StreamRetry)]
    assert retry.discards and retry.reason == f"no data from the API for {IDLE:g} s"
    assert isinstance(events[-1], StreamDone) and events[-1].message.text == "Whole."
    assert len(fake_anthropic.requests) == 2


class _Silent:
    """An attempt whose stream sends a usage event, then nothing (until cancelled)."""

    content_started = False

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def events(self) -> AsyncIterator[Any]:
        try:
            yield StreamUsage(None)  # type: ignore[arg-type]
            await asyncio.Event().wait()
        finally:
            self.log.append("closed")


async def test_a_stalled_attempt_is_closed_and_gives_up_after_max_retries():
    closed: list[str] = []
    backoff = Backoff(max_retries=2, sleep=Sleeps())
    with pytest.raises(ProviderError) as failed:
        async with asyncio.timeout(GUARD):
            async for _ in stream_with_retries(lambda: _Silent(closed), backoff, idle_timeout=0.05):
                pass
    assert str(failed.value) == "no data from the API for 0.05 s (gave up after 3 attempts)"
    assert closed == ["closed"] * 3  # every abandoned stream was closed


async def test_the_consumers_own_time_between_events_does_not_count():
    class Slow:
        content_started = False

        async def events(self) -> AsyncIterator[Any]:
            for piece in ("a", "b", "c"):
                yield StreamText(piece)

    seen = []
    async for event in stream_with_retries(Slow, Backoff(sleep=Sleeps()), idle_timeout=0.05):
        seen.append(event)
        await asyncio.sleep(0.1)  # the consumer is slow; the stream is not silent
    assert [e.text for e in seen] == ["a", "b", "c"]


def test_the_idle_timeout_is_the_persons_setting_or_the_environments(tmp_path):
    assert load_config(tmp_path, env={}).stream_idle_timeout == STALL_TIMEOUT == 90.0
    assert load_config(tmp_path, env={"AGENT_STREAM_IDLE_TIMEOUT": "2.5"}).stream_idle_timeout == 2.5
    user = tmp_path / "cfg" / "agent" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("stream_idle_timeout = 0\n")
    assert load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")}).stream_idle_timeout == 0
