"""The memory note pays its way: an update sends the conversation as its (cached) prefix with the note
instruction at the end, and a headless run never updates the note after its final answer."""

from __future__ import annotations

import json

from agent_cli.agent.memory import SessionMemory
from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.context.model import ContextConfig
from agent_cli.llm.anthropic import AnthropicProvider
from agent_cli.settings.config import Config
from tests.agent.helpers import run
from tests.e2e import agent, user_config
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic

STEPS = 29


def _push_long_task(server: FakeAnthropic) -> None:
    for i in range(STEPS):
        server.push(tool_call("bash", {"command": f"seq -f 'step {i} line %g' 1 90"}))
    server.push(text("All steps done."))


async def test_a_note_update_reads_the_conversation_prefix_from_the_cache(workspace):
    server = FakeAnthropic(separate_summaries=True).start()
    try:
        _push_long_task(server)
        provider = AnthropicProvider(api_key="sk-ant-test", base_url=server.url)
        # the share gate off: this test is about the shape of the update request (and no clearing:
        # T1 would clear each command's output once seen, and the conversation would stay short)
        context = ContextConfig(memory_max_share=1.0, policy="none")
        config = Config(model="claude-sonnet-5-5", permission_mode="yolo", context=context)
        session = compose_session(config, provider, SessionSetup(workspace, None, interactive=True))
        events = await run(session, "run the steps")
        assert events[-1].result == "All steps done."
        await session.wait_background()
        assert session.memory.note, session.memory.last_error
    finally:
        server.stop()
    *turns, note_request = server.requests
    assert len(turns) == STEPS + 1 and server.summary_requests == [note_request]
    last = turns[-1]
    # the same system, tools and messages: the conversation is the prefix, the instruction comes last
    assert note_request["system"] == last["system"] and note_request["tools"] == last["tools"]
    assert note_request["tool_choice"] == {"type": "none"}
    assert note_request["model"] == last["model"]
    sent = note_request["messages"]
    strip = json.loads(
        json.dumps(sent[: len(last["messages"])]).replace(', "cache_control": {"type": "ephemeral"}', "")
    )
    assert strip == json.loads(
        json.dumps(last["messages"]).replace(', "cache_control": {"type": "ephemeral"}', "")
    )
    assert "<session-memory-request>" in sent[-1]["content"][-1]["text"]
    log = session.session_dir / "events.jsonl"
    events = [json.loads(x) for x in log.read_text().splitlines()]
    usage = next(e["usage"] for e in events if e.get("purpose") == "memory")
    total = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    assert usage["cache_read_input_tokens"] >= 0.8 * total  # the prefix came from the cache


def test_agent_p_sends_no_request_after_the_final_answer(workspace):
    user_config(workspace, '[context]\npolicy = "none"\n')  # nothing cleared: the conversation grows
    with FakeAnthropic(separate_summaries=True) as server:
        _push_long_task(server)
        out = agent(
            workspace, server, "-p", "run the steps", "--permission-mode", "yolo", "--output-format", "json"
        )
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["result"] == "All steps done."
        assert len(server.requests) == STEPS + 1  # thirty model calls and nothing after the answer
        assert server.summary_requests == []
        assert server.pending == 0
    tokens = sum(len(json.dumps(m)) for m in server.requests[-1]["messages"]) // 4
    assert tokens > 10_000  # enough conversation that a note would have been due


def test_an_update_waits_until_the_session_spent_enough_for_the_note_to_stay_under_its_share(tmp_path):
    async def never(system: str, content: str) -> str:
        raise AssertionError("not called")

    class Counter:
        def text(self, text: str) -> int:
            return len(text) // 4

    memory = SessionMemory(tmp_path, tmp_path, never, ContextConfig(memory_max_share=0.025), Counter())
    # an update over a 40k context costs ~0.1 x 40k + 1.25 x (500 + 1k) = 5.9k weighted tokens
    assert not memory.pays_its_way(spent_since=200_000, context_tokens=40_000, instruction_tokens=500)
    assert memory.pays_its_way(spent_since=240_000, context_tokens=40_000, instruction_tokens=500)
