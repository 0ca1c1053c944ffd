"""Resume as shipped: compose_session(resume=...) reads the log and replays it (session.replay_into),
then repairs what a crash left. Each case checks the exact view and the ledger afterwards."""

from __future__ import annotations

import json

from agent_cli.context.invariants import check
from agent_cli.core.types import Message
from agent_cli.session.recovery import INTERRUPTED_BY_EXIT

from .helpers import make_session, run
from .test_loop import FIX_TASK, wordy

SLEEPY = [{"text": "Building.", "tool_calls": [{"name": "bash", "input": {"command": "make build"}}]}]


def _request(session) -> str:
    return json.dumps(session.engine.build_request().to_api(), sort_keys=True)


def _cut_after(path, predicate) -> list[dict]:
    """Keep the log up to and including the first event `predicate` accepts: a crash right there."""
    lines = path.read_text().splitlines()
    last = min(i for i, line in enumerate(lines) if predicate(json.loads(line)))
    path.write_text("\n".join(lines[: last + 1]) + "\n")
    return [json.loads(line) for line in lines[: last + 1]]


async def test_a_log_that_ends_while_a_tool_ran_gets_an_interrupted_result(workspace):
    live = make_session(workspace, SLEEPY + [{"text": "Built."}])
    await run(live, "build it")
    live.close()
    kept = _cut_after(live.log.path, lambda e: e["type"] == "assistant")  # died while `make` ran
    assert "turn_end" not in [e["type"] for e in kept]
    before = [Message.from_json(e["message"]) for e in kept if e["type"] in ("user", "assistant")]

    resumed = make_session(workspace, [{"text": "Resumed."}], resume=live.session_id)
    view = resumed.engine.messages
    assert view[:-1] == before  # the exact view the dead process had ...
    closing = view[-1]  # ... plus the result it never wrote
    assert [b.type for b in closing.blocks] == ["tool_result"]
    assert closing.blocks[0].tool_use_id == before[-1].tool_uses()[0].id
    assert closing.blocks[0].text == INTERRUPTED_BY_EXIT and closing.blocks[0].is_error
    assert check(view) == []
    ledger = resumed.engine.ledger
    assert ledger.messages == ["build it"]
    assert [(c.command, c.exit_code, c.is_error) for c in ledger.commands] == [("make build", None, True)]
    assert any(INTERRUPTED_BY_EXIT in e for e in ledger.errors)
    logged = [json.loads(line) for line in resumed.log.path.read_text().splitlines()]
    assert logged[-2]["type"] == "tool_results" and logged[-2]["recovered"] is True
    assert logged[-1] == {**logged[-1], "type": "turn_end", "stop_reason": "interrupted"}

    events = await run(resumed, "go on")
    assert events[-1].result == "Resumed." and check(resumed.engine.messages) == []
    resumed.close()
    again = make_session(workspace, [], resume=live.session_id)  # repaired once, stays repaired
    assert again.engine.messages == resumed.engine.messages and not again.warnings


async def test_a_log_that_ends_after_the_prompt_resumes_and_answers(workspace):
    live = make_session(workspace, [{"text": "never arrives"}])
    await run(live, "first question")
    live.close()
    _cut_after(live.log.path, lambda e: e["type"] == "user")  # died while waiting for the model
    resumed = make_session(workspace, [{"text": "Answered."}], resume=live.session_id)
    assert [m.role for m in resumed.engine.messages] == ["user"]
    assert resumed.engine.ledger.messages == ["first question"]
    events = await run(resumed, "second question")
    assert events[-1].result == "Answered."
    sent = resumed.provider.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]  # a stand-in keeps roles alternating
    assert "first question" in json.dumps(sent[0]) and "second question" in json.dumps(sent[-1])


async def test_a_log_with_a_compaction_resumes_to_the_same_view_ledger_and_request(workspace):
    task = wordy(FIX_TASK) + [{"text": "Tests pass."}]  # long enough that /compact makes it smaller
    live = make_session(workspace, task, summaries=["## Goal\nFix add()."])
    await run(live, "fix add()")
    events = await run(live, "/compact keep the edit")
    assert [e.tier for e in events if e.kind == "compaction"] == ["T4"]
    await run(live, "run the tests")
    live.close()
    resumed = make_session(workspace, [], resume=live.session_id)
    assert resumed.engine.messages == live.engine.messages
    assert "Fix add()." in json.dumps([m.to_json() for m in resumed.engine.messages])
    assert resumed.engine.ledger.to_json() == live.engine.ledger.to_json()
    assert resumed.engine.ledger.messages == ["fix add()", "run the tests"]
    assert _request(resumed) == _request(live)


async def test_a_log_with_clear_resumes_to_the_fresh_conversation_only(workspace):
    live = make_session(workspace, FIX_TASK + [{"text": "Hello again."}])
    await run(live, "fix add()")
    await run(live, "/clear")
    await run(live, "something else")
    live.close()
    resumed = make_session(workspace, [], resume=live.session_id)
    assert resumed.engine.messages == live.engine.messages
    assert [m.role for m in resumed.engine.messages] == ["user", "assistant"]
    assert "fix add()" not in json.dumps([m.to_json() for m in resumed.engine.messages])
    assert resumed.engine.ledger.to_json() == live.engine.ledger.to_json()
    assert resumed.engine.ledger.messages == ["something else"] and resumed.engine.ledger.commands == []
    assert _request(resumed) == _request(live)
    # the transcript a person scrolls through starts after the /clear too
    assert [m.role for m in resumed.conversation()] == ["user", "assistant"]
