"""The `fake_anthropic` and `fake_openai` pytest fixtures: a running fake server on a free port,
stopped afterwards; `Sleeps`, a provider's `sleep` that records the retry waits instead of sleeping.

def test_something(fake_anthropic):
    fake_anthropic.push(text("hi"))
    provider = AnthropicProvider(api_key="sk-ant-test", base_url=fake_anthropic.url)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeapi.openai_server import FakeOpenAI
from tests.fakeapi.server import FakeAnthropic


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


class Sleeps:
    """An injected `sleep` that records the waits instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
