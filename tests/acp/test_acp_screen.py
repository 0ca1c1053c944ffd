"""`agent acp`'s screening of the client's lines (acp/main.py `screen`), in this process: what is no
JSON-RPC message is answered there with its error, the rest passes to the SDK unchanged, and
`session/cancel` sent as a request is passed on as the notification it is and answered null."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_cli.acp.main import screen


class Wire:
    """What `screen` writes back to the client (an asyncio.StreamWriter's two methods)."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.splitlines()]


async def screened(*lines: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(what reached the SDK, what the client was answered) for `lines`."""
    source, sink, wire = asyncio.StreamReader(), asyncio.StreamReader(), Wire()
    for line in lines:
        source.feed_data(line.encode() + b"\n")
    source.feed_eof()
    await screen(source, sink, wire)  # type: ignore[arg-type]
    passed = [json.loads(line) for line in (await sink.read()).splitlines()]
    return passed, wire.messages()


@pytest.mark.parametrize(
    ("line", "answered_id"),
    [
        ('{"jsonrpc":"2.0","id":2}', 2),  # neither a method nor a result: the id is valid
        ('{"jsonrpc":"2.0"}', None),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"session/new","params":{}}', None),
        ('{"jsonrpc":"2.0","id":[1],"method":"initialize"}', None),
        ('{"jsonrpc":"2.0","id":true,"method":"initialize"}', None),
        ('{"jsonrpc":"2.0","id":"x","method":5}', "x"),
        ('{"jsonrpc":"2.0","result":{}}', None),  # a response to nothing: no id
    ],
)
async def test_what_is_no_json_rpc_message_gets_invalid_request(line: str, answered_id: Any) -> None:
    passed, answered = await screened(line)
    assert passed == []
    (error,) = answered
    assert error["id"] == answered_id and error["error"]["code"] == -32600, error


async def test_requests_notifications_and_responses_pass_unchanged() -> None:
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        '{"jsonrpc":"2.0","id":"a","method":"session/new","params":{}}',
        '{"jsonrpc":"2.0","id":null,"method":"session/new"}',
        '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}',
        '{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}',
        '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"no"}}',
    ]
    passed, answered = await screened(*lines)
    assert passed == [json.loads(line) for line in lines] and answered == []


async def test_session_cancel_sent_as_a_request_cancels_and_is_answered_null() -> None:
    passed, answered = await screened(
        '{"jsonrpc":"2.0","id":7,"method":"session/cancel","params":{"sessionId":"s"}}'
    )
    assert passed == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}]
    assert answered == [{"jsonrpc": "2.0", "id": 7, "result": None}]


@pytest.mark.parametrize(
    ("line", "answered_id"),
    [
        ('{"id":1,"method":"initialize","params":{"protocolVersion":1}}', 1),
        ('{"jsonrpc":"1.0","id":"a","method":"session/new","params":{}}', "a"),
        ('{"jsonrpc":2.0,"id":3,"method":"session/prompt","params":{}}', 3),
        ('{"jsonrpc":null,"id":null,"method":"session/new"}', None),
    ],
)
async def test_a_request_that_is_not_json_rpc_2_0_gets_invalid_request(line: str, answered_id: Any) -> None:
    passed, answered = await screened(line)
    assert passed == []
    (error,) = answered
    assert error["id"] == answered_id and error["error"]["code"] == -32600, error
    assert "jsonrpc" in error["error"]["data"]


async def test_a_notification_that_is_not_json_rpc_2_0_is_dropped_with_a_line_on_stderr(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Not acted on (a cancel the client did not send as JSON-RPC 2.0 cancels nothing) and not
    answered (a notification never is); the next message still passes."""
    good = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
    passed, answered = await screened(
        '{"method":"session/cancel","params":{"sessionId":"s"}}',
        '{"jsonrpc":"1.0","method":"session/cancel","params":{"sessionId":"s"}}',
        good,
    )
    assert passed == [json.loads(good)] and answered == []
    dropped = [r.getMessage() for r in caplog.records if "jsonrpc" in r.getMessage()]
    assert len(dropped) == 2 and all("session/cancel" in line for line in dropped)
