"""The fake Messages API itself: validation, auth, SSE shape, scripting, cache simulation."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.fakeapi import (
    FakeAnthropic,
    Stall,
    StreamError,
    Thinking,
    ToolUse,
    rate_limited,
    reply,
    text,
    tool_call,
)
from tests.fakeapi.http_base import load_script
from tests.fakeapi.replies import reply_from_json

HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "k"}


def post(server: FakeAnthropic, body: Any, path: str = "/v1/messages", headers: dict[str, str] | None = None):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, headers=headers or HEADERS, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "messages": messages, **extra}


def user(*content: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content)}


def t(value: str, cache: bool = False, ttl: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": value}
    if cache:
        block["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return block


def use(id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": "read_file", "input": {"path": "a.py"}}


def result(id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": "print(1)"}


def error_of(status_body: tuple[int, dict, str]) -> tuple[int, str, str]:
    status, _, raw = status_body
    payload = json.loads(raw)
    return status, payload["error"]["type"], payload["error"]["message"]


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


# -- validation --------------------------------------------------------------------------------------


def test_valid_tool_round_trip_is_accepted(fake_anthropic):
    messages = [user(t("go")), assistant(t("reading"), use("toolu_1")), user(result("toolu_1"), t("and?"))]
    assert post(fake_anthropic, body(messages))[0] == 200


def test_orphan_tool_result_is_rejected(fake_anthropic):
    messages = [user(t("go")), assistant(use("toolu_1")), user(result("toolu_1"))]
    messages += [assistant(t("done")), user(result("toolu_1"))]
    status, kind, message = error_of(post(fake_anthropic, body(messages)))
    assert (status, kind) == (400, "invalid_request_error")
    assert "toolu_1" in message and "messages.4" in message


def test_tool_use_without_result_in_next_message_is_rejected(fake_anthropic):
    messages = [user(t("go")), assistant(use("toolu_1"), use("toolu_2")), user(result("toolu_1"))]
    status, kind, message = error_of(post(fake_anthropic, body(messages)))
    assert (status, kind) == (400, "invalid_request_error")
    assert "without `tool_result`" in message and "toolu_2" in message


def test_tool_result_after_text_is_rejected(fake_anthropic):
    messages = [user(t("go")), assistant(use("toolu_1")), user(t("note"), result("toolu_1"))]
    status, _, message = error_of(post(fake_anthropic, body(messages)))
    assert status == 400 and "must come before" in message


def test_more_than_four_cache_control_blocks_is_rejected(fake_anthropic):
    system = [t("a", cache=True), t("b", cache=True)]
    tools = [{"name": "x", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}]
    messages = [user(t("c", cache=True)), assistant(t("d")), user(t("e", cache=True))]
    status, kind, message = error_of(post(fake_anthropic, body(messages, system=system, tools=tools)))
    assert (status, kind) == (400, "invalid_request_error")
    assert message == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    messages[2] = user(t("e"))
    assert post(fake_anthropic, body(messages, system=system, tools=tools))[0] == 200


@pytest.mark.parametrize(
    ("request_body", "needle"),
    [
        (body([user(t(""))]), "text content blocks must be non-empty"),
        (body([user(t("hi"))], system=[t("")]), "system.0.text"),
        (body([assistant(t("hi"))]), 'first message must use the "user" role'),
        (body([user(t("a")), user(t("b"))]), "roles must alternate"),
        ({"max_tokens": 10, "messages": [user(t("a"))]}, "model: Field required"),
        ({"model": "m", "messages": [user(t("a"))]}, "max_tokens: Field required"),
        (body([]), "at least one message"),
        (body([{"role": "user", "content": ""}]), "non-empty content"),
    ],
)
def test_malformed_requests_are_rejected(fake_anthropic, request_body, needle):
    status, kind, message = error_of(post(fake_anthropic, request_body))
    assert (status, kind) == (400, "invalid_request_error")
    assert needle in message


def test_a_rejected_request_does_not_consume_the_queue(fake_anthropic):
    fake_anthropic.push(text("kept"))
    assert post(fake_anthropic, body([user(t(""))]))[0] == 400
    status, _, raw = post(fake_anthropic, body([user(t("hi"))]))
    assert status == 200 and json.loads(raw)["content"][0]["text"] == "kept"


def test_missing_version_header_and_bad_json(fake_anthropic):
    headers = {"content-type": "application/json"}
    assert error_of(post(fake_anthropic, body([user(t("a"))]), headers=headers))[2].startswith(
        "anthropic-version"
    )
    assert error_of(post(fake_anthropic, b"{not json"))[0] == 400


def test_required_key():
    with FakeAnthropic(require_key="sk-right") as server:
        status, kind, _ = error_of(
            post(server, body([user(t("a"))]), headers={**HEADERS, "x-api-key": "wrong"})
        )
        assert (status, kind) == (401, "authentication_error")
        assert post(server, body([user(t("a"))]), headers={**HEADERS, "x-api-key": "sk-right"})[0] == 200
        assert [h["x-api-key"] for h in server.headers] == ["wrong", "sk-right"]


# -- replies -----------------------------------------------------------------------------------------


def test_empty_queue_answers_ok_and_requests_are_recorded(fake_anthropic):
    status, _, raw = post(fake_anthropic, body([user(t("hello"))]))
    message = json.loads(raw)
    assert status == 200 and message["content"] == [{"type": "text", "text": "ok"}]
    assert message["stop_reason"] == "end_turn" and message["role"] == "assistant"
    assert fake_anthropic.requests[0]["messages"][0]["content"][0]["text"] == "hello"


def test_stream_has_the_real_event_sequence(fake_anthropic):
    fake_anthropic.push(
        reply(Thinking("think hard"), "answer text", ToolUse("grep", {"pattern": "x" * 30}), chunk_chars=5)
    )
    status, headers, raw = post(fake_anthropic, body([user(t("q"))], stream=True))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = sse_events(raw)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    usage = events[0][1]["message"]["usage"]
    assert {"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"} <= set(usage)
    starts = [data["content_block"]["type"] for name, data in events if name == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert "".join(d["text"] for d in deltas if d["type"] == "text_delta") == "answer text"
    json_parts = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert len(json_parts) > 3 and json.loads("".join(json_parts)) == {"pattern": "x" * 30}
    assert any(d["type"] == "signature_delta" for d in deltas)
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use" and events[-2][1]["usage"]["output_tokens"] > 0


def test_fault_with_headers(fake_anthropic):
    fake_anthropic.push(rate_limited(retry_after=7))
    status, headers, raw = post(fake_anthropic, body([user(t("q"))]))
    assert status == 429 and headers["retry-after"] == "7"
    assert json.loads(raw)["error"]["type"] == "rate_limit_error"


def test_stream_error_event_mid_stream(fake_anthropic):
    fake_anthropic.push(StreamError("overloaded_error", "Overloaded", after_blocks=1, reply=reply("a", "b")))
    events = sse_events(post(fake_anthropic, body([user(t("q"))], stream=True))[2])
    names = [name for name, _ in events]
    assert names[-1] == "error" and names.count("content_block_start") == 1
    assert events[-1][1]["error"]["type"] == "overloaded_error"


def test_max_prompt_tokens_and_count_tokens():
    with FakeAnthropic(max_prompt_tokens=50) as server:
        small = body([user(t("hi"))])
        status, _, raw = post(server, small, path="/v1/messages/count_tokens")
        assert status == 200 and 0 < json.loads(raw)["input_tokens"] < 50
        status, _, message = error_of(post(server, body([user(t("x" * 400))])))
        assert status == 400 and "prompt is too long:" in message and "> 50 maximum" in message
        assert len(server.count_requests) == 1 and len(server.requests) == 1


def test_stall_waits_for_release(fake_anthropic):
    import threading

    fake_anthropic.push(Stall(after_blocks=1, reply=reply("first", "second")))
    out: list[Any] = []
    worker = threading.Thread(
        target=lambda: out.append(post(fake_anthropic, body([user(t("q"))], stream=True)))
    )
    worker.start()
    worker.join(0.3)
    assert worker.is_alive()  # held mid-stream
    fake_anthropic.release()
    worker.join(10)
    events = sse_events(out[0][2])
    assert [e[0] for e in events].count("content_block_start") == 2 and events[-1][0] == "message_stop"


def test_script_entries_and_files(tmp_path: Path):
    assert reply_from_json("hi") == text("hi")
    call = reply_from_json({"tool_calls": [{"name": "bash", "input": {"command": "ls"}}], "text": "look"})
    assert call.effective_stop_reason == "tool_use" and call.blocks[0].text == "look"
    fault = reply_from_json({"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded"}})
    assert fault.status == 529
    assert reply_from_json({"stream_error": {"after_blocks": 1}, "text": "x"}).after_blocks == 1
    script = tmp_path / "s.yaml"
    script.write_text("- hello\n- tool_calls: [{name: ls, input: {path: .}}]\n")
    assert load_script(script) == [text("hello"), tool_call("ls", {"path": "."})]
    script.write_text("- {nothing: here}\n")
    with pytest.raises(SystemExit, match="needs text"):
        load_script(script)


# -- prompt-cache simulation -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def usage_of(server: FakeAnthropic, request_body: dict[str, Any]) -> dict[str, int]:
    status, _, raw = post(server, request_body)
    assert status == 200, raw
    return json.loads(raw)["usage"]


def conversation(turns: int, system: str = "S" * 400, ttl: str | None = None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [user(t("task " * 50))]
    for i in range(turns):
        messages += [assistant(t(f"answer {i} " * 20)), user(t(f"follow-up {i} " * 20))]
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return body(messages, system=[t(system, cache=True)])


def test_cache_write_then_read_then_expiry():
    clock = Clock()
    with FakeAnthropic(clock=clock) as server:
        first = usage_of(server, conversation(1))
        assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 0
        second = usage_of(server, conversation(2))  # the previous request's prefix is read back
        assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
        assert second["cache_creation_input_tokens"] > 0
        total = sum(
            second[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        assert total >= second["cache_read_input_tokens"] + second["cache_creation_input_tokens"]
        clock.now += 301  # past the 5-minute ttl
        third = usage_of(server, conversation(2))
        assert third["cache_read_input_tokens"] == 0


def test_one_hour_ttl_survives_five_minutes_and_system_change_invalidates():
    clock = Clock()
    with FakeAnthropic(clock=clock) as server:
        usage_of(server, conversation(1, ttl="1h"))
        clock.now += 600
        assert usage_of(server, conversation(1, ttl="1h"))["cache_read_input_tokens"] > 0
        changed = usage_of(server, conversation(1, system="T" * 400, ttl="1h"))
        assert changed["cache_read_input_tokens"] == 0


def test_cache_min_tokens():
    with FakeAnthropic(cache_min_tokens=10_000) as server:
        assert usage_of(server, conversation(1))["cache_creation_input_tokens"] == 0
        assert usage_of(server, conversation(1))["cache_read_input_tokens"] == 0
