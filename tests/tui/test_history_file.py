"""Prompt history survives a restart: the person's prompts are kept in a file of their own (0600 in a
0700 folder under $XDG_STATE_HOME), bounded, without big pastes, written so that sessions running
at once lose nothing; Up after a restart (with no key too) brings them back."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

from textual import events
from tui_helpers import type_text, wait_until

from agent_cli.api.options import Prepared
from agent_cli.cli.tui_launch import tui_app
from agent_cli.settings.config import Config
from agent_cli.tools.sandbox.protected import is_protected
from agent_cli.tui.history_file import LIMIT, MAX_CHARS, TRIM_SLACK, HistoryFile, history_path
from agent_cli.tui.widgets.error_message import ErrorMessage


def _no_key(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


async def test_up_after_a_restart_brings_back_the_prompt_sent_before(workspace, monkeypatch) -> None:
    _no_key(monkeypatch)
    app = tui_app(Prepared(Config(), workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ErrorMessage)))
        await type_text(pilot, "explain the parser")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.query(ErrorMessage)) == 2)  # "Up brings your prompt back"
    again = tui_app(Prepared(Config(), workspace))
    async with again.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(again.query(ErrorMessage)))
        await pilot.press("up")
        assert again.prompt.text == "explain the parser"
    path = history_path()
    assert path.parent == Path(os.environ["XDG_STATE_HOME"]) / "agent"
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert not (workspace / ".agent").exists() or not list((workspace / ".agent").rglob("*history*"))


async def test_a_prompt_with_a_pasted_chip_is_not_kept_past_its_session(workspace, monkeypatch) -> None:
    _no_key(monkeypatch)
    app = tui_app(Prepared(Config(), workspace))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: bool(app.query(ErrorMessage)))
        await type_text(pilot, "kept")
        await pilot.press("enter")
        app.prompt.text_area.post_message(events.Paste("x\n" * 50))
        await wait_until(pilot, lambda: "[Pasted text" in app.prompt.text)
        await type_text(pilot, " look")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.text == "")
    assert HistoryFile(history_path()).load() == ["kept"]


def test_the_file_keeps_the_newest_prompts_and_skips_what_it_cannot_read(tmp_path: Path) -> None:
    store = HistoryFile(tmp_path / "state" / "agent" / "prompt-history.jsonl")
    assert store.load() == [] and store.problem == ""
    for i in range(LIMIT + TRIM_SLACK + 1):
        assert store.append(f"prompt {i}")
    lines = store.path.read_text().splitlines()
    assert len(lines) == LIMIT  # cut back once past LIMIT + TRIM_SLACK
    assert (
        store.load()[0] == f"prompt {TRIM_SLACK + 1}" and store.load()[-1] == f"prompt {LIMIT + TRIM_SLACK}"
    )
    assert not store.append("x" * (MAX_CHARS + 1)) and not store.append("   ")
    with open(store.path, "a") as f:
        f.write('{"prompt": "torn')  # a line another writer never finished
    store.append("after the torn line")
    assert store.load()[-1] == "after the torn line" and store.load()[-2] == f"prompt {LIMIT + TRIM_SLACK}"


def _writer(path: str, who: int, count: int) -> None:
    store = HistoryFile(Path(path))
    for i in range(count):
        store.append(f"session {who} prompt {i} " + "é" * 300)


def test_sessions_writing_at_once_lose_nothing_and_tear_nothing(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "prompt-history.jsonl"
    count = (LIMIT + TRIM_SLACK) // 4 + 10  # four writers together pass the cut-back point once
    workers = [multiprocessing.Process(target=_writer, args=(str(path), w, count)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    assert all(p.exitcode == 0 for p in workers)
    lines = path.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line)["prompt"] for line in lines]  # not one torn line
    assert len(entries) == LIMIT + (4 * count - (LIMIT + TRIM_SLACK + 1)) and len(set(entries)) == len(
        entries
    )
    assert HistoryFile(path).load() == entries[-LIMIT:]
    for w in range(4):  # each writer's prompts in its order, its newest kept
        mine = [int(p.split()[3]) for p in entries if p.startswith(f"session {w} ")]
        assert mine == sorted(mine) and mine[-1] == count - 1


def test_a_file_that_is_not_the_persons_or_a_link_is_not_used(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.jsonl"
    real.write_text('{"prompt": "planted"}\n')
    link = tmp_path / "agent" / "prompt-history.jsonl"
    link.parent.mkdir()
    link.symlink_to(real)
    store = HistoryFile(link)
    assert store.load() == [] and "cannot read" in store.take_problem()
    assert not store.append("mine") and real.read_text() == '{"prompt": "planted"}\n'
    assert "not saved" in store.take_problem() and store.take_problem() == ""  # said once


def test_a_workspace_cannot_plant_prompts_in_it(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(home))
    path = history_path()
    assert path == home / ".local" / "state" / "agent" / "prompt-history.jsonl"
    assert is_protected(path, tmp_path / "ws", home) == "~/.local/state/agent"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert is_protected(history_path(), tmp_path / "ws", home) == str(tmp_path / "state" / "agent")
