"""Every clear a priced bet (context/eviction.py) and the cache rewrite it is priced with (tiers/pricing.py)."""

from __future__ import annotations

from agent_cli.context.cache import LOOKBACK, stair_index
from agent_cli.context.eviction import (
    MIN_FORECAST,
    Bet,
    Candidate,
    Market,
    forecast,
    gain,
    held_without,
    needed_within,
    plan,
)
from agent_cli.context.tiers.pricing import RewriteModel
from tests.context.test_tiers import asst, person, results


def item(key: str, message: int, tokens: int, p: float, decay: float = 0.8, age: int = 0) -> Candidate:
    return Candidate(key, message, tokens, p, age, "x", "", decay)


def free_rewrite(first: int, freed: int) -> float:
    return 0.0


def test_the_forecast_is_a_share_of_the_requests_made_never_below_the_minimum_nor_above_a_cap():
    assert forecast(0, 0.25, 0) == MIN_FORECAST
    assert forecast(200, 0.25, 0) == 50
    assert forecast(200, 0.25, 30) == 30


def test_what_a_clear_saves_and_risks():
    # nothing will need it: the whole forecast of holding is saved, nothing is risked
    assert held_without(item("a", 1, 1000, 0.0), 40) == 40
    assert gain(item("a", 1, 1000, 0.0), 40, 50_000, 20_000) == 0.1 * 1000 * 40
    # a need that comes soon: little holding is saved (it is read again then), a miss is likely
    soon = item("b", 1, 1000, 0.9, decay=0.2)
    assert needed_within(soon, 3) > 0.89 and held_without(soon, 40) < 6
    assert gain(soon, 40, 50_000, 20_000) < 0
    # the same chance spread over the whole forecast (no decay): more is saved before it comes
    assert held_without(item("c", 1, 1000, 0.5, decay=1.0), 40) == 30


def test_a_larger_context_or_penalty_makes_a_miss_dearer_and_keeps_more():
    maybe = item("m", 1, 2000, 0.3, decay=0.9)
    assert gain(maybe, 40, 20_000, 0) > 0
    assert gain(maybe, 40, 20_000, 60_000) < 0


def test_the_plan_takes_the_start_whose_gains_beat_its_rewrite_by_the_most():
    items = [item("old", 1, 5_000, 0.0), item("new", 9, 3_000, 0.0)]
    # rewriting from message 1 costs more than both items save; from message 9 it is cheap
    rewrite = {1: 100_000.0, 9: 500.0}
    market = Market(40, 50_000, 20_000, lambda first, freed: rewrite[first])
    chosen = plan(items, market)
    assert [c.key for c in chosen.chosen] == ["new"]
    assert chosen.bet.rewrite == 500 and chosen.bet.saving == 0.1 * 3_000 * 40 and chosen.bet.cleared == 1
    # when nothing pays, nothing is cleared
    broke = Market(3, 50_000, 20_000, lambda first, freed: 100_000.0)
    assert plan(items, broke).chosen == ()


def test_over_capacity_space_decides_in_ascending_value_per_token():
    precious = item("precious", 1, 4_000, 1.0, decay=0.1)
    cheap = item("cheap", 2, 4_000, 0.05, decay=0.1)
    market = Market(3, 50_000, 20_000, lambda first, freed: 1e9)  # no clear pays by itself
    assert plan([precious, cheap], market).chosen == ()
    forced = plan([precious, cheap], market, excess=3_000, target_excess=3_000)
    assert [c.key for c in forced.chosen] == ["cheap"] and forced.bet.forced
    both = plan([precious, cheap], market, excess=3_000, target_excess=6_000, room=True)
    assert [c.key for c in both.chosen] == ["cheap", "precious"]


def test_room_past_the_excess_is_a_bet_that_buys_no_rewrite_nor_a_read_about_to_be_needed():
    """Over capacity by 500 tokens, with room wanted for a message like the last (4,000): the excess
    goes whatever it costs (a small item at message 8, its rewrite 700); the room is a guess, so it
    takes only what clears behind that rewrite, and only where clearing now risks less than clearing
    when that message comes would rewrite. An old log nobody needs stays when taking it would move
    the rewrite back to message 7 (5,000); a read the model will need (p 0.9) at the end of the view,
    cheap to clear later if the room is ever wanted, stays. After a forced clear that came right after
    one (the view grows faster than a bare excess frees), the whole room at the least cost."""
    small = item("small", 8, 600, 0.01)
    log = item("log", 7, 4_000, 0.0)
    queued = item("queued", 9, 4_000, 0.9, decay=1.0)
    rewrite = {7: 5_000.0, 8: 700.0, 9: 200.0}
    market = Market(3, 45_000, 60_000, lambda first, freed: rewrite[first])
    room = plan([small, log, queued], market, excess=500, target_excess=4_500)
    assert room.bet.forced and [c.key for c in room.chosen] == ["small"]
    whole = plan([small, log, queued], market, excess=500, target_excess=4_500, room=True)
    assert [c.key for c in whole.chosen] == ["log", "small"]
    only = plan([small, queued], market, excess=500, target_excess=4_500)
    assert [c.key for c in only.chosen] == ["small"]  # the excess, and no read spent on a guess
    again = plan([small, queued], market, excess=500, target_excess=4_500, room=True)
    assert [c.key for c in again.chosen] == ["small", "queued"]


def test_the_bet_round_trips_through_the_log():
    bet = Bet(12, 3456.7, 12.3, 999.9, 4, 7, True, (("file", 0.25),))
    again = Bet.from_json(bet.to_json())
    assert (again.forecast, round(again.saving), again.cleared, again.kept, again.forced) == (
        12,
        3457,
        4,
        7,
        True,
    )
    assert again.expected == (("file", 0.25),)


def _session(turns: int) -> list:
    view = [person("go")]
    for n in range(turns):
        view += [asst("", (f"c{n}", "bash", {"command": "make"})), results((f"c{n}", "bash", "out " * 300))]
    return view + [asst("done"), person("next", 2)]


def test_a_clear_rewrites_from_the_last_cached_request_end_it_can_reach():
    view = _session(30)
    tokens = [100] * len(view)
    ends = [i for i in range(len(view) - 1) if view[i].role == "user" and view[i + 1].role == "assistant"]
    model = RewriteModel(view, tokens, cold=False, cached=ends)
    last = model.previous_end
    # right behind the previous request: only the messages after the last end before it
    assert model.start(last) == ends[-2] + 1
    assert model(last, 0) == 1.15 * sum(tokens[ends[-2] + 1 : last + 1])
    # far back, beyond the API's look-back and the stair: the whole conversation is written again
    assert model.start(3) == 0 and model(3, 0) == 1.15 * sum(tokens[: last + 1])
    # the stair (an earlier request end, marked again every request) makes the middle cheaper
    stair = stair_index([len(m.blocks) for m in view], last, ends)
    assert stair is not None and model.stair == stair
    assert model.start(stair + 2) == stair + 1
    # nothing cached at all: everything is written again; a cold cache: nothing is lost
    assert RewriteModel(view, tokens, cold=False, cached=()).start(last) == 0
    assert RewriteModel(view, tokens, cold=True, cached=ends)(3, 0) == 0


def test_the_stair_sits_one_to_two_look_backs_behind_and_stays_put_as_requests_come():
    counts = [1] * 200
    ends = list(range(0, 199, 2))
    first = stair_index(counts, 120, ends)
    assert first is not None and LOOKBACK <= 120 - first < 2 * LOOKBACK + 2
    assert stair_index(counts, 122, ends) == first  # the next request marks the same message
    assert stair_index(counts, 10, ends) is None  # too early: nothing that far back


def test_a_forced_clear_that_rewrites_from_the_head_takes_along_what_then_pays():
    """Space forces a clear, and every read lies beyond the cache's look-back, so any clear rewrites
    the context from the head: the reads that rewrite would write again go too when sparing their
    rewrite pays their risk. Before, it cleared just enough and wrote the other 36k again (the
    closed loop's batch at 60k: 1.33x unpressured instead of 1.04x)."""
    reads = [item(f"r{i}", 2 * i, 4_800, 0.1, decay=0.95, age=8 - i) for i in range(8)]
    recalled = item("now", 30, 4_800, 0.9, decay=0.5)  # brought back for the very next edit
    total = 46_000

    def from_head(first: int, freed: int) -> float:
        return 1.15 * max(0, total - freed)

    market = Market(3, 45_000, 90_000, from_head)
    assert plan([*reads, recalled], market).chosen == ()  # no clear pays by itself
    forced = plan([*reads, recalled], market, excess=1_000, target_excess=5_000)
    assert forced.bet.forced
    assert sorted(c.key for c in forced.chosen) == [f"r{i}" for i in range(8)]
    assert forced.bet.rewrite < 0.25 * 1.15 * total

    # a read whose risk outweighs even the rewrite it would spare stays
    needed = item("needed", 5, 4_800, 0.9, decay=0.5)
    again = plan([*reads, needed, recalled], market, excess=1_000, target_excess=5_000)
    assert "needed" not in {c.key for c in again.chosen} and len(again.chosen) == 8
