"""Classifying errors of OpenAI-compatible servers: each server's context-length wording, auth, limits."""

from __future__ import annotations

import pytest

from agent_cli.core.errors import ContextOverflowError
from agent_cli.llm.openai_errors import classify_openai_status, parse_context_overflow

OVERFLOWS = [
    (  # OpenAI
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130512 tokens. Please reduce the length of the messages.",
        {"code": "context_length_exceeded"},
        (130_512, 128_000),
    ),
    (  # OpenAI and older vLLM, with the completion counted in
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        {},
        (4000, 3096),
    ),
    (  # vLLM
        "This model's maximum context length is 32768 tokens. However, your request has 40000 input "
        "tokens. Please reduce the length of the input messages.",
        {"type": "BadRequestError"},
        (40_000, 32_768),
    ),
    (  # llama.cpp server
        "the request exceeds the available context size, try increasing it",
        {"type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192},
        (9000, 8192),
    ),
    (  # LiteLLM in front of the Messages API
        "litellm.BadRequestError: AnthropicException - prompt is too long: 210000 tokens > 200000 maximum",
        {"type": None},
        (210_000, 200_000),
    ),
    (  # someone else's words, the code says what it is
        "Input is too long for this model.",
        {"code": "context_length_exceeded"},
        (0, 0),
    ),
]


@pytest.mark.parametrize(("message", "error", "expected"), OVERFLOWS)
def test_context_length_errors_in_each_wording(message, error, expected):
    assert parse_context_overflow(message, error) == expected
    classified = classify_openai_status(400, error, message)
    assert isinstance(classified, ContextOverflowError)
    assert (classified.tokens, classified.maximum) == expected


def test_max_tokens_too_large_is_not_an_overflow_but_says_what_to_configure():
    message = (
        "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context "
        "length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778)."
    )
    classified = classify_openai_status(400, {"type": "BadRequestError"}, message)
    assert classified.kind == "bad_request" and "[models.NAME]" in classified.hint


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (401, {"code": "invalid_api_key"}, "auth"),
        (403, {}, "auth"),
        (429, {"type": "requests"}, "rate_limit"),
        (500, {}, "server"),
        (503, {}, "server"),
        (404, {"code": "model_not_found"}, "bad_request"),
        (400, {"type": "invalid_request_error"}, "bad_request"),
        (200, {"type": "server_error"}, "server"),  # an error chunk inside the stream
    ],
)
def test_statuses_are_classified(status, error, kind):
    assert classify_openai_status(status, error, "boom").kind == kind


def test_auth_names_the_variable_and_429_keeps_retry_after():
    assert "OPENAI_API_KEY" in classify_openai_status(401, {}, "bad key").hint
    assert classify_openai_status(429, {}, "slow down", retry_after=2.5).retry_after == 2.5
