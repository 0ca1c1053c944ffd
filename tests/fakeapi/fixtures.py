"""The `fake_anthropic` pytest fixture: a running FakeAnthropic on a free port, stopped afterwards.

def test_something(fake_anthropic):
    fake_anthropic.push(text("hi"))
    provider = AnthropicProvider(api_key="sk-ant-test", base_url=fake_anthropic.url)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakeapi.server import FakeAnthropic


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    try:
        yield server
    finally:
        server.stop()
