"""End to end as a person runs it: `agent -p` against a local server speaking the Messages API.

The real `anthropic` client goes over loopback; the server validates every request as the API does
(tool pairs, alternation, empty blocks, at most 4 cache breakpoints) and injects 429 / 529.
"""

from __future__ import annotations

import json

from tests.e2e import agent
from tests.fakeapi.replies import overloaded, rate_limited, text, tool_call
from tests.fakeapi.server import FakeAnthropic


def test_a_multi_step_task_survives_429_and_529_and_continues(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(
        tool_call("bash", {"command": "python3 -c 'import app; print(app.add(2, 3))'"}, say="Running it."),
        rate_limited(retry_after=0.05),
        tool_call("read_file", {"path": "app.py"}),
        overloaded(headers={"retry-after": "0.05"}),
        tool_call("edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}),
        text("Fixed add(): it subtracted."),
    )
    out = agent(workspace, server, "-p", "fix add", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "Fixed add(): it subtracted." and data["is_error"] is False
    assert data["num_turns"] == 4
    assert "a + b" in (workspace / "app.py").read_text()
    assert server.statuses.count(429) == 1 and server.statuses.count(529) == 1
    assert all(s in (200, 429, 529) for s in server.statuses), server.statuses  # no request was invalid
    assert data["usage"]["cache_read_input_tokens"] > 0  # later requests read what earlier ones wrote
    log = workspace / ".agent" / "sessions" / data["session_id"] / "events.jsonl"
    assert log.exists() and '"type":"retry"' in log.read_text()

    server.push(text("We fixed the sign in add()."))
    before = len(server.requests)
    cont = agent(workspace, server, "-p", "what did we change?", "--continue", "--output-format", "json")
    assert cont.returncode == 0, cont.stderr
    assert json.loads(cont.stdout)["session_id"] == data["session_id"]
    sent = json.dumps(server.requests[before]["messages"])
    assert "fix add" in sent and "a + b" in sent and "what did we change?" in sent


def test_an_auth_error_exits_non_zero_with_the_fix(workspace):
    with FakeAnthropic(require_key="sk-ant-right") as server:
        out = agent(workspace, server, "-p", "hi", "--output-format", "json")
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["is_error"] is True and "ANTHROPIC_API_KEY" in out.stderr + json.dumps(data)
