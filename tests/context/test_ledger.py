"""The ledger: hard facts kept by code, rendered in a stable order, lossless through JSON."""

from __future__ import annotations

from agent_cli.context.ledger import Ledger
from agent_cli.core.types import Block, BlockMeta, Message, Trust

ASSISTANT = BlockMeta(Trust.ASSISTANT, "assistant")
REMINDER = BlockMeta(Trust.SYSTEM, "reminder", tag="system-reminder")


def call(ledger: Ledger, id: str, name: str, result: str = "ok", is_error: bool = False, **input) -> None:
    ledger.observe(Message("assistant", (Block.tool_use(id, name, input),)))
    ledger.observe(Message("user", (Block.tool_result(id, result, is_error),)))


def test_the_persons_words_verbatim_and_long_ones_cut_with_a_ref():
    ledger = Ledger()
    assert ledger.observe(Message("user", (Block.text_block("Use tabs, not spaces."),))) == {}
    ledger.observe(Message("user", (Block.text_block("<system-reminder>x</system-reminder>", REMINDER),)))
    long = "please " * 1_000
    originals = ledger.observe(Message("user", (Block.text_block(long),)))
    assert originals == {"user-2": long}
    assert ledger.messages[0] == "Use tabs, not spaces."
    assert ledger.messages[1].startswith(long[:2_000]) and "recall ref user-2" in ledger.messages[1]
    assert len(ledger.messages) == 2  # the reminder is not the person's words
    assert "Use tabs, not spaces." in ledger.render()


def test_files_commands_errors_and_todos():
    ledger = Ledger()
    call(ledger, "1", "read_file", path="src/app.py", offset=10, limit=20)
    call(ledger, "2", "read_file", path="src/app.py")
    call(ledger, "3", "edit_file", path="src/app.py", old_string="a", new_string="b")
    call(ledger, "4", "write_file", path="tests/test_app.py", content="x")
    call(ledger, "5", "edit_file", "no unique match", True, path="src/other.py")
    call(ledger, "6", "bash", "3 failed\n[exit code: 1]", command="pytest -q")
    call(ledger, "7", "bash", "all good", command="ruff check")
    call(
        ledger,
        "8",
        "todo",
        todos=[{"content": "fix add", "status": "completed"}, {"content": "docs", "status": "pending"}],
    )
    app = ledger.files["src/app.py"]
    assert (app.read, app.edited, app.written, app.lines) == (2, 1, 0, (10, 29))
    assert "src/other.py" not in ledger.files  # a failed edit touched nothing
    assert [(c.command, c.exit_code) for c in ledger.commands] == [("pytest -q", 1), ("ruff check", 0)]
    assert ledger.errors[-1].startswith("edit_file src/other.py: no unique match")
    assert ledger.todos == [("completed", "fix add"), ("pending", "docs")]
    text = ledger.render()
    assert "`src/app.py`: read 2x, edited 1x, last lines 10-29" in text
    assert "`pytest -q` -> exit 1" in text
    assert "- [x] fix add" in text and "- [ ] docs" in text


def test_a_file_spelled_three_ways_is_one_entry_and_touched_once():
    ledger = Ledger()
    call(ledger, "1", "read_file", path="./src/app.py")
    call(ledger, "2", "edit_file", path="src/app.py", old_string="a", new_string="b")
    call(ledger, "3", "read_file", path="src//app.py")
    assert list(ledger.files) == ["src/app.py"] and ledger.touched == ["src/app.py"]
    assert (ledger.files["src/app.py"].read, ledger.files["src/app.py"].edited) == (2, 1)


def test_tool_meta_refines_the_record():
    ledger = Ledger()
    call(ledger, "1", "bash", "output without a code", command="make")
    call(ledger, "2", "read_file", path="a.py")
    ledger.record_result("1", {"exit_code": 2})
    ledger.record_result("2", {"path": "a.py", "lines": [1, 120]})
    assert ledger.commands[0].exit_code == 2
    assert ledger.files["a.py"].lines == (1, 120)


def test_only_the_last_ten_errors_are_kept():
    ledger = Ledger()
    for i in range(15):
        call(ledger, str(i), "bash", f"boom {i}", True, command=f"cmd {i}")
    assert len(ledger.errors) == 10
    assert "boom 14" in ledger.errors[-1] and not any("boom 4" in e for e in ledger.errors)


def test_render_is_stable_and_json_is_lossless():
    ledger = Ledger()
    ledger.observe(Message("user", (Block.text_block("go"),)))
    call(ledger, "1", "read_file", path="b.py")
    call(ledger, "2", "read_file", path="a.py")
    call(ledger, "3", "bash", "x", True, command="false")
    assert ledger.render() == ledger.render()
    assert ledger.render().index("b.py") < ledger.render().index("a.py")  # first seen first
    again = Ledger.from_json(ledger.to_json())
    assert again.render() == ledger.render()
    assert again.to_json() == ledger.to_json()
    assert Ledger().render() == ""


def test_render_can_be_held_to_a_size():
    ledger = Ledger()
    for i in range(40):
        ledger.observe(Message("user", (Block.text_block(f"message {i} " + "word " * 300),)))
    full = ledger.render()
    short = ledger.render(max_chars=20_000)
    assert len(short) <= 20_000 < len(full)
    assert ("message 39 " + "word " * 300).strip() in short  # the newest stay whole
    assert "message 0 word word" in short and "[shortened]" in short
