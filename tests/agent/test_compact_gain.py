"""/compact never makes the context bigger: a summary longer than what it replaces is refused."""

from __future__ import annotations

from .helpers import make_session, run

SHORT_TASK = [{"text": "Hello! What shall we do?"}, {"text": "The parser it is."}, {"text": "Done."}]
LONG_SUMMARY = "## Goal\n" + "Say hello and wait for the next instruction. " * 400


async def test_compact_refuses_when_the_summary_would_not_be_smaller(workspace):
    session = make_session(workspace, SHORT_TASK, summaries=[LONG_SUMMARY])
    await run(session, "hi")
    await run(session, "look at the parser")
    await run(session, "thanks")
    before, view = session.status().used, list(session.engine.messages)
    events = await run(session, "/compact")
    result = next(e for e in events if e.kind == "command")
    assert not result.is_error
    assert result.text.startswith("Nothing to gain")
    assert not [e for e in events if e.kind == "compaction"]
    assert session.engine.messages == view  # the context is left as it is
    assert session.status().used == before
    assert result.data["after"] == before


async def test_compact_that_shrinks_is_applied(workspace):
    big = [{"text": "Here is a long answer. " * 600}, {"text": "And another long one. " * 600}]
    session = make_session(workspace, big, summaries=["## Goal\nTalk.\n## Current state\nDone."])
    await run(session, "first")
    await run(session, "second")
    before = session.status().used
    events = await run(session, "/compact")
    result = next(e for e in events if e.kind == "command")
    assert "Compacted" in result.text, result.text
    assert session.status().used < before
