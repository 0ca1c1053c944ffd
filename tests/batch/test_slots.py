"""The Ray engine's `--max-concurrency` slots (an actor on Ray; its logic tested here as plain
asyncio): at most N holders, a release lets the next in, and an attempt the driver gave up on (its
task died) frees its slot and never takes one later."""

from __future__ import annotations

import asyncio

from agent_cli.batch.ray_engine import Slots


async def test_at_most_n_hold_a_slot_and_a_release_lets_the_next_in():
    slots = Slots(2)
    assert await slots.acquire("a#1") and await slots.acquire("b#1")
    waiting = asyncio.ensure_future(slots.acquire("c#1"))
    await asyncio.sleep(0)
    assert not waiting.done()
    await slots.release("a#1")
    assert await waiting is True and slots.holders == {"b#1", "c#1"}


async def test_an_abandoned_attempt_frees_its_slot_and_never_holds_one_again():
    slots = Slots(1)
    assert await slots.acquire("dead#1")
    waiting = asyncio.ensure_future(slots.acquire("next#1"))
    late = asyncio.ensure_future(slots.acquire("gone#1"))
    await asyncio.sleep(0)
    await slots.abandon("dead#1")  # its process died holding the slot
    await slots.abandon("gone#1")  # cancelled while it waited
    assert await waiting is True
    assert await late is False
    assert slots.holders == {"next#1"}
