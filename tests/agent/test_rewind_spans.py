"""How a code rewind tells the agent's changes from the person's: the log's snapshots cut the time
since the rewind's point into spans, the agent's or the person's (session/ownership.py)."""

from __future__ import annotations

from agent_cli.session.ownership import NOW, Span, spans_from

C = [f"{n:040x}" for n in range(1, 8)]  # commit names


def test_the_walk_cuts_the_log_into_the_agents_spans_and_the_persons():
    events = [
        {"type": "checkpoint", "commit": C[0]},
        {"type": "user", "prompt": "x"},
        {"type": "checkpoint_end", "commit": C[1]},
        {"type": "checkpoint", "commit": C[2]},  # no end: a crash
        {"type": "checkpoint", "commit": C[3]},
        {"type": "checkpoint_end", "commit": C[4]},
        {"type": "restore", "commit": C[0], "undo": C[5], "after": C[6]},
    ]
    assert spans_from(events, 0) == [
        Span(C[0], C[1], True),
        Span(C[1], C[2], False),
        Span(C[2], C[3], True),  # the crashed turn: everything to the next snapshot
        Span(C[3], C[4], True),
        Span(C[4], C[5], False),
        Span(C[5], C[6], True),  # the rewind's own change
        Span(C[6], NOW, False),
    ]
    assert spans_from(events, 6) == [Span(C[5], C[6], True), Span(C[6], NOW, False)]


def test_a_failed_checkpoint_or_a_mark_that_is_no_commit_counts_as_the_agents():
    events = [
        {"type": "checkpoint", "commit": C[0]},
        {"type": "checkpoint_end", "commit": C[1]},
        {"type": "checkpoint_failed", "reason": "disk full"},
        {"type": "checkpoint", "commit": C[2]},
        {"type": "checkpoint_end", "commit": "--output=/tmp/x"},
        {"type": "restore", "commit": C[0], "undo": C[3]},  # before `after` was logged
    ]
    assert spans_from(events, 0) == [
        Span(C[0], C[1], True),
        Span(C[1], C[2], True),
        Span(C[2], C[3], True),
        Span(C[3], NOW, True),
    ]
