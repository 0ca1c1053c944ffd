"""stream-json's lines (api/wire.py) as Claude Code's consumers read them: a tool_use block names its
tool and shapes its input as Claude Code does — the names `system`/`init` lists and
`permission_denials` use — and the assistant line is the API's message, its id and model."""

from __future__ import annotations

from pathlib import Path

from agent_cli.api.wire import stream_message
from agent_cli.core.events import AssistantMessage, ToolFinished
from agent_cli.core.types import Block, Message, ToolCall, Usage


def response(**kw) -> AssistantMessage:
    blocks = (
        Block.text_block("Reading, then listing."),
        Block.tool_use("toolu_1", "read_file", {"path": "src/app.py"}),
        Block.tool_use("toolu_2", "bash", {"command": "ls"}),
        Block.tool_use("toolu_3", "mcp__db__query", {"sql": "select 1"}),
    )
    return AssistantMessage(Message("assistant", blocks), Usage(10, 5), "tool_use", **kw)


def test_tool_use_blocks_carry_claude_codes_names_and_inputs(tmp_path: Path) -> None:
    line = stream_message(response(), "sess", "claude-sonnet-5-5", str(tmp_path))
    assert line is not None
    text, read, bash, mcp = line["message"]["content"]
    assert text == {"type": "text", "text": "Reading, then listing."}
    assert (read["name"], read["id"]) == ("Read", "toolu_1")
    assert read["input"] == {"path": "src/app.py", "file_path": str(tmp_path.resolve() / "src" / "app.py")}
    assert (bash["name"], bash["input"]) == ("Bash", {"command": "ls"})
    assert (mcp["name"], mcp["input"]) == ("mcp__db__query", {"sql": "select 1"})  # no other name
    result = stream_message(ToolFinished(ToolCall("toolu_1", "read_file", {}), output="x"), "sess", "m")
    assert result is not None and result["message"]["content"][0]["tool_use_id"] == "toolu_1"


def test_the_assistant_line_is_the_apis_message_when_it_said_its_id_and_model() -> None:
    said = stream_message(response(message_id="msg_01abc", model="claude-sonnet-5-5-20991231"), "s", "claude")
    assert said is not None and (said["message"]["id"], said["message"]["model"]) == (
        "msg_01abc",
        "claude-sonnet-5-5-20991231",
    )
    unsaid = stream_message(response(), "s", "claude-sonnet-5-5")  # a scripted model says neither
    assert unsaid is not None and unsaid["message"]["id"].startswith("msg_")
    assert unsaid["message"]["model"] == "claude-sonnet-5-5"
