"""A re-read of an unchanged file whose earlier read is still in view answers with one line."""

from __future__ import annotations

from agent_cli.context.model import ContextConfig
from agent_cli.context.working_set import UNCHANGED_PREFIX
from agent_cli.core.events import ToolFinished

from .helpers import make_session, run

READ = {"name": "read_file", "input": {"path": "app.py"}}


def _app(workspace):
    (workspace / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(40)))


def outputs(events):
    return [e.output for e in events if isinstance(e, ToolFinished)]


async def test_second_read_of_an_unchanged_file_is_one_line_naming_the_first(workspace):
    _app(workspace)
    session = make_session(workspace, [{"tool_calls": [READ]}, {"tool_calls": [READ]}, {"text": "done"}])
    events = await run(session, "read app.py twice")
    first, second = outputs(events)
    assert "value_20 = 20" in first
    assert second.startswith(UNCHANGED_PREFIX) and "\n" not in second  # what the working set knows
    first_id = session.provider.requests[1].messages[-1]["content"][0]["tool_use_id"]
    assert first_id in second and "lines 1-40" in second
    # what the model got in the request after the second read is that one line
    last = session.provider.requests[-1].messages[-1]["content"][0]
    assert last["content"] == second or second in str(last["content"])


async def test_a_different_range_or_an_edit_reads_in_full_again(workspace):
    _app(workspace)
    edit = {
        "name": "edit_file",
        "input": {"path": "app.py", "old_string": "value_3 = 3", "new_string": "value_3 = 33"},
    }
    ranged = {"name": "read_file", "input": {"path": "app.py", "offset": 5, "limit": 3}}
    session = make_session(
        workspace,
        [
            {"tool_calls": [READ]},
            {"tool_calls": [ranged]},
            {"tool_calls": [edit]},
            {"tool_calls": [READ]},
            {"text": "ok"},
        ],
    )
    events = await run(session, "go")
    full, part, _, again = outputs(events)
    assert "value_6 = 6" in part and not part.startswith("unchanged")
    assert "value_3 = 33" in again and not again.startswith("unchanged")


async def test_after_t1_cleared_the_first_read_a_re_read_is_full_again(workspace):
    _app(workspace)
    (workspace / "big.txt").write_text("filler line\n" * 2000)
    # four more reads push the first out of the recent results; a cold cache lets T1 clear it
    others = [{"tool_calls": [{"name": "read_file", "input": {"path": f"o{n}.txt"}}]} for n in range(4)]
    for n in range(4):
        (workspace / f"o{n}.txt").write_text(f"other {n}\n" * 30)
    # always cold, and a long session ahead in which a miss costs no more than reading again: T1 clears
    config = ContextConfig(cache_ttl_seconds=-1.0, miss_penalty_fraction=0, forecast_ratio=10.0)
    session = make_session(
        workspace, [{"tool_calls": [READ]}, *others, {"tool_calls": [READ]}, {"text": "ok"}], context=config
    )
    events = await run(session, "go")
    again = outputs(events)[-1]
    assert "value_20 = 20" in again and not again.startswith("unchanged")
    cleared = [
        b
        for m in session.engine.messages
        if m.role == "user"
        for b in m.tool_results()
        if b.text.startswith("[cleared: ")
    ]
    assert cleared and "app.py lines 1-40" in cleared[0].text
