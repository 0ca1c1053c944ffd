"""A retryable error in the middle of a streamed answer (the API overloaded after the first block), through
the real CLI against the local Messages-API server, on every path a person runs: `-p`, `agent acp`,
`agent batch`. Before any tool call of the answer began, it is tried again: the partial text is not
part of the conversation (logged as discarded, the person told); once a tool call began, it is not,
and the error says truthfully that the partial text stays in the conversation, marked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from tests.acp.harness import WAIT, Editor, connected
from tests.e2e import agent, anthropic_env
from tests.fakeapi.replies import StreamError, ToolUse, reply, text
from tests.fakeapi.server import FakeAnthropic
from tests.test_e2e_batch import batch, make_repo, results, write_tasks

PARTIAL = "PARTIAL first block. "


def cut(*blocks: str | ToolUse, after: int = 1) -> StreamError:
    return StreamError("overloaded_error", "Overloaded", after, reply(*blocks))


def sent(server: FakeAnthropic) -> str:
    return json.dumps(server.requests[-1]["messages"])


def logged(workspace: Path) -> list[dict]:
    (path,) = (workspace / ".agent" / "sessions").glob("*/events.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_overload_mid_answer_is_retried_and_the_partial_text_is_not_kept(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(cut(PARTIAL, "second block"), text("The whole answer."))
    first = agent(workspace, server, "-p", "question one")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "The whole answer.\n"
    assert "API overloaded (the partial answer so far is discarded)" in first.stderr
    (retry,) = [e for e in logged(workspace) if e["type"] == "retry"]
    assert retry["discarded"] == PARTIAL and retry["attempt"] == 1

    server.push(text("ok"))
    second = agent(workspace, server, "-p", "question two", "--continue")
    assert second.returncode == 0, second.stderr
    assert "PARTIAL" not in sent(server) and "The whole answer." in sent(server)


def test_a_cut_once_a_tool_call_began_says_the_partial_text_is_kept(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(cut(PARTIAL, ToolUse("read_file", {"path": "app.py"}), after=2))
    first = agent(workspace, server, "-p", "question one")
    assert first.returncode == 1 and len(server.requests) == 1
    assert "the response was cut off: Overloaded" in first.stderr
    assert "kept in the conversation, marked [response interrupted]" in first.stderr
    assert "unfinished tool call was dropped" in first.stderr and "discarded" not in first.stderr

    server.push(text("ok"))
    second = agent(workspace, server, "-p", "go on", "--continue")
    assert second.returncode == 0, second.stderr
    assert "PARTIAL first block.\\n\\n[response interrupted]" in sent(server)  # as the error said


async def test_acp_tells_the_editor_the_streamed_part_is_void(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(cut(PARTIAL, "second block"), text("The whole answer."))
    editor = Editor()
    async with connected(editor, workspace, anthropic_env(workspace, server)) as (conn, _):
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("question one")]), WAIT
        )
    assert done.stop_reason == "end_turn"
    said = editor.text()
    assert said.index(PARTIAL) < said.index("cut off and is discarded") < said.index("The whole answer.")
    assert "PARTIAL" not in sent(server)


def test_batch_retries_a_task_whose_answer_was_cut(tmp_path, fake_anthropic):
    server = fake_anthropic
    make_repo(tmp_path / "repo")
    server.route("[cut]", cut(PARTIAL, "second block"), text("cut task done"))
    write_tasks(tmp_path / "tasks.jsonl", [{"id": "cut", "prompt": "[cut] x", "repo": "repo"}])
    done = batch(tmp_path, server, "tasks.jsonl", "-o", "out.jsonl", "--workers", "1")
    assert done.returncode == 0, done.stderr
    row = results(tmp_path / "out.jsonl")["cut"]
    assert row["is_error"] is False and row["result"] == "cut task done"
    assert len(server.conversations("[cut]")) == 2
