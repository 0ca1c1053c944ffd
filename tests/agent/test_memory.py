"""The session-memory note: when it updates, what it is written from, where it lands, in the background."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_cli.agent.memory import SECTIONS, SessionMemory
from agent_cli.context.model import ContextConfig
from agent_cli.context.prompts import load_prompt
from agent_cli.core.types import Block, BlockMeta, Message, Trust

REPO = Path(__file__).resolve().parents[2]


class Counter:
    def text(self, text: str) -> int:
        return len(text) // 4 + 1

    def message(self, message: Message) -> int:
        return 4 + sum(self.text(b.text) for b in message.blocks)


NOTE = "# Session memory\n\n" + "\n\n".join(f"{s}\n- item" for s in SECTIONS)


class Summarizer:
    def __init__(
        self, replies: list[str] | None = None, fail: bool = False, gate: asyncio.Event | None = None
    ):
        self.replies = list(replies or [])
        self.fail = fail
        self.gate = gate
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, system: str, content: str) -> str:
        self.calls.append((system, content))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError("rate limited")
        return self.replies.pop(0) if self.replies else NOTE


def say(text: str, turn: int = 1) -> Message:
    return Message("user", (Block.text_block(text, BlockMeta(Trust.USER, "user")),), turn)


def answer(text: str, turn: int = 1) -> Message:
    return Message("assistant", (Block.text_block(text, BlockMeta(Trust.ASSISTANT, "assistant")),), turn)


def memory(tmp_path: Path, summarizer: Summarizer, **config) -> SessionMemory:
    session = tmp_path / "session"
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    return SessionMemory(
        session, workspace, summarizer, ContextConfig(**config), Counter(), prompts=load_prompt
    )


def test_thresholds_first_note_then_tokens_and_tool_calls(tmp_path):
    mem = memory(tmp_path, Summarizer())
    assert not mem.should_update(9_999, 50, 9_999)
    assert mem.should_update(10_000, 0, 10_000)
    mem.note = NOTE
    assert not mem.should_update(4_999, 10, 80_000)
    assert not mem.should_update(9_000, 2, 80_000)
    assert mem.should_update(5_000, 3, 80_000)


async def test_update_writes_the_note_atomically_and_mirrors_it(tmp_path):
    summarizer = Summarizer(replies=[NOTE + "\n- deploy key sk-ant-abcdefghijklmnopqrstuvwxyz"])
    mem = memory(tmp_path, summarizer)
    view = [say("Add retries to the client; no new dependencies."), answer("Done: see client.py.")]
    note = await mem.update(view, 2)
    assert "sk-ant-abcdef" not in note and "[REDACTED" in note
    assert mem.note == note and mem.covers == 2
    assert mem.path.read_text() == note + "\n"
    assert (tmp_path / "ws" / ".session_memory.md").read_text() == note + "\n"
    assert not [p for p in mem.path.parent.iterdir() if p.name.endswith(".tmp")]
    system, content = summarizer.calls[0]
    assert "session-memory note" in system and "Add retries to the client" in content
    for section in SECTIONS:
        assert section in content


async def test_update_rewrites_from_the_previous_note_and_only_the_new_turns(tmp_path):
    summarizer = Summarizer(replies=["# Session memory\n## Current Goal\n- FIRST NOTE", NOTE])
    mem = memory(tmp_path, summarizer)
    view = [say("first request"), answer("first answer")]
    await mem.update(view, 2)
    view += [say("second request", 2), answer("second answer", 2)]
    await mem.update(view, 4)
    content = summarizer.calls[1][1]
    previous, new_turns = content.split("<new-turns>", 1)
    assert "FIRST NOTE" in previous and "FIRST NOTE" not in new_turns
    assert "second request" in new_turns and "first request" not in new_turns
    assert mem.covers == 4


async def test_note_is_capped(tmp_path):
    long_note = NOTE + "\n" + "\n".join(f"- finding {i}: " + "detail " * 20 for i in range(400))
    mem = memory(tmp_path, Summarizer(replies=[long_note]), memory_max_tokens=500)
    note = await mem.update([say("go"), answer("ok")], 2)
    assert Counter().text(note) <= 500
    assert note.startswith("# Session memory") and note.endswith("[note cut to its size cap]")


async def test_load_restores_note_and_coverage_for_resume(tmp_path):
    mem = memory(tmp_path, Summarizer())
    await mem.update([say("go"), answer("ok"), say("more", 2)], 3)
    again = memory(tmp_path, Summarizer())
    assert again.load() == NOTE and again.covers == 3
    (tmp_path / "session" / "session_memory.json").write_text("{not json")
    third = memory(tmp_path, Summarizer())
    assert third.load() == NOTE and third.covers == 0
    assert memory(tmp_path / "other", Summarizer()).load() == ""


async def test_a_failed_update_raises_and_keeps_the_previous_note(tmp_path):
    mem = memory(tmp_path, Summarizer())
    await mem.update([say("go"), answer("ok")], 2)
    mem.summarizer = Summarizer(fail=True)
    with pytest.raises(RuntimeError, match="rate limited"):
        await mem.update([say("go"), answer("ok"), say("more", 2)], 3)
    assert mem.note == NOTE and mem.covers == 2 and mem.path.read_text() == NOTE + "\n"
    mem.summarizer = Summarizer(replies=["   "])
    with pytest.raises(ValueError, match="empty"):
        await mem.update([say("go"), answer("ok"), say("more", 2)], 3)


async def test_schedule_runs_in_the_background_one_at_a_time(tmp_path):
    gate = asyncio.Event()
    mem = memory(tmp_path, Summarizer(gate=gate))
    done: list[str | None] = []
    task = mem.schedule([say("go"), answer("ok")], 2, on_done=done.append)
    assert task is not None and mem.updating
    assert mem.schedule([say("go")], 1) is None  # one update at a time
    assert mem.note == ""  # the caller was not blocked
    gate.set()
    assert await task == NOTE and done == [NOTE] and not mem.updating


async def test_schedule_reports_a_failure_instead_of_raising(tmp_path):
    mem = memory(tmp_path, Summarizer(fail=True))
    task = mem.schedule([say("go"), answer("ok")], 2)
    assert task is not None
    assert await task is None
    assert "rate limited" in mem.last_error and mem.note == ""
    await mem.wait()


def test_the_example_note_has_every_section():
    example = (REPO / ".session_memory.md.example").read_text()
    assert example.startswith("# Session memory")
    assert all(section in example for section in SECTIONS)
