"""Fixtures for the provider tests: the fake Messages API server."""

from tests.fakeapi.fixtures import fake_anthropic, fake_openai  # noqa: F401  (pytest fixtures)
