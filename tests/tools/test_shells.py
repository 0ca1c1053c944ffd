"""Background shells, tool by tool: `bash` with run_in_background returns the id at once, bash_output
returns what is new (filtered, capped, with the status), kill_shell ends the group, and every bad
input is one clear line. The output store keeps every byte under the ceiling and counts the drop."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest

from agent_cli.context.store import DirStore
from agent_cli.core.types import ToolCall
from agent_cli.tools.base import OutputLimits, ToolContext, ToolResult
from agent_cli.tools.registry import ToolRegistry, default_tools, run_call
from agent_cli.tools.sandbox.bwrap import Sandbox, SandboxPolicy
from agent_cli.tools.shells import output as output_module
from agent_cli.tools.shells.manager import ShellManager, group_alive
from agent_cli.tools.shells.output import Dropped, ShellOutput
from agent_cli.tools.shells.reminders import ShellReminders
from agent_cli.tools.shells.tools import BashOutputTool, KillShellTool

PATIENCE = 60.0
TEMPLATE = "Shells:\n{shells}\nbash_output reads them."


class Harness:
    def __init__(self, ws: Path, session: Path, **ctx: object) -> None:
        self.shells = ShellManager()
        self.registry = ToolRegistry(
            [*default_tools(), BashOutputTool(self.shells), KillShellTool(self.shells)]
        )
        self.ctx = ToolContext(ws, session, DirStore(session), shells=self.shells, **ctx)  # type: ignore[arg-type]
        self.calls = 0

    async def __call__(self, name: str, **input: object) -> ToolResult:
        self.calls += 1
        call = ToolCall(id=f"toolu_{self.calls}", name=name, input=input)
        ctx = self.ctx.__class__(**{**self.ctx.__dict__, "call_id": call.id})
        return await run_call(self.registry, call, ctx)

    async def start(self, command: str) -> str:
        result = await self("bash", command=command, run_in_background=True)
        assert not result.is_error, result.output
        return result.output.splitlines()[0].rsplit("ID: ", 1)[1]

    async def ended(self, shell_id: str) -> None:
        shell = self.shells.get(shell_id)
        assert shell is not None
        await until(lambda: not shell.running)


async def until(condition) -> None:
    """Wait for `condition()` (a real process has to get there), for PATIENCE seconds at most."""
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the condition never became true"
        await asyncio.sleep(0.02)


@pytest.fixture
async def shells(ws: Path, tmp_path: Path):
    harness = Harness(ws, tmp_path / "session")
    yield harness
    await harness.shells.aclose()


# -- the output store -----------------------------------------------------------------------------------


def test_below_the_ceiling_the_file_is_the_output_byte_for_byte(tmp_path: Path) -> None:
    out = ShellOutput(tmp_path / "bash_1.txt", 1_000)
    text = "héllo wörld ✓\n" * 50
    for i in range(0, len(text), 7):
        out.feed_bytes(text[i : i + 7].encode())  # pieces that cut characters in two
    out.finish()
    assert (tmp_path / "bash_1.txt").read_text() == text
    assert out.text(0) == text and out.text(15, 30) == text[15:30] and out.dropped == 0


def test_past_the_ceiling_head_and_tail_are_kept_and_the_drop_is_counted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(output_module, "MARK_EVERY", 64)  # many seek marks, multi-byte text across them
    out = ShellOutput(tmp_path / "bash_1.txt", 1_000)
    stream = "".join(f"{n:04d}é\n" for n in range(2_000))  # 12,000 chars, each line 6 chars
    for i in range(0, len(stream), 97):
        out.feed(stream[i : i + 97])
        assert out.head_chars + len("".join(out._tail)) <= 1_000  # bounded while it streams
    assert out.total == len(stream) and out.head_chars == 900 and out.dropped == len(stream) - 1_000
    assert list(out.read(850, 11_050)) == [stream[850:900], Dropped(10_150)]
    pieces = list(out.read(850, 11_950))
    assert pieces[0] == stream[850:900] and pieces[1] == Dropped(len(stream) - 1_000)
    assert "".join(p for p in pieces[2:] if isinstance(p, str)) == stream[-100:][:50]
    assert out.text(123, 777) == stream[123:777]  # a span of the head, read from the file via a mark
    out.finish()
    stored = (tmp_path / "bash_1.txt").read_text()
    assert stored.startswith(stream[:900]) and stored.endswith(stream[-100:])
    assert f"{len(stream) - 1_000:,} chars dropped here" in stored
    assert len(stored) < 1_200


# -- the tools ----------------------------------------------------------------------------------------------


async def test_run_in_background_returns_the_id_at_once_and_output_is_read_as_it_comes(shells, ws) -> None:
    shell_id = await shells.start("until [ -e go ]; do sleep 0.02; done; seq 1 5; printf 'no newline'")
    assert shell_id == "bash_1"
    first = await shells("bash_output", bash_id=shell_id)
    assert first.output == "[bash_1: running · no new output · all of it: recall ref bash_1]"
    (ws / "go").touch()
    await shells.ended(shell_id)
    rest = await shells("bash_output", bash_id=shell_id, filter="^[24]$|newline")
    assert rest.output.splitlines()[:3] == ["2", "4", "no newline"]
    assert "exited with code 0" in rest.output and "3 of 6 new lines match" in rest.output
    again = await shells("bash_output", bash_id=shell_id)  # finished and read: said once, then this
    assert again.is_error and "has finished (exited with code 0)" in again.output
    assert "recall ref bash_1" in again.output
    store = shells.ctx.store
    assert store.get("bash_1") == "1\n2\n3\n4\n5\nno newline"  # every byte, for recall


async def test_a_filtered_read_of_a_running_shell_leaves_its_unfinished_line(shells, ws) -> None:
    shell_id = await shells.start("printf 'ab'; until [ -e go ]; do sleep 0.02; done; printf 'c\\n'")
    out = shells.shells.get(shell_id).output
    await until(lambda: out.total >= 2)
    held = await shells("bash_output", bash_id=shell_id, filter="abc")
    assert "no new output" in held.output and "its unfinished last line waits" in held.output
    (ws / "go").touch()
    await shells.ended(shell_id)
    done = await shells("bash_output", bash_id=shell_id, filter="abc")
    assert done.output.splitlines()[0] == "abc"  # the line was not lost to the first read


async def test_a_large_read_is_a_preview_pointing_into_the_shell_s_own_ref(shells) -> None:
    shell_id = await shells.start("seq 1 50000")
    await shells.ended(shell_id)
    result = await shells("bash_output", bash_id=shell_id)
    assert result.output.startswith('<persisted-output ref="bash_1"')
    assert len(result.output) < 5_000 and result.meta["output_ref"] == "bash_1"
    assert "chars 0-288,894 of bash_1" in result.output and "50,000 lines" in result.output
    assert not (shells.ctx.session_dir / "tool-results" / "toolu_2.txt").exists()  # no second copy


async def test_bad_input_is_one_clear_line_and_loses_nothing(shells, ws) -> None:
    unknown = await shells("bash_output", bash_id="bash_9")
    assert unknown.is_error and unknown.output == "no background shell 'bash_9' (this session's shells: none)"
    shell_id = await shells.start("echo one; until [ -e go ]; do sleep 0.02; done")
    out = shells.shells.get(shell_id).output
    await until(lambda: out.total >= 4)
    bad = await shells("bash_output", bash_id=shell_id, filter="(unclosed")
    assert (
        bad.is_error
        and bad.output.startswith("invalid filter '(unclosed'")
        and "nothing was read" in bad.output
    )
    good = await shells("bash_output", bash_id=shell_id)
    assert good.output.splitlines()[0] == "one"  # the bad call consumed nothing
    (ws / "go").touch()
    await shells.ended(shell_id)
    killed_late = await shells("kill_shell", shell_id=shell_id)
    assert killed_late.is_error and "has already finished (exited with code 0): there is nothing to kill" in (
        killed_late.output
    )
    nobody = await shells("kill_shell", shell_id="bash_7")
    assert nobody.is_error and "no background shell 'bash_7'" in nobody.output


async def test_a_backtracking_filter_is_stopped_with_a_clear_error_and_loses_nothing(shells) -> None:
    shell_id = await shells.start("printf 'a%.0s' $(seq 1 3000); echo '!'; echo done")
    await shells.ended(shell_id)
    slow = await shells("bash_output", bash_id=shell_id, filter="(a|aa)+$")  # minutes under `re`
    assert slow.is_error and "took over 2 s to match" in slow.output and "nothing was lost" in slow.output
    whole = await shells("bash_output", bash_id=shell_id)
    assert whole.output.splitlines()[1] == "done"  # the stopped read moved nothing


async def test_kill_shell_ends_the_whole_group(shells) -> None:
    shell_id = await shells.start("sleep 300 & sleep 301; wait")
    shell = shells.shells.get(shell_id)
    result = await shells("kill_shell", shell_id=shell_id)
    assert not result.is_error and result.output.startswith("Killed bash_1 (sleep 300 & sleep 301; wait).")
    assert not group_alive(shell.pgid) and shell.status == "killed"
    final = await shells("bash_output", bash_id=shell_id)
    assert not final.is_error and "bash_1: killed" in final.output


async def test_a_1_gb_printer_stays_under_the_ceiling_and_says_what_it_dropped(ws, tmp_path) -> None:
    harness = Harness(ws, tmp_path / "session", limits=OutputLimits(ceiling_chars=1_000_000))
    shell_id = await harness.start("yes 0123456789abcdef | head -c 1000000000")
    await harness.ended(shell_id)
    stored = harness.ctx.session_dir / "tool-results" / f"{shell_id}.txt"
    assert stored.stat().st_size < 1_001_000  # the disk holds the ceiling, not the gigabyte
    result = await harness("bash_output", bash_id=shell_id)
    assert "999,000,000 chars were dropped at the storage ceiling" in result.output
    assert result.meta["output_chars"] == 1_000_000_000
    assert "999,000,000 chars dropped here" in stored.read_text()


async def test_ids_go_on_past_the_shells_an_earlier_run_of_the_session_stored(ws, tmp_path) -> None:
    session = tmp_path / "session"
    DirStore(session).put("bash_4", "an earlier run's output")
    harness = Harness(ws, session)
    try:
        assert await harness.start("true") == "bash_5"
        gone = await harness("bash_output", bash_id="bash_4")
        assert gone.is_error and "belonged to an earlier run of this session" in gone.output
        assert "recall ref bash_4" in gone.output
    finally:
        await harness.shells.aclose()


async def test_without_a_manager_run_in_background_is_refused_clearly(ws) -> None:
    result = await run_call(
        default_tools(),
        ToolCall("toolu_1", "bash", {"command": "sleep 1", "run_in_background": True}),
        ToolContext(ws),
    )
    assert result.is_error and "background shells are not available here" in result.output


async def test_a_background_shell_runs_in_the_sandbox(ws, tmp_path) -> None:
    sandbox = Sandbox(SandboxPolicy(), ws)
    if not sandbox.status().available:
        pytest.skip(f"bubblewrap cannot run here: {sandbox.status().problem}")
    harness = Harness(ws, tmp_path / "session", sandbox=sandbox, permission_mode=lambda: "yolo")
    target = Path.home() / f"agent-shell-{uuid.uuid4().hex}"
    started = await harness("bash", command=f"touch {target}; echo $?", run_in_background=True)
    assert started.meta["sandboxed"] is True
    await harness.ended("bash_1")
    result = await harness("bash_output", bash_id="bash_1")
    assert "Read-only file system" in result.output and not target.exists()
    await harness.shells.aclose()


# -- the reminders -----------------------------------------------------------------------------------------


async def test_reminders_say_the_running_shells_after_a_compaction_and_an_end_once(shells, ws) -> None:
    reminders = ShellReminders(shells.shells, TEMPLATE)
    assert reminders.pending(0) == ""  # nothing runs: nothing to say
    await shells.start("until [ -e go ]; do sleep 0.02; done")
    await shells.start("sleep 300")
    assert reminders.pending(0) == ""  # the view shows the ids: the bash results said them
    said = reminders.pending(1)  # a compaction may have cut them
    assert "- bash_1 (running): until [ -e go ]" in said and "- bash_2 (running): sleep 300" in said
    assert reminders.pending(1) == ""
    assert "bash_2 (running)" in reminders.pinned()  # T2/T4 pin the list...
    assert reminders.pending(2) == ""  # ...and the next message does not repeat it
    (ws / "go").touch()
    await shells.ended("bash_1")
    assert (
        reminders.pending(2)
        == "Shells:\n- bash_1 (exited with code 0): until [ -e go ]; do sleep 0.02; done\nbash_output reads them."
    )
    assert reminders.pending(2) == ""  # an end is said once


def test_a_group_is_alive_while_a_member_runs() -> None:
    assert group_alive(os.getpgrp())


async def test_a_protected_path_a_running_shell_makes_is_set_aside_while_it_runs(ws, tmp_path) -> None:
    """A background shell may run for hours: what it makes at a protected path that did not exist
    (editor settings that run code, say) is moved aside while it runs, not only when it ends."""
    sandbox = Sandbox(SandboxPolicy(), ws)
    if not sandbox.status().available:
        pytest.skip(f"bubblewrap cannot run here: {sandbox.status().problem}")
    harness = Harness(ws, tmp_path / "session", sandbox=sandbox, permission_mode=lambda: "yolo")
    try:
        await harness.start("mkdir .vscode && echo '{}' > .vscode/tasks.json; sleep 300")
        await until(lambda: list((ws / ".agent" / "quarantine").rglob("tasks.json")))
        assert not (ws / ".vscode").exists() and harness.shells.get("bash_1").running
        result = await harness("bash_output", bash_id="bash_1")
        assert "moved aside (.vscode -> .agent/quarantine/" in result.output
    finally:
        await harness.shells.aclose()
