"""Checkpoints and /rewind: code (shadow git in the session directory) and conversation (a log event)."""

from __future__ import annotations

import json
import os

import pytest

from agent_cli.core.events import Notice
from agent_cli.session.checkpoints import SHADOW, CheckpointError, Checkpoints
from agent_cli.session.log import EventLog
from agent_cli.session.rewind import Rewinder
from agent_cli.session.timeline import effective_events, parse_args, prompt_points
from tests.e2e import agent
from tests.fakeapi.replies import text, tool_call


def test_rewind_one_restores_code_and_conversation(workspace, fake_anthropic):
    """Prompt 1 edits a file and runs bash; prompt 2 creates a file with bash and appends to another;
    `/rewind 1` puts all three back and the next request no longer carries prompt 1."""
    server = fake_anthropic
    (workspace / "notes.txt").write_text("first line\n")
    original_app = (workspace / "app.py").read_text()
    server.push(
        tool_call("edit_file", {"path": "app.py", "old_string": "a - b", "new_string": "a + b"}),
        tool_call("bash", {"command": "echo generated > out.log"}),
        text("Edited app.py and wrote out.log."),
    )
    first = agent(
        workspace, server, "-p", "PROMPT-ONE fix add\nand keep it short", "--permission-mode", "yolo"
    )
    assert first.returncode == 0, first.stderr
    server.push(
        tool_call("bash", {"command": "echo new > created.txt && echo appended >> notes.txt"}),
        text("Created created.txt and appended to notes.txt."),
    )
    second = agent(workspace, server, "-p", "PROMPT-TWO more", "--continue", "--permission-mode", "yolo")
    assert second.returncode == 0, second.stderr
    assert (workspace / "created.txt").exists() and "appended" in (workspace / "notes.txt").read_text()

    rewound = agent(workspace, server, "-p", "/rewind 1", "--continue", "--output-format", "json")
    assert rewound.returncode == 0, rewound.stderr
    said = json.loads(rewound.stdout)["result"]
    assert "removed" in said and "created.txt" in said and "restored" in said
    assert "(“PROMPT-ONE fix add and keep it short”)" in said  # on one line, no `\n` shown
    assert (workspace / "app.py").read_text() == original_app
    assert (workspace / "notes.txt").read_text() == "first line\n"
    assert not (workspace / "out.log").exists() and not (workspace / "created.txt").exists()

    server.push(text("Starting over."))
    before = len(server.requests)
    again = agent(workspace, server, "-p", "PROMPT-THREE again", "--continue")
    assert again.returncode == 0, again.stderr
    sent = json.dumps(server.requests[before]["messages"])
    assert "PROMPT-THREE" in sent and "PROMPT-ONE" not in sent and "PROMPT-TWO" not in sent
    assert all(s == 200 for s in server.statuses), server.statuses  # every request was valid


def test_rewind_conversation_only_keeps_the_code(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(
        tool_call("write_file", {"path": "new.py", "content": "x = 1\n"}),
        text("Wrote new.py."),
    )
    assert agent(workspace, server, "-p", "write it", "--permission-mode", "yolo").returncode == 0
    out = agent(workspace, server, "-p", "/rewind 1 conversation", "--continue", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    assert (workspace / "new.py").exists()
    listing = agent(workspace, server, "-p", "/rewind", "--continue", "--output-format", "json")
    assert "(no prompts yet)" in json.loads(listing.stdout)["result"]


def test_rewind_rejects_a_prompt_that_is_not_there(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(text("hello"))
    assert agent(workspace, server, "-p", "hi").returncode == 0
    out = agent(workspace, server, "-p", "/rewind 5", "--continue", "--output-format", "json")
    assert out.returncode == 1 and "no prompt 5" in json.loads(out.stdout)["result"]


def test_effective_events_apply_rewinds_in_order():
    events = [
        {"type": "session_start"},
        {"type": "user", "prompt": "a"},
        {"type": "checkpoint", "prompt": 1, "commit": "c1"},
        {"type": "user", "prompt": "b"},
        {"type": "memory", "covers": 3},
        {"type": "rewind", "prompt": 2},
        {"type": "user", "prompt": "c"},
        {"type": "checkpoint", "prompt": 2, "commit": "c2"},
        {"type": "rewind", "prompt": 1},
        {"type": "user", "prompt": "d"},
    ]
    kept = effective_events(events)
    assert [e.get("prompt") for e in kept if e["type"] == "user"] == ["d"]
    points = prompt_points(effective_events(events[:8]))
    assert [(p.number, p.text, p.checkpoint) for p in points] == [(1, "a", "c1"), (2, "c", "c2")]


def test_parse_args_explains_itself():
    assert parse_args("3 code") == (3, "code")
    for bad in ("", "x", "0", "2 sideways"):
        try:
            parse_args(bad)
        except ValueError as exc:
            assert "rewind" in str(exc)
        else:
            raise AssertionError(bad)


def test_large_and_ignored_files_are_left_out(tmp_path):
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    (ws / ".gitignore").write_text("build/\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_text("built")
    (ws / "big.dat").write_bytes(b"x" * 2000)
    (ws / "src.py").write_text("print(1)\n")
    cp = Checkpoints(ws, session, max_file_bytes=1000)
    snap = cp.snapshot("before prompt 1")
    assert snap.skipped == ("big.dat",)
    (ws / "src.py").write_text("print(2)\n")
    (ws / "build" / "out.bin").write_text("rebuilt")
    done = cp.restore(snap.commit)
    assert done.restored == ("src.py",) and (ws / "src.py").read_text() == "print(1)\n"
    assert (ws / "build" / "out.bin").read_text() == "rebuilt"  # ignored: never touched
    assert (ws / "big.dat").exists()  # skipped: never touched
    undone = cp.restore(done.undo)  # a rewind can be undone
    assert undone.restored == ("src.py",) and (ws / "src.py").read_text() == "print(2)\n"


def test_names_that_are_not_utf8_are_snapshotted_restored_and_removed(tmp_path):
    """git gives such names as raw bytes (`ls-files -z`, `diff -z`): they go back to it, and to the
    disk, as those bytes, and the person reads them as `\\xNN`."""
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    changed, large = ws / os.fsdecode(b"caf\xe9.txt"), ws / os.fsdecode(b"gro\xdf.dat")
    changed.write_bytes(b"one")
    large.write_bytes(b"x" * 2000)
    cp = Checkpoints(ws, session, max_file_bytes=1000)
    snap = cp.snapshot("before prompt 1")
    assert snap.skipped_shown() == ["gro\\xdf.dat"]
    changed.write_bytes(b"two")
    created = ws / os.fsdecode(b"new\xff.txt")
    created.write_bytes(b"new")
    done = cp.restore(snap.commit)
    assert changed.read_bytes() == b"one" and not created.exists() and large.exists()
    assert "restored 1 file(s): caf\\xe9.txt" in done.describe()
    assert "created since: new\\xff.txt" in done.describe()


async def test_a_checkpoint_that_fails_in_any_way_is_one_warning_and_the_call_goes_on(tmp_path):
    log = EventLog(tmp_path / "session")
    rewinder = Rewinder(tmp_path, log, turn=lambda: 1, reopen=lambda: None, forget_note=lambda: None)

    def broken(message: str):
        raise UnicodeDecodeError("utf-8", b"\xe9", 0, 1, "invalid continuation byte")

    rewinder.checkpoints.snapshot = broken  # type: ignore[method-assign]
    said: list[Notice] = []
    await rewinder.checkpoint(said.append)  # raises nothing: the tool call it precedes runs
    await rewinder.checkpoint(said.append)
    assert len(said) == 1 and said[0].level == "warning"
    assert said[0].text.startswith("checkpoints are off: UnicodeDecodeError")
    log.close()


def test_names_that_look_like_pathspec_magic_or_globs_are_restored_as_names(tmp_path):
    """git reads `:(icase)A`, `:(exclude)x` and `[ab]` as patterns unless told the paths are
    literal: a file the sandbox made with such a name was silently left as it was (or failed the
    whole rewind), so /rewind did not undo what a command in the workspace did."""
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    names = [":(icase)A", ":(exclude)zzz", "[ab]", "star*", "q?"]
    for name in names:
        (ws / name).write_text("then")
    (ws / "a").write_text("a then")
    big = ws / ":(glob)big*"
    big.write_bytes(b"x" * 2000)
    cp = Checkpoints(ws, session, max_file_bytes=1000)
    snap = cp.snapshot("before prompt 1")
    assert snap.skipped == (":(glob)big*",)
    for name in names:
        (ws / name).write_text("now")
    done = cp.restore(snap.commit)
    assert sorted(done.restored) == sorted(names)
    assert all((ws / name).read_text() == "then" for name in names)
    assert (ws / "a").read_text() == "a then" and big.exists()


def test_a_shadow_repository_that_points_git_elsewhere_runs_nothing(tmp_path):
    """A session a repository ships holds its own `checkpoints.git`: its config is rewritten, but a
    `commondir` file made git read the config of a folder next to it, whose filter driver ran a
    command, unsandboxed, at the first checkpoint after `--resume`."""
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    (ws / "a.txt").write_text("hi\n")
    (ws / ".gitattributes").write_text("* filter=x\n")
    cp = Checkpoints(ws, session)
    cp.snapshot("ours")  # a shadow repository, as one is shipped
    evil = cp.git_dir / "evil"
    evil.mkdir()
    for name in ("objects", "refs"):
        (evil / name).symlink_to(cp.git_dir / name)
    (evil / "HEAD").write_text("ref: refs/heads/master\n")
    ran = tmp_path / "ran"
    (evil / "config").write_text(f'[core]\n\tbare = false\n[filter "x"]\n\tclean = touch {ran} && cat\n')
    (cp.git_dir / "commondir").write_text("evil\n")
    (ws / "a.txt").write_text("changed\n")
    Checkpoints(ws, session).snapshot("shipped")
    assert not ran.exists()


async def test_rewind_undo_brings_back_what_a_code_rewind_removed(tmp_path):
    """A turn with no end snapshot (it never ended, or its log predates them) counts as the agent's
    up to now, so its code rewind removes every file made since its checkpoint, the person's own
    `notes.md` among them: `/rewind undo` puts the code back as it was just before the rewind (and
    can be undone too)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    log = EventLog(tmp_path / "session")
    turn = [1]
    rewinder = Rewinder(ws, log, turn=lambda: turn[0], reopen=lambda: None, forget_note=lambda: None)
    log.append("user", prompt="one", message={"role": "user", "content": "one"})
    await rewinder.checkpoint(lambda event: None)
    (ws / "a.txt").write_text("agent\n")
    (ws / "notes.md").write_text("the person's notes\n")  # made in an editor after the checkpoint
    said = await rewinder.rewind(1, "code")
    assert "removed 1 file(s) created since: notes.md" in said and "`/rewind undo` puts it back" in said
    assert not (ws / "notes.md").exists() and (ws / "a.txt").read_text() == "a\n"
    undone = await rewinder.undo()
    assert undone.startswith("Code: back to before the last rewind")
    assert (ws / "notes.md").read_text() == "the person's notes\n" and (ws / "a.txt").read_text() == "agent\n"
    log.close()


def test_a_checkpoint_named_in_the_log_must_be_a_commit_not_an_option(tmp_path):
    """A planted log's `checkpoint` could name `--output=…`: git would take it as an option."""
    ws = tmp_path / "ws"
    ws.mkdir()
    cp = Checkpoints(ws, tmp_path / "session")
    cp.snapshot("before prompt 1")
    with pytest.raises(CheckpointError, match="not a checkpoint"):
        cp.restore(f"--output={tmp_path / 'written'}")
    assert not (tmp_path / "written").exists()


def test_a_shipped_store_reads_no_objects_of_another_repository(tmp_path):
    """A session a repository ships can hold `objects/info/alternates` naming another repository's
    objects on the machine: a checkpoint the planted log names could then write that repository's
    files into the workspace, where the model reads them. The file is removed when the store opens."""
    other = tmp_path / "private"
    other.mkdir()
    (other / "secret.txt").write_text("private\n")
    elsewhere = Checkpoints(other, tmp_path / "other-session").snapshot("theirs")
    ws, session = tmp_path / "ws", tmp_path / "session"
    ws.mkdir()
    (ws / "a.txt").write_text("hi\n")
    Checkpoints(ws, session).snapshot("ours")
    info = session / SHADOW / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(str(tmp_path / "other-session" / SHADOW / "objects") + "\n")
    with pytest.raises(CheckpointError):
        Checkpoints(ws, session).restore(elsewhere.commit)
    assert not (ws / "secret.txt").exists() and not (info / "alternates").exists()
