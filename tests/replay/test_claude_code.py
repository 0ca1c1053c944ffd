from __future__ import annotations

import json
from pathlib import Path

from agent_cli.context.invariants import check
from agent_cli.replay.claude_code import NO_RESULT, load_claude_code, tool_compactable

FIXTURES = Path(__file__).parent / "fixtures"


def test_lines_of_one_response_become_one_message_with_usage_counted_once():
    t = load_claude_code(FIXTURES / "merged.jsonl")
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]
    first = t.messages[1]
    # whitespace-only text dropped, the duplicated tool_use line not repeated, order kept
    assert [b.type for b in first.blocks] == ["thinking", "text", "tool_use"]
    assert first.blocks[1].text == "Reading the config."
    assert len(t.requests) == 2
    a, b = t.requests
    assert (a.message_id, a.position, b.position) == ("msg_A", 1, 3)
    # the same input on every line; the final output count (42), not the sum over lines
    assert (a.usage.input_tokens, a.usage.cache_creation_input_tokens, a.usage.cache_read_input_tokens) == (
        3,
        1000,
        5000,
    )
    assert a.usage.output_tokens == 42
    assert a.model == "claude-opus-4-6"
    assert b.timestamp - a.timestamp == 6.0
    assert t.skipped["duplicate"] == 1


def test_tool_results_carry_our_tool_name_and_list_content_is_flattened():
    t = load_claude_code(FIXTURES / "merged.jsonl")
    result = t.messages[2].blocks[0]
    assert result.type == "tool_result" and result.tool_use_id == "toolu_1"
    assert result.text == "[server]\nport = 80"
    assert result.meta.tool_name == "read_file"
    assert t.messages[1].blocks[2].name == "Read"  # the call keeps the name that was sent


def test_compact_boundary_and_summary_are_skipped_but_earlier_messages_kept():
    t = load_claude_code(FIXTURES / "compact.jsonl")
    texts = [m.text for m in t.messages if m.role == "user"]
    assert texts == ["fix the bug", "", "go on"]  # no summary, no caveat (isMeta)
    assert all("continued from a previous conversation" not in m.text for m in t.messages)
    assert len(t.requests) == 3
    assert len(t.boundaries) == 1
    boundary = t.boundaries[0]
    assert boundary.trigger == "auto" and boundary.position == 4
    # what Claude Code really sent after its compaction: the summary, then the new message
    sent = t.recorded_context(t.requests[2])
    assert len(sent) == 1 and sent[0].role == "user"
    assert sent[0].blocks[0].text.startswith("This session is being continued")
    assert sent[0].blocks[-1].text == "go on"
    assert t.recorded_context(t.requests[1]) == list(t.messages[:3])


def test_sidechain_lines_are_ignored():
    t = load_claude_code(FIXTURES / "compact.jsonl")
    assert [r.message_id for r in t.requests] == ["msg_C1", "msg_C2", "msg_C3"]
    assert all("subagent" not in m.text for m in t.messages)
    assert t.skipped["sidechain"] == 2


def test_torn_last_line_is_skipped_with_a_warning():
    t = load_claude_code(FIXTURES / "interleaved.jsonl")
    assert t.torn_lines == 1
    assert any("torn or corrupt" in w and ":10:" in w for w in t.warnings)
    assert len(t.requests) == 3


def test_results_written_mid_response_are_placed_after_it_and_repairs_counted():
    t = load_claude_code(FIXTURES / "interleaved.jsonl")
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert [b.id for b in t.messages[1].blocks] == ["toolu_d1", "toolu_d2"]
    assert [b.tool_use_id for b in t.messages[2].blocks] == ["toolu_d1", "toolu_d2"]
    # the ghost result is dropped; the Task call never answered gets a stand-in result, first
    follow = t.messages[4]
    assert follow.blocks[0].type == "tool_result" and follow.blocks[0].text == NO_RESULT
    assert follow.blocks[1].text == "[Request interrupted by user for tool use]"
    assert t.repairs == 2
    assert check(t.messages) == []


def test_long_sessions_parse_to_valid_views():
    for path in _long_files():
        t = load_claude_code(path)
        assert check(t.messages) == []
        assert t.torn_lines == 0 and t.repairs == 0


def test_corrupt_middle_line_and_non_object_lines_are_not_fatal(tmp_path: Path):
    lines = (FIXTURES / "merged.jsonl").read_text().splitlines()
    lines.insert(3, "{not json")
    lines.insert(4, json.dumps([1, 2]))
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t = load_claude_code(path)
    assert t.torn_lines == 2
    assert len(t.requests) == 2


def test_compactable_tools():
    assert tool_compactable("Read") and tool_compactable("bash") and tool_compactable("WebFetch")
    assert not tool_compactable("Task") and not tool_compactable("TodoWrite")


def _long_files() -> list[Path]:
    files = sorted((Path(__file__).parent / "fixtures" / "transcripts").glob("*-*-*.jsonl"))
    assert len(files) == 2, "the two long transcripts are fixtures of the repository"
    return files


def test_synthetic_stand_ins_are_not_requests(tmp_path: Path):
    from tests.replay.helpers import SessionWriter

    w = SessionWriter()
    w.user("hi", 0)
    w.response([{"type": "text", "text": "hello"}], 1, write=900)
    w.user("again", 2)
    w.response([{"type": "text", "text": "API Error: overloaded"}], 3, out=0)
    w.lines[-1]["message"]["model"] = "<synthetic>"
    w.response([{"type": "text", "text": "here"}], 4, read=900)
    t = load_claude_code(w.write(tmp_path / "s.jsonl"))
    assert len(t.requests) == 2 and t.skipped["synthetic"] == 1
    assert "API Error" not in json.dumps([m.to_json() for m in t.messages])
    assert check(t.messages) == []


def test_a_sub_agents_own_transcript_replays_as_its_session(tmp_path: Path):
    # Claude Code writes a sub-agent's conversation to a file of its own, every line marked
    # isSidechain: that file is the sub-agent's session, not the sidechain of another one
    lines = [
        json.loads(line) for line in (FIXTURES / "merged.jsonl").read_text().splitlines() if line.strip()
    ]
    own = tmp_path / "agent-1234abcd.jsonl"
    own.write_text("".join(json.dumps({**line, "isSidechain": True}) + "\n" for line in lines))
    main, sub = load_claude_code(FIXTURES / "merged.jsonl"), load_claude_code(own)
    assert len(sub.requests) == len(main.requests) == 2
    assert [m.role for m in sub.messages] == [m.role for m in main.messages]
    assert any("sub-agent" in w for w in sub.warnings) and "sidechain" not in sub.skipped


def test_a_usage_field_that_is_not_a_count_is_read_as_none_spent(tmp_path: Path):
    lines = (FIXTURES / "merged.jsonl").read_text().splitlines()
    line = json.loads(lines[2])
    line["message"]["usage"]["input_tokens"] = [1, 2]
    lines[2] = json.dumps(line)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t = load_claude_code(path)
    assert len(t.requests) == 2
