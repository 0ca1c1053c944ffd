"""What a client gets wrong: each bad request gets its JSON-RPC error (a line that is not JSON, or
JSON that is not a request object, gets one with a null id, and one line on stderr) and the agent
stays up to answer the next one. Raw lines are written here, because the SDK's client side cannot
send them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.acp.harness import AGENT, WAIT
from tests.e2e import anthropic_env
from tests.fakeapi.replies import text
from tests.fakeapi.server import FakeAnthropic


class Raw:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (notifications on the way are passed over)."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), WAIT)
            assert line, "the agent closed its stdout"
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    async def refusal(self) -> dict[str, Any]:
        """The next error answered with a null id (a line the agent could not take as a request)."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), WAIT)
            assert line, "the agent closed its stdout"
            message = json.loads(line)
            if "id" in message and message["id"] is None and "error" in message:
                return message

    async def call(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        await self.send(json.dumps(body))
        return await self.answer(request_id)


async def test_unknown_methods_and_malformed_requests_get_errors_and_the_agent_stays_up(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    stderr = workspace.parent / "stderr.txt"
    with stderr.open("wb") as err:
        process = await asyncio.create_subprocess_exec(
            *AGENT,
            cwd=workspace,
            env=anthropic_env(workspace, fake_anthropic),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    raw = Raw(process)
    try:
        init = await raw.call(1, "initialize", {"protocolVersion": 1})
        assert init["result"]["agentCapabilities"]["loadSession"] is True

        unknown = await raw.call(2, "session/frobnicate", {"sessionId": "x"})
        assert unknown["error"]["code"] == -32601  # method not found
        no_params = await raw.call(3, "session/new", {"cwd": 5})
        assert no_params["error"]["code"] == -32602  # invalid params
        relative = await raw.call(4, "session/new", {"cwd": "repo", "mcpServers": []})
        assert relative["error"]["code"] == -32602 and "absolute" in relative["error"]["data"]["message"]
        await raw.send("this is not json {")
        parse = await raw.refusal()
        assert parse["error"]["code"] == -32700 and "not JSON" in parse["error"]["data"]
        await raw.send("[1, 2]")  # JSON, but no request: the SDK alone would end the connection
        assert (await raw.refusal())["error"]["code"] == -32600
        await raw.send("5")
        assert (await raw.refusal())["error"]["code"] == -32600
        # not JSON-RPC 2.0: a request is refused with its id, a notification dropped; no session opens
        await raw.send(json.dumps({"id": 10, "method": "session/new", "params": {"cwd": str(workspace)}}))
        assert (await raw.answer(10))["error"]["code"] == -32600
        await raw.send(
            json.dumps({"jsonrpc": "1.0", "method": "session/cancel", "params": {"sessionId": "x"}})
        )
        no_session = await raw.call(
            5, "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert no_session["error"]["code"] == -32602 and "nope" in no_session["error"]["data"]["message"]
        no_such = await raw.call(
            6, "session/load", {"sessionId": "0000", "cwd": str(workspace), "mcpServers": []}
        )
        assert no_such["error"]["code"] == -32602

        # still up: a real session opens and answers
        opened = await raw.call(7, "session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = opened["result"]["sessionId"]
        empty = await raw.call(8, "session/prompt", {"sessionId": session_id, "prompt": []})
        assert empty["error"]["code"] == -32602 and "empty" in empty["error"]["data"]["message"]
        asked = await raw.call(
            9, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert asked["result"]["stopReason"] == "end_turn"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), WAIT)
    assert code == 0
    said = stderr.read_text().splitlines()
    assert said == [line for line in said if line.startswith("agent acp: ")]  # one line each, no traceback
    assert any("not JSON" in line for line in said) and any("not an object" in line for line in said), said
    assert any("dropped a 'session/cancel' notification" in line for line in said), said


async def test_a_client_that_declares_compaction_gets_compaction_updates(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The draft `compaction_update` (not in the SDK's types): only a raw client can declare it."""
    process = await asyncio.create_subprocess_exec(
        *AGENT,
        cwd=workspace,
        env=anthropic_env(workspace, fake_anthropic),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    raw = Raw(process)
    seen: list[dict[str, Any]] = []
    try:
        caps = {"session": {"compaction": {}}}
        await raw.call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        opened = await raw.call(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        session_id = opened["result"]["sessionId"]
        long = "Here is a long answer. " * 600  # enough for a summary to be smaller
        fake_anthropic.push(text(long), text(long), text("## Goal\nTalk.\n## Current state\nDone."))
        for request_id, words in ((3, "first"), (4, "second"), (5, "/compact")):
            prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": words}]}
            await raw.send(
                json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": prompt})
            )
            while True:  # the notifications up to the prompt's answer
                message = json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT))
                if message.get("id") == request_id:
                    break
                seen.append(message.get("params", {}).get("update", {}))
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), WAIT)
    kinds = [update.get("sessionUpdate") for update in seen]
    assert "compaction_update" in kinds, kinds
    (compaction,) = [u for u in seen if u.get("sessionUpdate") == "compaction_update"]
    assert compaction["status"] == "completed" and compaction["compactionId"]
    assert not any("context compacted" in json.dumps(u) for u in seen)  # not also said as a message
