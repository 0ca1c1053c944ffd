"""Fidelity in the engine, end to end (`agent -p` over loopback against the fake Anthropic API):
T5 pays the cache rewrite once and reports the server's figures; a headless run sends nothing after
its final answer; with a 20k budget a line from the middle of an early, large output is still found."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_cli.session.log import compaction_history, read_events
from tests.e2e import READ_ALL, agent, big_files, script_reads, user_config
from tests.fakeapi.replies import text, tool_call
from tests.fakeapi.server import FakeAnthropic


def _events(workspace: Path, session_id: str) -> list[dict]:
    return read_events(workspace / ".agent" / "sessions" / session_id / "events.jsonl").events


def _medium_files(workspace: Path, count: int, lines: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"med_{i}.txt"
        body = "".join(f"{k:04d} medium line of text number {k} for file {i}\n" for k in range(lines))
        (workspace / name).write_text(body)
        names.append(name)
    return names


def test_t5_rewrites_the_cache_once_and_records_the_servers_figures(workspace):
    names = big_files(workspace, 2, 20_000) + _medium_files(workspace, 2, 150)
    # the limit is tuned to the fixed prefix (system prompt and tool schemas, ~3.4k tokens): the four
    # reads overflow it once, and what T5 leaves stays under the limit-relative thresholds of T3
    with FakeAnthropic(max_prompt_tokens=14_500, separate_summaries=True) as server:
        script_reads(server, names)
        out = agent(workspace, server, *READ_ALL)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert server.statuses.count(400) == 1  # one overflow: the next requests did not hit the limit
    events = _events(workspace, data["session_id"])
    error = next(e for e in events if e["type"] == "error")
    at = events.index(error)
    after = [e for e in events[at:] if e["type"] == "assistant"]
    retry, next1, next2 = (e["usage"] for e in after[:3])
    # the retry wrote the new prefix; the next two requests read it (and what each added) from cache
    assert (
        next1["cache_read_input_tokens"]
        >= retry["cache_read_input_tokens"] + retry["cache_creation_input_tokens"]
    )
    assert (
        next2["cache_read_input_tokens"]
        >= next1["cache_read_input_tokens"] + next1["cache_creation_input_tokens"]
    )
    assert [c["tier"] for c in data["compactions"]] == ["T5"]  # nothing else rewrote it in between
    # the event shows the server's figures: N from its error, after from the next response's usage
    t5 = data["compactions"][0]
    server_after = (
        retry["input_tokens"] + retry["cache_read_input_tokens"] + retry["cache_creation_input_tokens"]
    )
    assert (t5["before"], t5["after"], t5["measured_by"]) == (error["tokens"], server_after, "server")
    assert t5["after"] <= 0.5 * error["maximum"]  # down to the target, not just under the limit
    # ... and so does the log, for resume and replay
    history = compaction_history(events)
    assert history[0]["before"] == error["tokens"] and history[0]["after"] == server_after
    assert history[0]["estimated_after"] > 0


# -- a line from the middle of an early, large output, after a 20k budget compacted it away -----------

REF = re.compile(r"""ref[= ]"?([A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])""")


def _lines_file(workspace: Path, name: str, lines: int) -> str:
    text = "".join(
        f"{name} line {k:03d}: the quick brown fox jumps over dog number {k * 37 % 1000:03d}\n"
        for k in range(1, lines + 1)
    )
    (workspace / name).write_text(text)
    return text


def _middle(name: str, lines: int) -> str:
    k = lines // 2
    return f"{name} line {k:03d}: the quick brown fox jumps over dog number {k * 37 % 1000:03d}"


def _run(workspace: Path, server: FakeAnthropic, prompt: str, *args: str) -> dict:
    out = agent(
        workspace,
        server,
        "-p",
        prompt,
        *args,
        "--permission-mode",
        "yolo",
        "--output-format",
        "json",
        "--budget-tokens",
        "20000",
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _find_line(workspace: Path, session_id: str, request: dict, line: str) -> str | None:
    """'' when `line` is visible in `request`; else a ref named in it whose stored original holds it."""
    sent = json.dumps(request, ensure_ascii=False)
    if line in sent:
        return ""
    store = workspace / ".agent" / "sessions" / session_id / "tool-results"
    for ref in dict.fromkeys(REF.findall(sent)):
        path = store / f"{ref}.txt"
        if path.is_file() and line in path.read_text():
            return ref
    return None


def _summaries_see_whole_outputs(server: FakeAnthropic, names: list[str], lines: int, policy: str) -> None:
    sent = "\n".join(json.dumps(r, ensure_ascii=False) for r in server.summary_requests)
    if policy == "claude-code":  # only T4: at 20k it must have summarized (the default clears first)
        assert server.summary_requests, "a 20k budget must have summarized something"
    assert "chars omitted]" not in sent  # no output cut to head + tail for a summarizer ...
    for request in server.summary_requests:  # ... only a stored output's preview, as the model saw it
        body = json.dumps(request, ensure_ascii=False)
        assert body.count("chars omitted") == body.count("<persisted-output ref=")
    for name in names:  # an output a summarizer read, it read whole: its middle too
        if f"{name} line 001:" in sent:
            assert _middle(name, lines) in sent, name


def _agent_requests(server: FakeAnthropic) -> list[dict]:
    side = {id(r) for r in server.summary_requests}
    return [r for r in server.requests if id(r) not in side]


def _recall_and_answer(workspace: Path, server: FakeAnthropic, first: dict, line: str) -> None:
    ref = _find_line(workspace, first["session_id"], _agent_requests(server)[-1], line)
    assert ref is not None, "the line is neither in the context nor behind a ref the context names"
    if ref:  # what the model does with a ref: one recall with a pattern
        server.push(tool_call("recall", {"ref": ref, "pattern": re.escape(line)}))
    server.push(text(f"It reads: {line}"))
    count = len(_agent_requests(server))
    second = _run(workspace, server, "What does the middle line of the first output say?", "--continue")
    assert second["result"] == f"It reads: {line}"
    # the model had the exact line (with its number) in front of it when it answered
    last = _agent_requests(server)[-1]
    assert line in json.dumps(last, ensure_ascii=False)
    if ref:
        result = last["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and line in result["content"]
        assert "matching line" in result["content"]
    assert len(_agent_requests(server)) - count == (2 if ref else 1)


@pytest.mark.parametrize("policy", ["default", "claude-code"])
def test_a_line_from_the_middle_of_the_first_of_nine_read_files_is_found_at_20k(workspace, policy):
    user_config(workspace, f'[context]\npolicy = "{policy}"\n')
    names = [f"part_{i}.txt" for i in range(9)]
    for name in names:
        _lines_file(workspace, name, 300)
    with FakeAnthropic(separate_summaries=True) as server:
        for name in names:
            server.push(tool_call("read_file", {"path": name}, say=f"Reading {name}."))
        server.push(text("Read all nine."))
        first = _run(workspace, server, "read the nine part files")
        assert first["result"] == "Read all nine." and first["compactions"]
        if policy == "default":  # T4-only nests each summary in the next: recall is then a chain
            _recall_and_answer(workspace, server, first, _middle("part_0.txt", 300))
        _summaries_see_whole_outputs(server, names, 300, policy)


@pytest.mark.parametrize("policy", ["default", "claude-code"])
def test_a_line_from_the_middle_of_an_880_line_cat_is_found_at_20k(workspace, policy):
    user_config(workspace, f'[context]\npolicy = "{policy}"\n')
    _lines_file(workspace, "big.log", 880)
    names = [f"part_{i}.txt" for i in range(8)]
    for name in names:
        _lines_file(workspace, name, 300)
    with FakeAnthropic(separate_summaries=True) as server:
        server.push(tool_call("bash", {"command": "cat big.log"}, say="Printing the log."))
        for name in names:
            server.push(tool_call("read_file", {"path": name}))
        server.push(text("Done."))
        first = _run(workspace, server, "print the log, then read the part files")
        assert first["result"] == "Done." and first["compactions"]
        if policy == "default":  # T4-only nests each summary in the next: recall is then a chain
            _recall_and_answer(workspace, server, first, _middle("big.log", 880))
        _summaries_see_whole_outputs(server, names, 300, policy)
