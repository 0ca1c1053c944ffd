"""Token estimates: cl100k offline, cached by content, scaled by a per-model factor that usage calibrates."""

from __future__ import annotations

import math

import pytest

from agent_cli.context.tokens import (
    FACTOR_MAX,
    FACTOR_MIN,
    IMAGE_TOKENS,
    MIN_GROWTH,
    TokenCounter,
    default_factor,
)
from agent_cli.core.types import Block, Message

TEXT = "def add(a, b):\n    return a + b\n" * 50


def test_counts_text_with_the_offline_encoding_loaded_lazily():
    counter = TokenCounter()
    assert counter._encoding is None  # nothing loaded until the first count
    assert counter.raw_text("hello world") == 2
    assert counter.raw_text("") == 0
    assert counter.text(TEXT) > 100


def test_a_repeated_text_is_counted_once():
    counter = TokenCounter()
    first = counter.raw_text(TEXT)
    misses = counter.misses
    assert counter.raw_text(TEXT) == first
    assert counter.misses == misses
    assert counter.hits >= 1


def test_the_cache_is_bounded():
    counter = TokenCounter(cache_size=2)
    for text in ("one", "two", "three", "four"):
        counter.raw_text(text)
    assert len(counter._cache) == 2
    assert counter.raw_text("one") == 1  # evicted, counted again, still right


def test_special_token_text_is_counted_not_refused():
    assert TokenCounter().raw_text("<|endoftext|> and <|fim_prefix|>") > 2


@pytest.mark.parametrize(
    ("model", "factor"),
    [
        ("claude-sonnet-5-5", 1.3),
        ("claude-haiku-5-5", 1.3),
        ("claude-opus-4-7", 1.3),
        ("claude-opus-4-7-20260301", 1.3),
        ("claude-opus-4-6", 1.0),
        ("claude-sonnet-4-5-20250929", 1.0),
        ("claude-sonnet-4-20250514", 1.0),
        ("claude-3-5-sonnet-20241022", 1.0),
        ("gpt-4o", 1.0),
        ("", 1.0),
    ],
)
def test_default_factor_follows_the_tokenizer_generation(model, factor):
    assert default_factor(model) == factor
    assert TokenCounter(model).factor == factor


def test_the_factor_scales_every_count_rounding_up():
    plain, scaled = TokenCounter(factor=1.0), TokenCounter(factor=1.37)
    raw = plain.text(TEXT)
    assert scaled.text(TEXT) == math.ceil(raw * 1.37)
    assert scaled.raw_text(TEXT) == raw
    message = Message("user", (Block.text_block(TEXT),))
    assert scaled.message(message) == math.ceil(plain.message(message) * 1.37)


def test_calibration_moves_towards_billed_over_raw():
    counter = TokenCounter(factor=1.0)
    for _ in range(30):
        counter.calibrate(1_000, 1_200)
    assert counter.factor == pytest.approx(1.2, abs=0.01)


def test_calibration_follows_what_each_request_added_not_the_prefix():
    """A server that bills the system prompt and tools at 0.9 of our raw count and source code at
    0.73 (one that counts 4 characters a token): once a session has grown by MIN_GROWTH raw tokens
    the factor is the growth's ratio, so the next read is counted as it will be billed. A moving
    average of whole requests, the prefix in every one, was still 0.81 after ten reads (10% high)."""
    counter = TokenCounter("claude-sonnet-5-5")
    raw, billed = 3_888, 3_497
    counter.calibrate(raw, billed)
    for _ in range(10):
        since = (raw, billed)
        raw, billed = raw + 6_027, billed + 4_397
        counter.calibrate(raw, billed, since)
    assert counter.factor == pytest.approx(4_397 / 6_027, abs=0.002)
    # a request that does not extend the one before (a compaction, another model) teaches no growth
    grown = counter.grown
    counter.calibrate(raw - 20_000, billed - 10_000)
    assert counter.grown == grown


def test_growth_below_min_growth_keeps_the_moving_average():
    counter = TokenCounter(factor=1.0)
    counter.calibrate(1_000, 1_200)
    counter.calibrate(1_000 + MIN_GROWTH // 2, 1_200 + MIN_GROWTH, (1_000, 1_200))
    assert counter.grown == (MIN_GROWTH // 2, MIN_GROWTH)
    assert 1.1 < counter.factor < 1.5  # the average moved; the growth's 2.0 is not trusted yet


def test_calibration_is_clamped():
    high, low = TokenCounter(factor=1.0), TokenCounter(factor=1.0)
    for _ in range(30):
        high.calibrate(100, 100_000)
        low.calibrate(100_000, 10)
        assert FACTOR_MIN <= low.factor <= high.factor <= FACTOR_MAX
    assert high.factor == pytest.approx(FACTOR_MAX, abs=0.01)
    assert low.factor == pytest.approx(FACTOR_MIN, abs=0.01)
    assert TokenCounter(factor=9.0).factor == FACTOR_MAX


def test_calibration_ignores_empty_observations():
    counter = TokenCounter(factor=1.1)
    counter.calibrate(0, 500)
    counter.calibrate(500, 0)
    assert counter.factor == 1.1


def test_switching_model_takes_its_default_factor():
    counter = TokenCounter("claude-sonnet-4-5")
    counter.calibrate(100, 150)
    counter.set_model("claude-sonnet-5-5")
    assert counter.factor == 1.3


def test_blocks_by_type():
    counter = TokenCounter()
    image = Block(type="image", media_type="image/png", data="A" * 100_000)
    assert counter.raw_block(image) >= IMAGE_TOKENS
    small = Block.tool_use("t1", "write_file", {"path": "a.py", "content": "x"})
    large = Block.tool_use("t1", "write_file", {"path": "a.py", "content": TEXT})
    assert counter.raw_block(large) > counter.raw_block(small) + 100
    assert counter.raw_block(Block.tool_result("t1", TEXT)) > counter.raw_text(TEXT)


def test_request_counts_system_tools_and_messages():
    counter = TokenCounter()
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": [{"type": "text", "text": TEXT}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": TEXT}]}],
    }
    without_tools = counter.raw_request(body)
    assert without_tools > 2 * counter.raw_text(TEXT)
    body["tools"] = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}]
    assert counter.raw_request(body) > without_tools
    body["messages"][0]["content"] = TEXT  # the string form counts the same text
    assert counter.raw_request(body) >= without_tools
