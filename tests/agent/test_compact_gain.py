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


async def test_compact_judges_the_gain_by_one_count_not_the_api_s_against_ours(workspace):
    """The gauge may hold the API's count (here far above ours); a summary longer than what it
    replaces by our count is refused even though it is below that figure (the demo showed a manual
    compaction '3,943 -> 3,961')."""
    session = make_session(workspace, SHORT_TASK, summaries=[LONG_SUMMARY])
    await run(session, "hi")
    await run(session, "look at the parser")
    await run(session, "thanks")
    tokens = session.engine.tokens
    tokens.billed = (tokens.estimate() + 50_000, len(session.engine.messages))
    before, view = session.status().used, list(session.engine.messages)
    events = await run(session, "/compact")
    result = next(e for e in events if e.kind == "command")
    assert result.text.startswith("Nothing to gain"), result.text
    assert session.engine.messages == view and session.status().used == before
    assert f"({before:,} → " in result.text  # and what it would have grown to, from the gauge's figure
