"""Cache anchors by expected value, and cache-health monitoring with a named cause."""

from __future__ import annotations

from agent_cli.context.cache import CacheMonitor, Candidate, PrefixKey, cache_control, choose_breakpoints
from agent_cli.core.types import Usage

KEY = PrefixKey("system-a", "tools-a")
MISS = Usage(input_tokens=5_000, cache_creation_input_tokens=3_000)
HIT = Usage(input_tokens=100, cache_read_input_tokens=8_000)


def test_breakpoints_skip_short_prefixes_dedupe_and_keep_request_order():
    candidates = [
        Candidate(5, 2, 9_000, 0.8, "last"),
        Candidate(-1, 0, 500, 0.95, "system"),  # below the cache minimum
        Candidate(3, 1, 7_000, 0.9, "previous"),
        Candidate(3, 1, 7_000, 0.9, "summary"),  # the same block twice
    ]
    chosen = choose_breakpoints(candidates, cache_min_tokens=1_024)
    assert [c.position for c in chosen] == [(3, 1), (5, 2)]


def test_never_more_than_four_and_the_most_valuable_win():
    candidates = [Candidate(i, 0, 2_000 * (i + 1), 0.9, "previous") for i in range(8)]
    chosen = choose_breakpoints(candidates, cache_min_tokens=1_024, limit=10)
    assert [c.message for c in chosen] == [4, 5, 6, 7]
    assert choose_breakpoints([Candidate(0, -1, 5_000, 1.0, "last")], cache_min_tokens=0) == []


def test_cache_control_ttl():
    assert cache_control("5m") == {"type": "ephemeral"}
    assert cache_control("1h") == {"type": "ephemeral", "ttl": "1h"}


def test_hit_rate_and_counts():
    monitor = CacheMonitor()
    monitor.observe(KEY, MISS, at=0)
    monitor.observe(KEY, HIT, at=10)
    assert monitor.requests == 2 and monitor.hits == 1
    assert monitor.cache_read == 8_000 and monitor.cache_write == 3_000
    assert monitor.hit_rate == 8_000 / (5_000 + 3_000 + 100 + 8_000)


def test_three_misses_in_a_row_warn_once_naming_the_changed_system_prompt():
    monitor = CacheMonitor()
    assert (
        monitor.observe(PrefixKey("s0", "t"), MISS, at=0, stable_tokens=5_000) is None
    )  # nothing to read yet
    warnings = [
        monitor.observe(PrefixKey(f"s{i}", "t"), MISS, at=i, stable_tokens=5_000) for i in range(1, 6)
    ]
    assert warnings[0] is None and warnings[1] is None
    assert "cache thrash" in warnings[2] and "the system prompt changed" in warnings[2]
    assert warnings[3:] == [None, None]  # once per streak
    monitor.observe(PrefixKey("s5", "t"), HIT, at=6, stable_tokens=5_000)
    again = [monitor.observe(PrefixKey("s5", f"t{i}"), MISS, at=7 + i, stable_tokens=5_000) for i in range(3)]
    assert again[:2] == [None, None] and "the tool list changed" in again[2]


def test_idle_gaps_are_named():
    monitor = CacheMonitor(ttl_seconds=300)
    warnings = [monitor.observe(KEY, MISS, at=i * 1_000, stable_tokens=5_000) for i in range(4)]
    assert "idle longer than the cache TTL" in warnings[3]
    assert 'cache_ttl = "1h"' in warnings[3]


def test_no_cause_found_still_warns():
    monitor = CacheMonitor()
    warnings = [monitor.observe(KEY, MISS, at=i, stable_tokens=5_000) for i in range(4)]
    assert "no cause found" in warnings[3]


def test_no_warning_when_nothing_could_be_cached():
    monitor = CacheMonitor(cache_min_tokens=1_024)
    warnings = [monitor.observe(KEY, MISS, at=i, stable_tokens=800) for i in range(6)]
    assert warnings == [None] * 6
    assert monitor.misses == 0
