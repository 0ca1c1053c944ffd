"""Compaction at a sub-task boundary (tiers/subtask.py) and its trigger in the policy."""

from __future__ import annotations

from agent_cli.context.model import ContextConfig
from agent_cli.context.policy import make_policy
from agent_cli.context.tiers.selection import is_person_message
from agent_cli.context.tiers.subtask import SubtaskCompact, finished_item, transitions
from agent_cli.core.types import Block
from tests.context.test_tiers import (
    Counter,
    FakeSummarizer,
    applied,
    asst,
    attached,
    make_ctx,
    person,
    read_pair,
    results,
)


def todo(call_id: str, *items: tuple[str, str]) -> list:
    todos = [{"content": c, "status": s} for c, s in items]
    return [
        asst("", (call_id, "todo_write", {"todos": todos})),
        results((call_id, "todo_write", f"Todo list ({len(todos)} items)")),
    ]


def session(done: bool = True) -> list:
    view = [person("Fix the parser, then document it.")]
    view += todo("u1", ("fix parser", "in_progress"), ("write docs", "pending"))
    view += read_pair(1, 3_000) + read_pair(2, 3_000)
    view += [asst("Found it: the loop in file2.py stops one short.")]
    view += [person("Also keep the public API.", 2)]
    view += read_pair(3, 3_000, 2)
    status = "completed" if done else "in_progress"
    view += todo("u2", ("fix parser", status), ("write docs", "in_progress"))
    return view


def test_the_boundary_is_the_items_work_between_its_two_todo_updates():
    view = session()
    boundary = finished_item(view)
    assert boundary is not None and boundary.items == ("fix parser",)
    assert (boundary.start, boundary.end) == (3, len(view) - 2)
    assert finished_item(session(done=False)) is None
    assert finished_item(view[:-1]) is None  # the completing call has no result yet


def test_a_task_trackers_commands_are_boundaries_too():
    def bash(command: str) -> Block:
        return Block.tool_use("b", "Bash", {"command": command})

    assert transitions(bash("bd update proj-1.2 --status in_progress")) == {"proj-1.2": "in_progress"}
    assert transitions(bash('bd close proj-1.2 --reason="done" && bd close proj-1')) == {
        "proj-1.2": "completed",
        "proj-1": "completed",
    }
    assert transitions(bash("bd show proj-1")) is None
    assert transitions(bash("pytest -q")) is None


LONG = ContextConfig(forecast_ratio=1.0)  # a session expected to go on: the region's rewrite pays


async def test_a_finished_item_becomes_one_region_and_words_stay_verbatim():
    view = session()
    summarizer = FakeSummarizer(replies=["file1, file2 read; off-by-one in file2.py; file3 checked"])
    ctx = make_ctx(view, budget=12_000, summarizer=summarizer, last_request_at=999.0, config=LONG)
    compaction, new = await applied(SubtaskCompact(), view, ctx, "subtask")
    assert compaction.tier == "T3" and compaction.trigger == "subtask" and len(summarizer.calls) == 1
    assert "src/file1.py" in summarizer.calls[0][1] and "src/file3.py" in summarizer.calls[0][1]
    bodies = [b.text for m in new for b in m.tool_results()]
    region = [t for t in bodies if t.startswith("[region summary")]
    assert len(region) == 1 and "(finished: fix parser)" in region[0] and "off-by-one" in region[0]
    assert sum(t.startswith("[summarized in the region summary") for t in bodies) == 2
    assert bodies[0] == "Todo list (2 items)" and bodies[-1] == "Todo list (2 items)"  # the updates stay
    assert [m.text for m in new if m.role == "assistant"] == [m.text for m in view if m.role == "assistant"]
    assert [m.text for m in new if is_person_message(m)] == [m.text for m in view if is_person_message(m)]
    assert "line 5 of file3.py" in compaction.originals[compaction.refs[0]]  # recallable


async def test_without_a_summarizer_the_region_is_one_line_per_call():
    view = session()
    for summarizer in (None, FakeSummarizer(fail=True)):
        ctx = make_ctx(view, budget=12_000, summarizer=summarizer, last_request_at=999.0, config=LONG)
        compaction, _ = await applied(SubtaskCompact(), view, ctx, "subtask")
        assert "- read_file src/file2.py → ok" in compaction.summary


async def test_the_policy_runs_it_only_when_asked_and_above_half_the_auto_threshold():
    view = session()
    used = Counter().total(view)
    config = LONG
    # every read looks needed soon: T1 keeps out of the way
    above = attached(make_ctx(view, budget=int(used / 0.835 * 2 * 0.9), config=config, last_request_at=999.0))
    below = attached(make_ctx(view, budget=int(used / 0.835 * 2 * 1.2), config=config, last_request_at=999.0))
    done = await make_policy("default+subtask").decide(view, above)
    assert [(c.tier, c.trigger) for c in done] == [("T3", "subtask")]
    assert await make_policy("default+subtask").decide(view, below) == []
    assert await make_policy("default").decide(view, above) == []
