"""`agent -p` on the default model, which thinks by default and binds each thinking block to what
precedes it: with a budget that makes the context engine clear old results, no request is refused
and the API never has to drop a block — the agent leaves out the thinking a clear invalidated, and
keeps the rest."""

from __future__ import annotations

import json

from tests.e2e import READ_ALL, agent, big_files
from tests.fakeapi.replies import Thinking, ToolUse, reply
from tests.fakeapi.server import FakeAnthropic


def _thoughts(body: dict) -> int:
    return sum(
        1
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    )


def test_clears_never_send_back_thinking_bound_to_what_they_changed(workspace):
    with FakeAnthropic(bind_thinking=True, separate_summaries=True) as server:
        names = big_files(workspace, 8, 16_000)  # ~8 x 4k tokens of tool output
        for name in names:
            server.push(reply(Thinking(f"{name} next"), ToolUse("read_file", {"path": name})))
        server.push(reply(Thinking("all read"), "Done reading."))
        out = agent(workspace, server, *READ_ALL, "--budget-tokens", "20000")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["result"] == "Done reading." and not data["is_error"]
        assert data["compactions"], "a 20k budget with ~32k tokens of output must clear"
        assert set(server.statuses) == {200}, server.statuses  # no block refused ...
        assert server.binding is not None and server.binding.dropped == []  # ... nor dropped by the API
        sent = [_thoughts(body) for body in server.requests]
        assert max(sent) >= 2  # thinking still bound to its prefix goes back
        # a clear invalidated some: fewer go back than the requests before had received
        assert any(count < previous + 1 for previous, count in zip(sent, sent[1:], strict=False))
        # and the requests went out as the engine built them: no thinking setting, no beta
        assert all("thinking" not in body for body in server.requests)
        assert all("anthropic-beta" not in h for h in server.headers)
