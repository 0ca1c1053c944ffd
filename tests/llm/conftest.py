"""Fixtures for the provider tests: the fake Messages API server."""

from tests.fakeapi.fixtures import fake_anthropic  # noqa: F401  (a pytest fixture)
