"""A code rewind puts back what the agent's turns changed and keeps what the person changed between
them: a rewind removed every file made since its checkpoint and restored every file changed since —
the person's own notes, made in an editor between prompts or after the last turn, among them."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.session.log import EventLog, read_events
from agent_cli.session.rewind import Rewinder
from tests.e2e import agent
from tests.fakeapi.replies import text, tool_call


def _rewinder(ws: Path, session: Path, turn: list[int]) -> tuple[Rewinder, EventLog]:
    log = EventLog(session)
    return Rewinder(ws, log, turn=lambda: turn[0], reopen=lambda: None, forget_note=lambda: None), log


async def _prompt(rewinder: Rewinder, log: EventLog, turn: list[int], change, *, ends: bool = True) -> None:
    """One prompt's turn as the session runs it: checkpoint before the first change, the change,
    the end-of-turn snapshot (absent from a log written before end snapshots existed)."""
    turn[0] += 1
    log.append("user", prompt=f"prompt {turn[0]}", message={"role": "user", "content": "x"})
    await rewinder.checkpoint(lambda event: None)
    change()
    if ends:
        assert await rewinder.end_turn() == ""


def test_a_rewind_through_the_cli_keeps_the_persons_files_and_names_what_it_put_back(
    workspace, fake_anthropic
):
    """Two `agent -p` prompts; the person makes notes.md between them and, after the last, edits a
    file no turn touched and a file the agent changed. `/rewind 1` undoes the agent's changes only."""
    server = fake_anthropic
    (workspace / "shared.txt").write_text("original\n")
    (workspace / "untouched.txt").write_text("untouched\n")
    original_app = (workspace / "app.py").read_text()
    server.push(
        tool_call("edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}),
        tool_call("bash", {"command": "echo generated > out.log"}),
        text("Done."),
    )
    assert agent(workspace, server, "-p", "one", "--permission-mode", "yolo").returncode == 0
    (workspace / "notes.md").write_text("the person's notes\n")  # in an editor, between prompts
    server.push(
        tool_call("bash", {"command": "echo new > created.txt && echo agent >> shared.txt"}),
        text("Done."),
    )
    second = agent(workspace, server, "-p", "two", "--continue", "--permission-mode", "yolo")
    assert second.returncode == 0, second.stderr
    (workspace / "untouched.txt").write_text("the person's edit\n")  # after the last turn
    (workspace / "shared.txt").write_text("original\nagent\nthe person's line\n")

    rewound = agent(workspace, server, "-p", "/rewind 1 code", "--continue", "--output-format", "json")
    assert rewound.returncode == 0, rewound.stderr
    said = json.loads(rewound.stdout)["result"]
    assert (workspace / "app.py").read_text() == original_app  # the agent's edit, restored
    assert not (workspace / "out.log").exists() and not (workspace / "created.txt").exists()
    assert (workspace / "notes.md").read_text() == "the person's notes\n"
    assert (workspace / "untouched.txt").read_text() == "the person's edit\n"
    assert (workspace / "shared.txt").read_text() == "original\n"  # the agent's change was in it
    assert "removed 2 file(s) created since: created.txt, out.log" in said
    assert "Also changed by you since: shared.txt; `/rewind undo` brings your version back." in said
    assert "Kept 2 file(s) changed outside the agent's turns: notes.md, untouched.txt." in said

    undone = agent(workspace, server, "-p", "/rewind undo", "--continue", "--output-format", "json")
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "shared.txt").read_text() == "original\nagent\nthe person's line\n"
    assert (workspace / "created.txt").exists() and (workspace / "notes.md").exists()


async def test_a_file_the_person_made_before_the_agent_edited_it_comes_back_as_the_person_left_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    turn = [0]
    rewinder, log = _rewinder(ws, tmp_path / "session", turn)
    await _prompt(rewinder, log, turn, lambda: (ws / "a.txt").write_text("agent\n"))
    (ws / "draft.md").write_text("the person's draft\n")
    await _prompt(rewinder, log, turn, lambda: (ws / "draft.md").write_text("the agent's rewrite\n"))
    said = await rewinder.rewind(1, "code")
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / "draft.md").read_text() == "the person's draft\n"  # not removed: it was the person's
    assert "restored 2 file(s): a.txt, draft.md" in said and "Also changed by you" not in said
    log.close()


async def test_a_log_without_end_snapshots_rewinds_as_before(tmp_path):
    """A session written before end-of-turn snapshots existed (or whose turn crashed): everything
    changed since the checkpoint counts as the agent's, as it always did."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    turn = [0]
    rewinder, log = _rewinder(ws, tmp_path / "session", turn)
    await _prompt(rewinder, log, turn, lambda: (ws / "a.txt").write_text("agent\n"), ends=False)
    (ws / "notes.md").write_text("made after the turn\n")
    said = await rewinder.rewind(1, "code")
    assert not (ws / "notes.md").exists() and (ws / "a.txt").read_text() == "a\n"
    assert "removed 1 file(s) created since: notes.md" in said and "Kept" not in said
    assert not any(e["type"] == "checkpoint_end" for e in read_events(log.path).events)
    log.close()


async def test_a_rewind_that_finds_only_the_persons_changes_says_so(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    turn = [0]
    rewinder, log = _rewinder(ws, tmp_path / "session", turn)
    await _prompt(rewinder, log, turn, lambda: (ws / "made.txt").write_text("agent\n"))
    (ws / "made.txt").unlink()  # the person removed the agent's file themselves
    (ws / "mine.txt").write_text("mine\n")
    said = await rewinder.rewind(1, "code")
    assert "Nothing the agent changed is left to restore." in said
    assert "Kept 1 file(s) changed outside the agent's turns: mine.txt." in said
    assert (ws / "mine.txt").exists() and "/rewind undo" not in said
    log.close()


async def test_undo_of_a_rewind_keeps_what_the_person_changed_after_it(tmp_path):
    """`/rewind undo` puts back what the rewind changed, not the person's work made since."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    turn = [0]
    rewinder, log = _rewinder(ws, tmp_path / "session", turn)
    await _prompt(rewinder, log, turn, lambda: (ws / "a.txt").write_text("agent\n"))
    await rewinder.rewind(1, "code")
    (ws / "later.md").write_text("written after the rewind\n")
    said = await rewinder.undo()
    assert (ws / "a.txt").read_text() == "agent\n" and (ws / "later.md").exists()
    assert "Kept 1 file(s) changed outside the agent's turns: later.md." in said
    log.close()
