"""`/export` writes the conversation as a person would read it: their prompts as typed, the model's
words, every tool call with its input and the head of its result; none of the program's injections."""

from __future__ import annotations

from agent_cli.core.events import CommandResult

from .helpers import make_session, run

BIG = "seq 1 30000"


async def _export(session) -> str:
    [result] = [e for e in await run(session, "/export") if isinstance(e, CommandResult)]
    return result.data["markdown"]


async def test_export_has_each_tool_call_and_not_our_injections(workspace):
    session = make_session(
        workspace,
        [
            {"text": "Reading it.", "tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
            {"tool_calls": [{"name": "bash", "input": {"command": BIG}}]},
            {"text": "The sign is wrong in add()."},
        ],
    )
    await run(session, "why does add fail?")
    markdown = await _export(session)
    assert "<env>" not in markdown and "Working directory:" not in markdown
    assert "## You\n\nwhy does add fail?\n" in markdown
    assert "**Tool call: read_file** `app.py`" in markdown
    assert "return a - b" in markdown  # the head of its result
    assert f"**Tool call: bash** `{BIG}`" in markdown
    # an output kept in the store: its preview and where the whole is, not the model's markup
    assert "<persisted-output" not in markdown and "Use the recall tool" not in markdown
    assert "[whole output: " in markdown and "30,000 lines, kept as ref" in markdown
    assert "The sign is wrong in add()." in markdown


async def test_export_to_a_file(workspace):
    session = make_session(workspace, [{"text": "Hello."}])
    await run(session, "hi")
    [result] = [e for e in await run(session, "/export out.md") if isinstance(e, CommandResult)]
    assert not result.is_error
    text = (workspace / "out.md").read_text()
    assert "## You\n\nhi\n" in text and "## Assistant\n\nHello." in text
    [bad] = [e for e in await run(session, "/export no/such/dir/out.md") if isinstance(e, CommandResult)]
    assert bad.is_error and bad.text.startswith("Cannot write ") and "No such file or directory" in bad.text


async def test_export_never_writes_over_a_file(workspace):
    """`/export main.py` replaced the person's uncommitted main.py with the transcript."""
    (workspace / "main.py").write_text("my work\n")
    session = make_session(workspace, [{"text": "Hello."}])
    await run(session, "hi")
    [result] = [e for e in await run(session, "/export main.py") if isinstance(e, CommandResult)]
    assert result.is_error and "exists: /export writes a new file, never over one" in result.text
    assert (workspace / "main.py").read_text() == "my work\n"
