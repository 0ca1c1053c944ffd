"""The real loop against the scripted provider: tools run, results go back, everything is logged."""

from __future__ import annotations

import asyncio
import json

from agent_cli.context.invariants import check
from agent_cli.core.events import PermissionDenied, PermissionRequest, ToolFinished, ToolStarted, TurnFinished

from .helpers import kinds, make_session, run, with_provider

FIX_TASK = [
    {
        "text": "Let me run the tests.",
        "tool_calls": [
            {"name": "bash", "input": {"command": "python3 -c 'import app; print(app.add(2, 3))'"}}
        ],
    },
    {
        "text": "5 expected, let me read it.",
        "tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}],
    },
    {
        "tool_calls": [
            {"name": "edit_file", "input": {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}}
        ]
    },
    {"text": "Fixed: `add` now adds."},
]


async def test_a_multi_step_task_runs_tools_in_order_and_edits_the_file(workspace):
    session = make_session(workspace, FIX_TASK)
    events = await run(session, "fix add()")
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.stop_reason == "end_turn"
    assert finished.result == "Fixed: `add` now adds."
    assert (workspace / "app.py").read_text() == "def add(a, b):\n    return a + b\n"
    tools = [e.call.name for e in events if isinstance(e, ToolStarted)]
    assert tools == ["bash", "read_file", "edit_file"]
    bash = next(e for e in events if isinstance(e, ToolFinished))
    assert "-1" in bash.output  # 2 - 3 before the fix
    assert kinds(events).index("text_delta") < kinds(events).index("tool_started")
    # the view is valid and every request sent was valid
    assert check(session.engine.messages) == []
    requests = session.provider.requests
    assert len(requests) == 4
    last = requests[-1].messages
    assert last[-1]["role"] == "user" and last[-1]["content"][0]["type"] == "tool_result"


async def test_the_log_has_every_event_flushed(workspace):
    session = make_session(workspace, FIX_TASK)
    await run(session, "fix add()")
    lines = [json.loads(line) for line in session.log.path.read_text().splitlines()]
    types = [e["type"] for e in lines]
    assert types[0] == "session_start"
    assert types.count("assistant") == 4 and types.count("tool_results") == 3
    assert types.count("user") == 1 and lines[types.index("user")]["prompt"] == "fix add()"


async def test_a_bad_tool_call_becomes_an_error_result_not_a_crash(workspace):
    session = make_session(
        workspace,
        [
            {
                "tool_calls": [
                    {"name": "read_file", "input": {"path": "missing.py"}},
                    {"name": "no_such_tool", "input": {}},
                    {
                        "name": "edit_file",
                        "input": {"path": "app.py", "old_string": "nope", "new_string": "x"},
                    },
                ]
            },
            {"text": "I could not do it."},
        ],
    )
    events = await run(session, "go")
    results = [e for e in events if isinstance(e, ToolFinished)]
    assert [r.is_error for r in results] == [True, True, True]
    assert "no_such_tool" in results[1].output
    assert events[-1].stop_reason == "end_turn"
    assert check(session.engine.messages) == []


async def test_headless_ask_mode_denies_bash_and_says_so(workspace):
    session = make_session(
        workspace,
        [
            {"tool_calls": [{"name": "bash", "input": {"command": "touch created.txt"}}]},
            {"text": "ok"},
        ],
        mode="ask",
    )
    events = await run(session, "go")
    denied = [e for e in events if isinstance(e, PermissionDenied)]
    assert len(denied) == 1 and "touch" in denied[0].target
    assert not (workspace / "created.txt").exists()
    result = session.engine.messages[-2].blocks[0]
    assert result.is_error and "Permission denied" in result.text


async def test_interactive_permission_waits_for_the_answer(workspace):
    session = make_session(
        workspace,
        [
            {"tool_calls": [{"name": "bash", "input": {"command": "touch created.txt"}}]},
            {"tool_calls": [{"name": "bash", "input": {"command": "touch second.txt"}}]},
            {"text": "ok"},
        ],
        mode="ask",
        interactive=True,
    )
    answers = iter(["allow_once", "deny"])

    async def answer(event):
        if isinstance(event, PermissionRequest):
            if "created" in event.target:
                assert not (workspace / "created.txt").exists()  # nothing runs before the answer
            event.future.set_result(next(answers))

    events = await run(session, "go", answer)
    assert (workspace / "created.txt").exists()
    assert not (workspace / "second.txt").exists()
    assert sum(isinstance(e, PermissionRequest) for e in events) == 2


async def test_max_turns_stops_the_loop(workspace):
    loop_forever = [{"tool_calls": [{"name": "ls", "input": {}}]}] * 10
    session = make_session(workspace, loop_forever, max_turns=3)
    events = await run(session, "go")
    assert events[-1].stop_reason == "max_turns" and events[-1].is_error  # a cut-short task is no success
    assert len(session.provider.requests) == 3
    assert check(session.engine.messages) == []


async def test_no_cap_by_default(workspace):
    """Real sessions run longer than any fixed cap: 0 (the default) lets a 150-step task finish."""
    steps = [{"tool_calls": [{"name": "ls", "input": {}}]}] * 150 + [{"text": "done after 150 steps"}]
    session = make_session(workspace, steps)
    events = await run(session, "go")
    assert events[-1].stop_reason == "end_turn" and not events[-1].is_error
    assert len(session.provider.requests) == 151


async def test_interrupt_during_a_tool_closes_the_pair(workspace):
    session = make_session(
        workspace,
        [
            {"tool_calls": [{"name": "bash", "input": {"command": "sleep 30"}}, {"name": "ls", "input": {}}]},
        ],
    )

    async def stop(event):
        if isinstance(event, ToolStarted):
            await asyncio.sleep(0.2)
            session.interrupt()

    events = await run(session, "go", stop)
    assert events[-1].stop_reason == "interrupted"
    results = session.engine.messages[-1].tool_results()
    assert len(results) == 2 and all("interrupted" in r.text for r in results)
    assert check(session.engine.messages) == []
    # the session goes on: the next prompt is answered and the conversation stays valid
    with_provider(session, [{"text": "back"}])
    events = await run(session, "continue")
    assert events[-1].result == "back"
    assert check(session.engine.messages) == []


async def test_interrupt_mid_stream_keeps_the_words_and_stays_valid(workspace):
    session = make_session(workspace, [{"text": "word " * 400}])
    session.provider.chunk_delay = 0.005
    seen = 0

    async def stop(event):
        nonlocal seen
        if event.kind == "text_delta":
            seen += 1
            if seen == 5:
                session.interrupt()

    events = await run(session, "go", stop)
    assert events[-1].stop_reason == "interrupted"
    last = session.engine.messages[-1]
    assert last.role == "assistant" and "[response interrupted]" in last.text
    assert check(session.engine.messages) == []


async def test_a_provider_error_ends_the_turn_and_the_next_one_works(workspace):
    session = make_session(
        workspace,
        [
            {"error": {"kind": "auth", "message": "invalid x-api-key", "status": 401}},
            {"text": "hello again"},
        ],
    )
    events = await run(session, "first")
    assert events[-1].is_error
    error = next(e for e in events if e.kind == "error")
    assert "ANTHROPIC_API_KEY" in error.hint
    events = await run(session, "second")
    assert events[-1].result == "hello again"
    assert check(session.engine.messages) == []


async def test_slash_commands_run_at_the_loop_level(workspace):
    session = make_session(workspace, FIX_TASK)
    await run(session, "fix add()")
    events = await run(session, "/context")
    result = next(e for e in events if e.kind == "command")
    for key in ("system", "tools", "messages", "tool_results", "free", "reserved"):
        assert key in result.data
    events = await run(session, "/nonsense")
    result = next(e for e in events if e.kind == "command")
    assert result.is_error and "/help" in result.text
    events = await run(session, "/cost")
    assert "Cost so far" in next(e for e in events if e.kind == "command").text


def wordy(task: list[dict]) -> list[dict]:
    """The same task with long explanations: enough for a compaction to make the context smaller
    (a /compact that would not shrink it is refused)."""
    return [{**step, "text": step.get("text", "") + " Thinking it through." * 300} for step in task[:-1]] + [
        task[-1]
    ]


async def test_compact_with_a_focus_calls_the_summarizer_and_summary_writes_the_note(workspace):
    session = make_session(
        workspace, wordy(FIX_TASK), summaries=["## Goal\nFix add().\n## Current state\nDone."]
    )
    await run(session, "fix add()")
    events = await run(session, "/compact keep the edit")
    compacted = [e for e in events if e.kind == "compaction"]
    assert compacted and compacted[0].tier == "T4" and compacted[0].trigger == "manual"
    assert "Fix add()." in compacted[0].summary
    sent = json.dumps(session.provider.completions[-1].to_api())
    assert "keep the edit" in sent  # the focus steers the summary
    assert check(session.engine.messages) == []
    # the view after compaction still answers the next prompt with everything valid
    with_provider(session, [{"text": "still fine"}])
    assert (await run(session, "and now?"))[-1].result == "still fine"
    events = await run(session, "/summary")
    note = next(e for e in events if e.kind == "command")
    assert not note.is_error and note.text.strip()
    assert (workspace / ".session_memory.md").read_text().strip() == note.text.strip()


async def test_after_a_compaction_the_todo_list_and_recent_files_are_reattached(workspace):
    todo = {
        "name": "todo_write",
        "input": {
            "todos": [
                {"content": "fix add", "status": "completed"},
                {"content": "add a test", "status": "pending"},
            ]
        },
    }
    session = make_session(workspace, wordy([{"tool_calls": [todo]}, *FIX_TASK]))
    await run(session, "fix add() and plan a test")
    await run(session, "/compact")
    pinned = [b.text for m in session.engine.messages for b in m.blocks if b.meta.tag == "reattach"]
    assert any("<todo-list>" in t and "[ ] add a test" in t for t in pinned), pinned
    files = [t for t in pinned if t.startswith('<file path="app.py"')]
    assert files and "return a + b" in files[0]  # the file as it is now, not as it was read
    assert check(session.engine.messages) == []


async def test_a_touched_file_that_became_a_link_outside_is_not_reattached(workspace):
    """A checkout can turn a file the session read into a link to a key; re-attaching it after a
    compaction would read the key without the question a read outside the workspace asks."""
    secret = workspace.parent / "id_rsa"
    secret.write_text("PRIVATE-KEY-1234\n")
    session = make_session(workspace, wordy(FIX_TASK))
    await run(session, "fix add()")
    (workspace / "app.py").unlink()
    (workspace / "app.py").symlink_to(secret)
    await run(session, "/compact")
    pinned = [b.text for m in session.engine.messages for b in m.blocks if b.meta.tag == "reattach"]
    assert not any("PRIVATE-KEY" in t for t in pinned), pinned
    assert check(session.engine.messages) == []
