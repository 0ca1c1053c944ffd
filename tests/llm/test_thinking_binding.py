"""A model with preserved thinking refuses a thinking block whose prefix changed; the context engine
changes old messages by design. The provider sends back only the blocks still bound to what precedes
them — against the fake API, which binds its thinking the way the real one does (tests/fakeapi/binding.py)."""

from __future__ import annotations

import random
from typing import Any

from agent_cli.core.types import Block, BlockMeta, Message, Trust
from agent_cli.llm.anthropic import AnthropicProvider
from agent_cli.llm.base import Request
from agent_cli.llm.thinking_binding import BETA, REQUEST_FIELD, ThinkingBinding
from tests.fakeapi import FakeAnthropic, Thinking, ToolUse, reply, text
from tests.fakeapi.fixtures import Sleeps

TOOLS = [{"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object"}}]
SYSTEM = [{"type": "text", "text": "You are a test."}]


def _built(model: str, messages: list[dict[str, Any]]) -> Request:
    return Request(model=model, system=SYSTEM, messages=messages, tools=TOOLS, max_tokens=1000)


def _api(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": [b.to_api() for b in message.blocks]}


def _result(call: str, content: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": content}]}


def _thoughts(body: dict[str, Any]) -> list[str]:
    return [
        b["thinking"]
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "thinking"
    ]


async def _session(
    model: str, server: FakeAnthropic, built: list[Request] | None = None
) -> list[dict[str, Any]]:
    """Two reads, each answered after a thought; then the first read's result is cleared (what T1
    does) and the session goes on for two more requests. The bodies the server received (and in
    `built`, the requests as the engine would have built them)."""
    provider = AnthropicProvider(
        api_key="sk-ant-test", base_url=server.url, sleep=Sleeps(), rng=random.Random(7), max_retries=0
    )
    built = [] if built is None else built

    def _request(model: str, messages: list[dict[str, Any]]) -> Request:
        built.append(_built(model, list(messages)))
        return built[-1]

    server.push(
        reply(Thinking("read a first"), ToolUse("read_file", {"path": "a.py"}, "t1")),
        reply(Thinking("now b"), ToolUse("read_file", {"path": "b.py"}, "t2")),
        reply(Thinking("a was cleared; b is enough"), ToolUse("read_file", {"path": "c.py"}, "t3")),
        text("done"),
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    first = await provider.complete(_request(model, messages))
    messages += [_api(first.message), _result("t1", "A" * 3000)]
    second = await provider.complete(_request(model, messages))
    messages += [_api(second.message), _result("t2", "B" * 3000)]
    messages[2] = _result("t1", "[cleared: read_file a.py, 3000 chars; recall ref t1]")  # T1's clear
    third = await provider.complete(_request(model, messages))
    messages += [_api(third.message), _result("t3", "C")]
    await provider.complete(_request(model, messages))
    return server.requests


async def test_only_thinking_still_bound_to_its_prefix_is_sent_back():
    built: list[Request] = []
    with FakeAnthropic(bind_thinking=True) as server:
        bodies = await _session("claude-sonnet-5-5", server, built)
        assert server.statuses == [200, 200, 200, 200]
        assert server.binding is not None and server.binding.dropped == []  # nothing left for the API
        # the thought before the clear stays; the one after it (bound to the old result) is left out;
        # the one produced after the clear is bound to the cleared view and goes back
        assert _thoughts(bodies[2]) == ["read a first"]
        assert _thoughts(bodies[3]) == ["read a first", "a was cleared; b is enough"]
        # what was left out is noted on the request, for the engine to count without it
        unsent = [[b["thinking"] for b in r.metadata.get(Request.UNSENT, ())] for r in built]
        assert unsent == [[], [], ["now b"], ["now b"]]
        # the requests go out as built: no thinking setting, no beta
        assert all("thinking" not in b for b in bodies) and all(
            "anthropic-beta" not in h for h in server.headers
        )


async def test_a_block_refused_all_the_same_sends_the_request_again_asking_the_api_to_drop(monkeypatch):
    """A guard that misjudges (here: one that lets everything through): the API's 400 for the block
    is answered by the same request asking it to drop such blocks, and so is every later request."""
    monkeypatch.setattr(ThinkingBinding, "outgoing", lambda self, body: (body, []))
    with FakeAnthropic(bind_thinking=True) as server:
        bodies = await _session("claude-sonnet-5-5", server)
        assert server.statuses == [200, 200, 400, 200, 200]
        assert server.binding is not None and server.binding.dropped == [(4, 3, 0), (5, 3, 0)]
        asked = [b.get("thinking", {}).get("block_binding") for b in bodies]
        assert asked == [None, None, None, REQUEST_FIELD["block_binding"], REQUEST_FIELD["block_binding"]]
        assert [h.get("anthropic-beta") for h in server.headers] == [None, None, None, BETA, BETA]


async def test_a_model_not_marked_binding_is_sent_its_thinking_until_the_api_refuses_it():
    """A model models.toml does not mark (one newer than the table, or a table a workspace got
    wrong) gets its thinking back as it was; when the API refuses a block as bound to another
    prefix, the same request goes again asking it to drop such blocks, and from then on the model is
    treated as binding: the session goes on instead of failing at the first clear."""
    with FakeAnthropic(bind_thinking=True) as server:  # the fake binds whatever the model
        bodies = await _session("claude-opus-4-6", server)
        assert server.statuses == [200, 200, 400, 200, 200]
        assert [_thoughts(b) for b in bodies[:3]] == [[], ["read a first"], ["read a first", "now b"]]
        assert server.binding is not None and server.binding.dropped == [(4, 3, 0)]  # "now b", by the API
        asked = [b.get("thinking", {}).get("block_binding") for b in bodies]
        assert asked == [None, None, None, REQUEST_FIELD["block_binding"], REQUEST_FIELD["block_binding"]]
        assert [h.get("anthropic-beta") for h in server.headers] == [None, None, None, BETA, BETA]
        assert _thoughts(bodies[4]) == []  # the guard vouches only for what it saw bound: none of it


def _thinking(signature: str) -> Block:
    return Block(type="thinking", text="t", signature=signature, meta=BlockMeta(Trust.ASSISTANT, "assistant"))


def test_a_change_leaves_out_only_the_thinking_after_it_and_a_block_never_seen_produced():
    guard = ThinkingBinding()
    body: dict[str, Any] = {"system": SYSTEM, "tools": TOOLS, "messages": [{"role": "user", "content": "go"}]}
    guard.produced(body, Message("assistant", (_thinking("s1"), Block.text_block("one"))))
    sent = [
        *body["messages"],
        {"role": "assistant", "content": [_thinking("s1").to_api(), {"type": "text", "text": "one"}]},
    ]
    later = {**body, "messages": [*sent, {"role": "user", "content": "more"}]}
    guard.produced(later, Message("assistant", (_thinking("s2"),)))
    whole = [*later["messages"], {"role": "assistant", "content": [_thinking("s2").to_api()]}]
    whole.append({"role": "user", "content": "x"})

    same, dropped = guard.outgoing({**body, "messages": whole})
    assert dropped == [] and same["messages"] == whole  # nothing changed: everything goes back
    marked = [dict(m) for m in whole]
    marked[0] = {
        "role": "user",
        "content": [{"type": "text", "text": "go", "cache_control": {"type": "ephemeral"}}],
    }
    assert guard.outgoing({**body, "messages": marked})[1] == []  # a cache marker is not a change

    changed = [dict(m) for m in whole]
    changed[2] = {"role": "user", "content": "more, and then some"}
    out, dropped = guard.outgoing({**body, "messages": changed})
    assert [b["signature"] for b in dropped] == ["s2"]  # s2 came after the change; s1 before it
    assert out["messages"][3]["content"] == [{"type": "text", "text": "(no content)"}]
    assert out["messages"][1]["content"][0]["signature"] == "s1"
    changed_system = {**body, "system": [{"type": "text", "text": "other"}], "messages": whole}
    assert len(guard.outgoing(changed_system)[1]) == 2
    # a block this guard never saw produced (a resumed session) cannot be vouched for
    unknown = {"type": "thinking", "thinking": "t", "signature": "never-seen"}
    resumed = [*whole, {"role": "assistant", "content": [unknown, {"type": "text", "text": "y"}]}]
    out, dropped = guard.outgoing({**body, "messages": resumed})
    assert dropped == [unknown] and out["messages"][-1]["content"] == [{"type": "text", "text": "y"}]
