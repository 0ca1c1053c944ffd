"""The scripted provider behind tests and `agent --demo`: once its script has no summary left, the
summarizer's call still gets a deterministic summary of the conversation, not of the instruction."""

from __future__ import annotations

from agent_cli.core.types import Request
from agent_cli.llm.scripted import Script, ScriptedProvider

INSTRUCTION = "Pause the task for a moment: do not call tools.\nRules:\n- be terse"


async def test_a_summary_past_the_script_lists_the_conversation_and_what_was_asked():
    provider = ScriptedProvider(Script(responses=[], summaries=["## Goal\nthe scripted one"]), chunk_delay=0)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "<env>\nWorking directory: /w\n</env>"}]},
        {"role": "user", "content": "fix the parser"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest -q\nmore"}}
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]},
        {"role": "user", "content": [{"type": "text", "text": INSTRUCTION}]},
    ]
    request = Request(model="scripted", system=[], messages=messages)
    first = await provider.complete(request)
    second = await provider.complete(request)
    assert first.message.text == "## Goal\nthe scripted one"  # the script's own summaries come first
    assert second.message.text.splitlines() == [
        "## Summary (scripted)",
        "- the person: fix the parser",  # the <env> injection is not the person's words
        "- bash pytest -q",
    ]  # and not the instruction: in `--demo`, /summary shows the conversation, not the program's prompt
