"""The reactive model of the fake Messages API (tests/fakeapi/reactive.py): it edits only what it can
see, fetching the old text back first — by the ref a placeholder names, else by reading the file —
and the server hands it every request and the usage it reported."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from agent_cli.context.tiers.coarsen import summary_line
from agent_cli.context.tiers.micro import placeholder
from agent_cli.core.persisted import persisted_text
from tests.fakeapi.pointers import pointers, sees
from tests.fakeapi.reactive import Answer, Bash, Edit, Fetch, ReactiveModel, Read
from tests.fakeapi.replies import Reply, Text, ToolUse
from tests.fakeapi.server import FakeAnthropic

OLD = "    total = scale(values[125], factor=42) + offset"
NEW = OLD + "  # checked"
FILE = "".join(OLD + "\n" if n == 125 else f"    line_{n:03d} = {n}\n" for n in range(1, 251))
READ_OUTPUT = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(FILE.splitlines(), 1))


class Conversation:
    """A request body grown as the agent would: the prompt, then call/result pairs."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the module"}]
        self._ids = 0

    def call(self, name: str, tool_input: dict[str, Any], result: str, *, say: str = "") -> str:
        self._ids += 1
        tool_id = f"toolu_{self._ids:03d}"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.messages.append({"role": "assistant", "content": blocks})
        result_block = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        self.messages.append({"role": "user", "content": [result_block]})
        return tool_id

    def body(self) -> dict[str, Any]:
        return {"model": "claude-test", "max_tokens": 100, "system": "be brief", "messages": self.messages}


def the_call(reply: Reply) -> ToolUse:
    (block,) = reply.blocks
    assert isinstance(block, ToolUse), reply
    return block


def edit_model() -> ReactiveModel:
    return ReactiveModel([Read("src/a.py"), Edit("src/a.py", OLD, NEW, line=125)])


def read_done(model: ReactiveModel, conversation: Conversation, shown: str) -> None:
    """The model asked to read the file; the request answers it with `shown`."""
    assert the_call(model.respond(conversation.body())).name == "read_file"
    conversation.call("read_file", {"path": "src/a.py"}, shown)


# -- it sees the text: no re-read ----------------------------------------------------------------------


def test_an_edit_whose_old_text_is_visible_is_made_at_once_line_numbers_and_all():
    model, conversation = edit_model(), Conversation()
    read_done(model, conversation, READ_OUTPUT)
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == (
        "edit_file",
        {"path": "src/a.py", "old_string": OLD, "new_string": NEW},
    )
    assert model.forced == [] and model.blind == []


def test_text_the_model_wrote_itself_counts_as_seen():
    conversation = Conversation()
    conversation.call("write_file", {"path": "src/a.py", "content": FILE}, "wrote src/a.py")
    assert sees(conversation.body(), OLD)
    assert not sees(conversation.body(), "something else entirely")


# -- it does not: the read is fetched back ------------------------------------------------------------


def test_without_the_text_or_a_ref_for_the_file_the_model_reads_it_again_then_edits():
    model, conversation = edit_model(), Conversation()
    read_done(model, conversation, "(the output was lost)")
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("read_file", {"path": "src/a.py"})
    assert model.forced == [Fetch(1, "read_file", "src/a.py")]
    conversation.call("read_file", {"path": "src/a.py"}, READ_OUTPUT)
    assert the_call(model.respond(conversation.body())).name == "edit_file"
    assert len(model.forced) == 1 and model.blind == []


def test_a_cleared_read_of_the_file_is_recalled_by_the_ref_its_placeholder_names():
    model, conversation = edit_model(), Conversation()
    other = placeholder("read_file", "src/b.py", 9_000, "rbbbbbbbbb", (1, 200))
    conversation.call("read_file", {"path": "src/b.py"}, other)
    read_done(model, conversation, placeholder("read_file", "src/a.py", 9_000, "raaaaaaaaa", (1, 250)))
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("recall", {"ref": "raaaaaaaaa"})  # its own ref, not b.py's
    conversation.call("recall", {"ref": "raaaaaaaaa"}, "[raaaaaaaaa: chars 0–9000 of 9000]\n" + READ_OUTPUT)
    assert the_call(model.respond(conversation.body())).name == "edit_file"
    assert model.forced == [Fetch(1, "recall", "src/a.py", "raaaaaaaaa")]


def test_a_placeholder_for_another_file_only_means_a_read_of_this_one():
    model, conversation = edit_model(), Conversation()
    read_done(model, conversation, "(lost)")
    conversation.call(
        "read_file", {"path": "src/b.py"}, placeholder("read_file", "src/b.py", 9_000, "rb", (1, 9))
    )
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("read_file", {"path": "src/a.py"})


def test_an_offloaded_read_is_recalled_by_its_persisted_output_ref():
    model, conversation = edit_model(), Conversation()
    read_done(model, conversation, persisted_text("ra-offloaded", READ_OUTPUT, None, 300))
    assert not sees(conversation.body(), OLD)  # the preview's head and tail miss line 125
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("recall", {"ref": "ra-offloaded"})


def test_a_folded_run_is_followed_from_its_coarse_line_to_the_digest_line_to_the_read():
    model, conversation = edit_model(), Conversation()
    assert the_call(model.respond(conversation.body())).name == "read_file"
    digest = "- read_file src/a.py lines 1-250 → ok (output cleared, ref raaaaaaaaa)"
    coarse = summary_line(["- read_file src/a.py → ok (9000 chars, ref raaaaaaaaa)"], "list-1234")
    conversation.messages = conversation.messages[:1] + [
        {"role": "assistant", "content": [{"type": "text", "text": coarse}]},
        {"role": "user", "content": "go on"},
    ]
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("recall", {"ref": "list-1234"})
    conversation.call("recall", {"ref": "list-1234"}, "[list-1234: chars 0–80 of 80]\n" + digest)
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input) == ("recall", {"ref": "raaaaaaaaa"})
    assert [f.ref for f in model.forced] == ["list-1234", "raaaaaaaaa"]


def test_a_region_summary_means_reading_the_file_again_unless_the_model_greps_spans():
    pointer = (
        "[summarized in the region summary ref region-1 (in the result of toolu_0) — read_file src/a.py, "
        "9000 chars]"
    )
    model, conversation = edit_model(), Conversation()
    read_done(model, conversation, pointer)
    assert [p.kind for p in pointers(conversation.body())] == ["region"]
    assert the_call(model.respond(conversation.body())).input == {"path": "src/a.py"}  # the item whole
    grep = ReactiveModel(edit_model().steps, grep_spans=True)
    conversation = Conversation()
    read_done(grep, conversation, pointer)
    call = the_call(grep.respond(conversation.body()))
    assert call.input["ref"] == "region-1" and call.input["pattern"]


def test_a_ref_that_holds_more_than_the_file_is_searched_from_the_next_page_by_a_grepping_model():
    for grep_spans, follow in ((False, {"path": "src/a.py"}), (True, {"ref": "region-2", "offset": 20000})):
        model, conversation = ReactiveModel(edit_model().steps, grep_spans=grep_spans), Conversation()
        read_done(model, conversation, "(folded)")
        digest = (
            "- read_file src/a.py → ok (output cleared, ref region-2)"  # a digest line names a span's ref
        )
        conversation.messages[-2]["content"].insert(0, {"type": "text", "text": digest})
        assert the_call(model.respond(conversation.body())).input == {"ref": "region-2"}
        page = "[region-2: chars 0–20000 of 51000]\n(other files)\n[… 31000 more chars; call again with offset=20000]"
        conversation.call("recall", {"ref": "region-2"}, page)
        got = the_call(model.respond(conversation.body())).input
        assert {k: v for k, v in got.items() if k != "pattern"} == follow
        assert ("pattern" in got) == grep_spans


def test_the_placeholder_whose_lines_hold_the_edit_is_the_one_recalled():
    model, conversation = edit_model(), Conversation()
    assert the_call(model.respond(conversation.body())).name == "read_file"
    conversation.call(
        "read_file",
        {"path": "src/a.py", "limit": 100},
        placeholder("read_file", "src/a.py", 4_000, "rfirst", (1, 100)),
    )
    conversation.call(
        "read_file",
        {"path": "src/a.py", "offset": 101},
        placeholder("read_file", "src/a.py", 6_000, "rrest", (101, 250)),
    )
    conversation.call(
        "read_file",
        {"path": "src/a.py", "limit": 50},
        placeholder("read_file", "src/a.py", 2_000, "rhead", (1, 50)),
    )
    assert the_call(model.respond(conversation.body())).input == {"ref": "rrest"}  # line 125, not the latest


def test_when_nothing_brings_the_text_back_the_edit_is_made_blind_and_counted():
    model = ReactiveModel([Read("src/a.py"), Edit("src/a.py", OLD, NEW)], max_fetches=2)
    conversation = Conversation()
    read_done(model, conversation, "(lost)")
    the_call(model.respond(conversation.body()))  # read again
    conversation.call("read_file", {"path": "src/a.py"}, "(lost again)")
    assert the_call(model.respond(conversation.body())).name == "edit_file"  # reads once, then gives up
    assert model.blind == [1] and len(model.forced) == 1


# -- the scenario's end, and the server's side -----------------------------------------------------


def test_the_scenario_ends_with_its_answer_and_every_request_is_counted():
    model = ReactiveModel([Bash("seq 1 3"), Answer("All done.")])
    conversation = Conversation()
    assert the_call(model.respond(conversation.body())).input == {"command": "seq 1 3"}
    conversation.call("bash", {"command": "seq 1 3"}, "bash refused", say="")
    conversation.messages[-1]["content"][0]["is_error"] = True
    assert model.respond(conversation.body()).blocks == (Text("All done."),)
    assert model.done and model.requests == 2 and model.errors == [(0, "bash refused")]


def _post(server: FakeAnthropic, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "k"}
    request = urllib.request.Request(
        server.url + "/v1/messages", json.dumps(body).encode(), headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_the_server_asks_the_model_and_tells_it_the_usage_it_reported():
    model = ReactiveModel([Read("src/a.py")])
    tool = {"name": "read_file", "input_schema": {"type": "object"}}
    with FakeAnthropic(responder=model) as server:
        first = {**Conversation().body(), "tools": [tool]}
        answer = _post(server, first)
        assert answer["content"][0]["name"] == "read_file"
        summary = _post(server, Conversation().body())  # no tools: a summarizer's request
        assert summary["content"][0]["text"].startswith("## Summary")
        second = _post(
            server,
            {
                **first,
                "system": [{"type": "text", "text": "x" * 8000, "cache_control": {"type": "ephemeral"}}],
            },
        )
        assert second["content"][0]["text"] == "Done."  # the scenario ran out: the final answer
    assert model.requests == 2 and model.side_requests == 1 and model.done
    reported = [answer["usage"], summary["usage"], second["usage"]]
    assert [
        (u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) for u in model.usages
    ] == [
        (u["input_tokens"], u["cache_creation_input_tokens"], u["cache_read_input_tokens"]) for u in reported
    ]
    assert model.usages[2].cache_creation_input_tokens > 1000
    assert model.weighted_input == sum(
        u["input_tokens"] + 1.25 * u["cache_creation_input_tokens"] + 0.1 * u["cache_read_input_tokens"]
        for u in reported
    )


def test_text_the_model_wrote_and_t1_cleared_is_recalled_from_the_edits_input():
    again = NEW + "  # twice"
    model = ReactiveModel([Read("src/a.py"), Edit("src/a.py", OLD, NEW), Edit("src/a.py", NEW, again)])
    conversation = Conversation()
    read_done(model, conversation, placeholder("read_file", "src/a.py", 9_000, "rread", (1, 250)))
    assert the_call(model.respond(conversation.body())).input == {"ref": "rread"}  # the read's own text
    conversation.call("recall", {"ref": "rread"}, READ_OUTPUT)
    assert the_call(model.respond(conversation.body())).name == "edit_file"
    cleared = {
        "path": "src/a.py",
        "old_string": "[cleared: 52 chars; recall ref redit-in]",
        "new_string": "[cleared: 63 chars; recall ref redit-in]",
    }
    conversation.call("edit_file", cleared, "edited src/a.py")
    conversation.messages[-2]["content"][-1]["input"] = cleared
    conversation.messages[-3]["content"][0]["content"] = "(the recall was cleared too)"
    # the old text now is what the first edit wrote: its input, not the read
    assert the_call(model.respond(conversation.body())).input == {"ref": "redit-in"}
    stored = json.dumps({"path": "src/a.py", "old_string": OLD, "new_string": NEW}, indent=1)
    conversation.call("recall", {"ref": "redit-in"}, stored)
    call = the_call(model.respond(conversation.body()))
    assert (call.name, call.input["old_string"]) == ("edit_file", NEW)
    assert [f.ref for f in model.forced] == ["rread", "redit-in"]
