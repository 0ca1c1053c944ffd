"""Error classification and retry-after parsing (pure functions, no network)."""

from __future__ import annotations

import email.utils
import time

import pytest

from agent_cli.core.errors import ContextOverflowError
from agent_cli.llm.anthropic_errors import classify_status, parse_overflow
from agent_cli.llm.provider_errors import parse_retry_after, should_retry


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("prompt is too long: 210000 tokens > 200000 maximum", (210_000, 200_000)),
        ("Prompt is too long: 1,050,123 tokens > 1,000,000 maximum", (1_050_123, 1_000_000)),
        ("input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000", (190_000, 180_000)),
        ("input length and max_tokens exceed context limit: 5 + 10 > 12", (5, 2)),
        ("something else entirely", None),
    ],
)
def test_parse_overflow(message, expected):
    assert parse_overflow(message) == expected


@pytest.mark.parametrize(
    ("status", "error_type", "kind", "retried"),
    [
        (401, "authentication_error", "auth", False),
        (403, "permission_error", "auth", False),
        (429, "rate_limit_error", "rate_limit", True),
        (529, "overloaded_error", "overloaded", True),
        (200, "overloaded_error", "overloaded", True),
        (400, "invalid_request_error", "bad_request", False),
        (404, "not_found_error", "bad_request", False),
        (500, "api_error", "server", True),
        (502, "api_error", "server", True),
        (504, "timeout_error", "network", True),
        (501, "api_error", "server", False),
    ],
)
def test_classify_status(status, error_type, kind, retried):
    err = classify_status(status, error_type, "the API said no")
    assert err.kind == kind and err.status == status and err.hint
    assert should_retry(err) is retried


def test_overflow_wins_and_keeps_numbers():
    err = classify_status(400, "invalid_request_error", "prompt is too long: 300 tokens > 200 maximum")
    assert isinstance(err, ContextOverflowError) and (err.tokens, err.maximum) == (300, 200)
    assert not should_retry(err)


def test_parse_retry_after():
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"retry-after": future}) <= 31
