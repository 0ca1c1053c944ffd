"""Sub-agents end to end: `agent -p` against the local Messages API server, the real client over loopback.

Each child's conversation starts with its own prompt, so the server routes its replies by a marker in
that prompt (FakeAnthropic.route) and a test can tell the parent's requests from each child's.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from tests.e2e import AGENT, anthropic_env
from tests.fakeapi.replies import Fault, Reply, Stall, ToolUse, text, tool_call
from tests.fakeapi.server import FakeAnthropic

PARENT = "PARENT-TASK"
FILE_ONLY = "MAUVE-LINE-7"  # in the file, never in the child's answer


def _command(prompt: str) -> list[str]:
    return [*AGENT, "-p", prompt, "--output-format", "json"]


def agent(workspace: Path, server: FakeAnthropic, prompt: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        _command(prompt),
        cwd=workspace,
        env=anthropic_env(workspace, server),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _task(marker: str, kind: str = "explore", id: str = "") -> ToolUse:
    return ToolUse(
        "task",
        {"description": f"look {marker}", "prompt": f"{marker}: find the code", "subagent_type": kind},
        id,
    )


def _tool_results(body: dict) -> list[dict]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def _result_text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_a_child_reads_the_file_and_only_its_answer_reaches_the_parent(workspace, fake_anthropic):
    server = fake_anthropic
    (workspace / "notes.txt").write_text(f"The code is ZEBRA-42.\nThe colour is {FILE_ONLY}.\n")
    server.push(Reply((_task("CHILD-A"),)), text("The code is ZEBRA-42."))
    server.route(
        "CHILD-A",
        tool_call("read_file", {"path": "notes.txt"}),
        text("The code is ZEBRA-42 (notes.txt:1)."),
    )
    out = agent(workspace, server, PARENT)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "The code is ZEBRA-42."

    child = server.conversations("CHILD-A")
    parent = server.conversations(PARENT)
    assert len(child) == 2 and len(parent) == 2
    assert FILE_ONLY in json.dumps(child[-1])  # the child read the file
    assert all(FILE_ONLY not in json.dumps(body) for body in parent)  # the parent never saw it
    # the explore agent is read-only; the parent has every tool, task included
    assert sorted(t["name"] for t in child[0]["tools"]) == ["glob", "grep", "ls", "read_file", "recall"]
    assert "task" in [t["name"] for t in parent[0]["tools"]]

    [result] = _tool_results(parent[1])
    answer = _result_text(result)
    assert answer.startswith("The code is ZEBRA-42 (notes.txt:1).") and not result.get("is_error")
    log_path = answer.split("log: ", 1)[1].split(";", 1)[0]
    events = [json.loads(line) for line in (workspace / log_path).read_text().splitlines()]
    assert log_path.startswith(f".agent/sessions/{data['session_id']}/subagents/explore-")
    assert any(e["type"] == "tool_results" and FILE_ONLY in json.dumps(e) for e in events)
    # the child's spending is the session's too
    parent_log = workspace / ".agent" / "sessions" / data["session_id"] / "events.jsonl"
    parent_events = [json.loads(line) for line in parent_log.read_text().splitlines()]
    [spent] = [e for e in parent_events if e["type"] == "subagent_usage"]
    own = sum(e["usage"]["output_tokens"] for e in parent_events if e["type"] == "assistant")
    assert spent["usage"]["output_tokens"] > 0
    assert data["usage"]["output_tokens"] == own + spent["usage"]["output_tokens"]


def test_two_task_calls_in_one_response_run_at_the_same_time(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(Reply((_task("CHILD-A", id="toolu_a"), _task("CHILD-B", id="toolu_b"))), text("both done"))
    # each child's first answer waits until the test lets it go: both must have asked by then
    server.route("CHILD-A", Stall(0, text("alpha found")))
    server.route("CHILD-B", Stall(0, text("beta found")))
    process = subprocess.Popen(
        _command(PARENT),
        cwd=workspace,
        env=anthropic_env(workspace, server),
        stdin=subprocess.DEVNULL,  # -p reads a piped stdin: never the test's own
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        both = threading.Event()

        def watch() -> None:
            while process.poll() is None and not both.is_set():
                if server.conversations("CHILD-A") and server.conversations("CHILD-B"):
                    both.set()
                threading.Event().wait(0.02)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        watcher.join(timeout=120)
        assert both.is_set(), "the second child never asked while the first was still waiting"
        server.release(2)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert json.loads(stdout)["result"] == "both done"
    results = _tool_results(server.conversations(PARENT)[-1])
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b"]  # in the order of the calls
    assert _result_text(results[0]).startswith("alpha found")
    assert _result_text(results[1]).startswith("beta found")


def test_a_failing_child_gives_the_parent_a_clear_error_result(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(Reply((_task("CHILD-A"),)), text("The search failed; I will look myself."))
    server.route("CHILD-A", Fault(400, "invalid_request_error", "the child's request was refused"))
    out = agent(workspace, server, PARENT)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "The search failed; I will look myself."
    [result] = _tool_results(server.conversations(PARENT)[-1])
    assert result.get("is_error") is True
    text_ = _result_text(result)
    assert "sub-agent explore failed" in text_ and "the child's request was refused" in text_
    assert any("sub-agent explore" in w for w in data["warnings"])  # the person is told too
