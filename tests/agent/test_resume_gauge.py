"""Right after a resume the gauge starts from what the API last billed, not from our own estimate."""

from __future__ import annotations

from agent_cli.session.opening import last_billed_input

from .helpers import make_session, run

BILLED = 9_000  # what the server said the last request's input was (our estimate differs)


async def test_a_resumed_session_starts_from_the_last_billed_usage(workspace):
    answer = {"text": "Short answer.", "usage": {"input_tokens": BILLED, "output_tokens": 5}}
    first = make_session(workspace, [answer])
    await run(first, "hello there")
    live = first.status().used
    first.close()
    resumed = make_session(workspace, [], resume=first.session_id)
    used = resumed.status().used
    assert BILLED <= used <= BILLED + 50, used  # the billed input plus the short answer
    assert used == live  # the same number the live session showed at the end


def test_no_billed_usage_when_the_view_changed_after_the_last_answer():
    events = [
        {"type": "assistant", "model": "m", "usage": {"input_tokens": 500}},
        {"type": "user", "message": {}},
    ]
    assert last_billed_input(events, "m") == 0
    assert last_billed_input(events[:1], "m") == 500
    assert last_billed_input(events[:1], "other-model") == 0
