"""End to end as a person runs it: `agent -p --provider openai` against a local server speaking
OpenAI's chat-completions API (tests/fakeapi/openai_server.py), over loopback with the real `openai`
client. The server validates every request (tool messages answer the previous assistant's calls)."""

from __future__ import annotations

import json

from tests.e2e import READ_ALL, big_files, openai_agent, script_reads, user_config
from tests.fakeapi.openai_server import FakeOpenAI
from tests.fakeapi.replies import ToolUse, rate_limited, reply, server_error, text, tool_call

UNKNOWN = "is not in the model registry"


def test_read_edit_bash_task_runs_to_the_end_with_usage(workspace, fake_openai):
    server = fake_openai
    server.push(
        tool_call("read_file", {"path": "app.py"}, say="Let me look."),
        tool_call("edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}),
        reply(
            ToolUse("bash", {"command": "python3 -c 'import app; print(app.add(2, 3))'"}),
            ToolUse("read_file", {"path": "app.py"}),
        ),  # two calls in one response, streamed interleaved
        text("Fixed add(): 2 + 3 is 5 now."),
    )
    out = openai_agent(workspace, server, "-p", "fix add", "--model", "qwen3-coder", "--permission-mode", "yolo",
                "--output-format", "json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "Fixed add(): 2 + 3 is 5 now." and data["is_error"] is False
    assert data["num_turns"] == 4
    assert "a + b" in (workspace / "app.py").read_text()
    assert set(server.statuses) == {200}, server.statuses  # every request valid, tool pairs included
    usage = data["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["cache_read_input_tokens"] > 0
    assert data["total_cost_usd"] > 0
    tool_messages = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("5" == m["content"].strip().splitlines()[0] for m in tool_messages), tool_messages
    assert all(r["model"] == "qwen3-coder" for r in server.requests)
    assert out.stderr.count(UNKNOWN) == 1 and '[models."qwen3-coder"]' in out.stderr


def test_a_configured_model_has_its_window_and_no_warning(workspace, fake_openai):
    """The person's own config gives the prices of a model the registry does not know; the
    workspace's may give its window and output limit, not its prices (settings/layers.py)."""
    user_config(workspace, '[models."qwen3-coder"]\ninput_price = 0\noutput_price = 0\n')
    cfg = workspace / ".agent" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[models."qwen3-coder"]\nwindow = 65_536\nmax_output = 8_192\ninput_price = 9.0\n')
    fake_openai.push(text("hi"))
    out = openai_agent(
        workspace, fake_openai, "-p", "hello", "--model", "qwen3-coder", "--output-format", "json"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert UNKNOWN not in out.stderr
    assert data["context"]["budget"] < 65_536 and data["total_cost_usd"] == 0
    assert ".agent/config.toml: ignored keys models.qwen3-coder.input_price (" in out.stderr
    assert fake_openai.requests[-1]["max_tokens"] <= 8_192


def test_429_and_500_are_retried_and_the_task_continues(workspace, fake_openai):
    server = fake_openai
    server.push(
        rate_limited(retry_after=0.05),
        tool_call("read_file", {"path": "README.md"}),
        server_error(502),
        text("The README is a title."),
    )
    out = openai_agent(
        workspace, server, "-p", "what is in README?", "--model", "gpt-5", "--output-format", "json"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "The README is a title." and data["num_turns"] == 2
    assert server.statuses.count(429) == 1 and server.statuses.count(502) == 1
    assert UNKNOWN not in out.stderr  # gpt-5 is in the registry
    log = workspace / ".agent" / "sessions" / data["session_id"] / "events.jsonl"
    assert log.read_text().count('"type":"retry"') == 2


def test_a_context_length_error_is_recovered_by_t5(workspace):
    names = big_files(workspace, 6, 20_000)
    with FakeOpenAI(max_prompt_tokens=14_000, separate_summaries=True) as server:
        script_reads(server, names)
        out = openai_agent(workspace, server, *READ_ALL, "--model", "gpt-4o")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["result"] == "Done reading." and not data["is_error"]
    assert 400 in server.statuses  # the server's window was hit ...
    assert any(c["tier"] == "T5" for c in data["compactions"])  # ... and T5 made room
    assert server.statuses[-1] == 200


def test_a_bad_key_exits_non_zero_naming_the_variable(workspace):
    with FakeOpenAI(require_key="sk-right") as server:
        out = openai_agent(
            workspace, server, "-p", "hi", "--model", "gpt-5", "--output-format", "json", key="sk-wrong"
        )
        assert server.statuses == [401]  # not retried
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["is_error"] is True and "OPENAI_API_KEY" in out.stderr + json.dumps(data)
