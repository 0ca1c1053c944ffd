"""Bytes that are not UTF-8 — in a file's name, in the prompt's arguments, in a stream-json line — never
stop a session: tools, checkpoints and /rewind work in such a workspace, and no lone surrogate reaches
the session log or a request (each later request of the session would fail on it). Through the real
CLI, against the local Messages-API server."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agent_cli.core.types import content_to_text
from tests.e2e import AGENT, agent, anthropic_env
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic

BAD_NAME = b"caf\xe9.txt"  # Latin-1, as an old archive or another OS leaves it
BAD_ARG = os.fsdecode(b"bad \xff\xfe bytes")  # what Python makes of such an argument


def log_text(workspace: Path) -> str:
    """Every session log of the workspace, checked to be UTF-8 with no escaped surrogate in it."""
    logs = sorted((workspace / ".agent" / "sessions").glob("*/events.jsonl"))
    assert logs
    text = "".join(path.read_bytes().decode("utf-8") for path in logs)  # strict: valid UTF-8
    assert "\\ud" not in text.lower()  # no lone surrogate written as a JSON escape either
    return text


def sent(server: FakeAnthropic) -> str:
    return json.dumps(server.requests, ensure_ascii=False)


def test_a_file_name_that_is_not_utf8_stops_no_write_and_rewind_restores_it(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """The checkpoint before the first change used to die decoding `git ls-files`: the write never
    ran, and the log kept a tool call without its result."""
    server = fake_anthropic
    bad = Path(os.fsdecode(workspace)) / os.fsdecode(BAD_NAME)
    bad.write_bytes(b"before\n")
    server.push(
        tool_call("write_file", {"path": "new.txt", "content": "hello\n"}),
        tool_call("bash", {"command": "printf after > caf$'\\xe9'.txt"}),
        text("Wrote new.txt and changed the other."),
    )
    out = agent(workspace, server, "-p", "write it", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert not any("checkpoint" in w for w in result["warnings"]), result["warnings"]
    assert (workspace / "new.txt").read_text() == "hello\n" and bad.read_bytes() == b"after"
    assert '"type":"checkpoint"' in log_text(workspace)

    rewound = agent(workspace, server, "-p", "/rewind 1", "--continue", "--output-format", "json")
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    said = json.loads(rewound.stdout)["result"]
    assert "caf\\xe9.txt" in said and "new.txt" in said, said  # restored, removed: named readably
    assert bad.read_bytes() == b"before\n" and not (workspace / "new.txt").exists()
    log_text(workspace)


def test_a_prompt_argument_that_is_not_utf8_is_sent_and_the_session_goes_on(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    server = fake_anthropic
    server.push(text("Read you."), text("Still here."))
    first = agent(workspace, server, "-p", BAD_ARG, "--output-format", "json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "bad \ufffd\ufffd bytes" in sent(server)
    again = agent(workspace, server, "-p", "fine", "--continue", "--output-format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["result"] == "Still here."
    assert all(status == 200 for status in server.statuses), server.statuses
    assert "bad \ufffd\ufffd bytes" in log_text(workspace)


def test_stream_json_lines_that_are_not_utf8_are_read(workspace: Path, fake_anthropic: FakeAnthropic) -> None:
    """Raw bytes on the line, and a JSON escape of a lone surrogate (which json.loads hands back)."""
    server = fake_anthropic
    server.push(text("One."), text("Two."))
    raw = b'{"type":"user","message":{"role":"user","content":"raw \xff bytes"}}\n'
    escaped = b'{"type":"user","message":{"role":"user","content":"escaped \\udcff surrogate"}}\n'
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    out = subprocess.run(
        [*AGENT, *args],
        cwd=workspace,
        env=anthropic_env(workspace, server),
        input=raw + escaped,
        capture_output=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    results = [line for line in map(json.loads, out.stdout.splitlines()) if line["type"] == "result"]
    assert [r["result"] for r in results] == ["One.", "Two."]
    assert "raw \ufffd bytes" in sent(server) and "escaped \ufffd surrogate" in sent(server)
    log_text(workspace)


def test_ls_glob_and_grep_show_such_a_name_and_read_file_reaches_it(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """os.scandir gives the name with lone surrogates; the tools show its odd byte as `\\xe9`, and the
    name as shown reaches the file."""
    server = fake_anthropic
    (Path(os.fsdecode(workspace)) / os.fsdecode(BAD_NAME)).write_bytes(b"needle inside\n")
    server.push(
        tool_call("ls", {}),
        tool_call("glob", {"pattern": "*.txt"}),
        tool_call("grep", {"pattern": "needle"}),
        tool_call("read_file", {"path": "caf\\xe9.txt"}),
        text("Found it."),
    )
    out = agent(workspace, server, "-p", "look", "--permission-mode", "yolo", "--output-format", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["result"] == "Found it."
    results = [
        block
        for message in server.requests[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert len(results) == 4 and not any(r.get("is_error") for r in results), results
    shown = [content_to_text(r["content"]) for r in results]
    assert all("caf\\xe9.txt" in output for output in shown[:3]), shown
    assert "needle inside" in shown[3]
    log_text(workspace)

    server.push(text("Replayed."))
    (session,) = (workspace / ".agent" / "sessions").glob("*/events.jsonl")
    replayed = agent(workspace, server, "replay", str(session), "--json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_a_log_an_older_version_wrote_with_escaped_surrogates_continues_and_replays(
    workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Such logs exist (the writer used to escape a lone surrogate): they are read back as they are,
    and whatever they hold is scrubbed before it is sent."""
    server = fake_anthropic
    server.push(text("First."), text("Second."))
    assert agent(workspace, server, "-p", "hello there").returncode == 0
    (path,) = (workspace / ".agent" / "sessions").glob("*/events.jsonl")
    path.write_text(path.read_text().replace("hello there", "hello \\udcff there"))
    again = agent(workspace, server, "-p", "go on", "--continue", "--output-format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "hello \ufffd there" in json.dumps(server.requests[-1], ensure_ascii=False)
    replayed = agent(workspace, server, "replay", str(path), "--json")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
