from __future__ import annotations

from agent_cli.context.tokens import TokenCounter
from agent_cli.llm.base import Request
from agent_cli.replay.cache_sim import TTL_1H, CacheSimulator, Segment, request_segments


def seg(name: str, tokens: int, bp: bool = False, ttl: float = 300.0) -> Segment:
    return Segment(name.encode(), tokens, bp, ttl)


S, U1, A1, U2, A2, U3, A3, U4 = (
    seg("S", 100),
    seg("U1", 50),
    seg("A1", 30),
    seg("U2", 20),
    seg("A2", 40),
    seg("U3", 10),
    seg("A3", 5),
    seg("U4", 5),
)


def bp(s: Segment, ttl: float = 300.0) -> Segment:
    return Segment(s.key, s.tokens, True, ttl)


def reads(result) -> tuple[int, int, int]:
    return result.cache_read, result.cache_write, result.uncached


def test_first_request_writes_up_to_its_last_breakpoint():
    sim = CacheSimulator()
    assert reads(sim.request([bp(S), U1, A1, bp(U2), A2], now=0)) == (0, 200, 40)


def test_prefix_hit_reads_the_previous_request_and_writes_the_new_part():
    sim = CacheSimulator()
    sim.request([bp(S), U1, A1, bp(U2)], now=0)
    # the previous request's last block is a breakpoint again; the new tail is written
    assert reads(sim.request([bp(S), U1, A1, bp(U2), A2, bp(U3)], now=60)) == (200, 50, 0)


def test_a_changed_block_breaks_the_prefix_from_there_on():
    sim = CacheSimulator()
    sim.request([bp(S), U1, A1, bp(U2)], now=0)
    changed = seg("U1-edited", 50)
    # only the system block (its own breakpoint) still matches
    assert reads(sim.request([bp(S), changed, A1, bp(U2)], now=10)) == (100, 100, 0)


def test_entries_expire_after_the_ttl_since_last_use():
    sim = CacheSimulator()
    sim.request([bp(S), U1, A1, bp(U2)], now=0)
    sim.request([bp(S), U1, A1, bp(U2), A2, bp(U3)], now=60)
    # 400 s after the last use (60): everything expired -> a full rewrite
    late = [bp(S), U1, A1, U2, A2, bp(U3), A3, bp(U4)]
    assert reads(sim.request(late, now=460)) == (0, 260, 0)


def test_a_read_refreshes_the_entry():
    sim = CacheSimulator()
    sim.request([bp(S), U1], now=0)
    assert reads(sim.request([bp(S), U1, bp(A1)], now=250))[0] == 100  # refreshes S at 250
    # 500 s after the write but 250 s after the last read: still there
    assert reads(sim.request([bp(S), seg("X", 7)], now=500)) == (100, 0, 7)


def test_one_hour_ttl():
    sim = CacheSimulator()
    sim.request([bp(S, TTL_1H), bp(U1, TTL_1H)], now=0)
    assert reads(sim.request([bp(S, TTL_1H), bp(U1, TTL_1H), bp(A1, TTL_1H)], now=1800)) == (150, 30, 0)
    assert reads(sim.request([bp(S), bp(U1)], now=1800 + 3601)) == (0, 150, 0)


def test_what_a_one_hour_breakpoint_ends_is_written_for_an_hour():
    sim = CacheSimulator()
    first = sim.request([bp(S, TTL_1H), bp(U1)], now=0)  # the system prompt an hour, the rest 5 min
    assert (first.cache_write, first.cache_write_1h) == (150, 100)
    assert first.usage().cache_creation_1h_input_tokens == 100
    later = sim.request([bp(S, TTL_1H), bp(U1), bp(A1)], now=10)
    assert (later.cache_read, later.cache_write, later.cache_write_1h) == (150, 30, 0)


def test_lookback_finds_an_entry_up_to_20_blocks_before_a_breakpoint():
    blocks = [seg(f"b{i}", 10) for i in range(60)]
    sim = CacheSimulator()
    sim.request([*blocks[:9], bp(blocks[9])], now=0)  # entry at block 9 (100 tokens)
    # the only breakpoint is 15 blocks later: the look-back reaches block 9
    assert reads(sim.request([*blocks[:24], bp(blocks[24])], now=10)) == (100, 150, 0)


def test_lookback_is_limited_to_20_blocks():
    blocks = [seg(f"b{i}", 10) for i in range(60)]
    sim = CacheSimulator()
    sim.request([*blocks[:9], bp(blocks[9])], now=0)
    # 25 blocks after the entry: out of reach, a miss
    assert reads(sim.request([*blocks[:34], bp(blocks[34])], now=10)) == (0, 350, 0)
    sim2 = CacheSimulator()
    sim2.request([*blocks[:9], bp(blocks[9])], now=0)
    # a second breakpoint near the old one brings it back
    assert reads(sim2.request([*blocks[:11], bp(blocks[11]), *blocks[12:34], bp(blocks[34])], now=10)) == (
        100,
        250,
        0,
    )


def test_prefixes_below_the_cache_minimum_are_not_written():
    sim = CacheSimulator(min_tokens=1024)
    a, b, c = seg("A", 500), seg("B", 600), seg("C", 700)
    assert reads(sim.request([bp(a), bp(b)], now=0)) == (0, 1100, 0)
    assert reads(sim.request([bp(a), bp(c)], now=1)) == (0, 1200, 0)  # nothing cached at A alone
    assert reads(sim.request([bp(a)], now=2)) == (0, 0, 500)


def test_a_warm_prefix_is_read_by_the_first_request():
    sim = CacheSimulator()
    request = [S, bp(U1), A1]
    sim.warm(request, 0, now=0)  # e.g. tools cached by an earlier session
    assert reads(sim.request(request, now=1)) == (100, 50, 30)


def test_more_than_four_breakpoints_are_counted():
    sim = CacheSimulator()
    sim.request([bp(seg(str(i), 10)) for i in range(5)], now=0)
    assert sim.too_many_breakpoints == 1


def test_request_segments_follow_the_counter_and_the_cache_control_marks():
    counter = TokenCounter("claude-opus-4-6")
    request = Request(
        model="claude-opus-4-6",
        system=[
            {"type": "text", "text": "You are a careful agent. " * 20, "cache_control": {"type": "ephemeral"}}
        ],
        tools=[{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "hello there"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "print(1)\n" * 50,
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    }
                ],
            },
        ],
    )
    segments = request_segments(request, counter)
    assert len(segments) == 1 + 1 + 4  # tool, system, 4 content blocks
    assert sum(s.tokens for s in segments) == counter.request(request)
    assert [s.breakpoint for s in segments] == [False, True, False, False, False, True]
    assert segments[-1].ttl == TTL_1H and segments[1].ttl == 300.0
    # the marker itself is not part of the content: the same block without it has the same key
    plain = Request(
        model="m", system=[{"type": "text", "text": "You are a careful agent. " * 20}], messages=[]
    )
    assert request_segments(plain, counter)[0].key == segments[1].key
