"""bash: exit codes, caps, and that a timeout or an interrupt leaves no process of the command behind.

This machine's init does not reap orphans, so a killed background child would linger as a zombie
member of the group and `os.killpg(pgid, 0)` would still succeed. The `reaper` fixture makes the
test process a child subreaper for the test, so the orphans come to us and we can reap them; a
child that is still alive is not reaped by waitpid(WNOHANG) and keeps the group alive, failing the test.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli.tools.base import ToolContext
from agent_cli.tools.bash import BashTool, run_command

PR_SET_CHILD_SUBREAPER = 36


@pytest.fixture
def reaper():
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux prctl")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.skip("cannot become a child subreaper")
    pids: list[int] = []
    yield pids
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    for pid in pids:  # if a test failed, leave nothing running
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def group_gone(pgid: int, children: list[int], wait_seconds: float = 10.0) -> bool:
    """Reap the orphaned children we know of, then ask the kernel whether the group still exists."""
    deadline = time.monotonic() + wait_seconds
    while True:
        for pid in children:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


SPAWNER = "echo pg=$$; sleep 100 & echo bg=$!; sleep 100"


def ids(output: str) -> tuple[int, int]:
    pg = int(re.search(r"pg=(\d+)", output).group(1))
    bg = int(re.search(r"bg=(\d+)", output).group(1))
    return pg, bg


async def test_success_output(call) -> None:
    result = await call("bash", command="echo hello; echo err >&2", description="say hello")
    assert not result.is_error
    assert result.output == "hello\nerr\n"
    assert result.meta == {"exit_code": 0, "command": "echo hello; echo err >&2"}


async def test_runs_in_the_workspace_with_empty_stdin(ws: Path, call) -> None:
    result = await call("bash", command="pwd; cat; echo done")
    assert result.output == f"{ws}\ndone\n"


async def test_no_output(call) -> None:
    result = await call("bash", command="true")
    assert result.output == "(no output)" and not result.is_error


async def test_non_zero_exit(call) -> None:
    result = await call("bash", command="echo failing; exit 3")
    assert result.is_error
    assert result.output == "failing\nexit code 3"
    assert result.meta["exit_code"] == 3


async def test_huge_output_is_capped_with_head_and_tail(call) -> None:
    result = await call("bash", command="yes | head -c 20000000; echo; echo THE-END")
    assert not result.is_error
    assert len(result.output) <= 30_100
    assert result.output.startswith("y\ny\n")
    assert result.output.rstrip().endswith("THE-END")
    marker = re.search(r"… \[(\d+) chars / (\d+) lines omitted\] …", result.output)
    assert marker is not None
    assert int(marker.group(1)) > 19_900_000 and int(marker.group(2)) > 9_900_000


async def test_streams_output_to_on_output(ws: Path) -> None:
    chunks: list[str] = []
    ctx = ToolContext(workspace=ws, on_output=chunks.append)
    result = await BashTool().run({"command": "for i in 1 2 3; do echo line$i; done"}, ctx)
    assert "".join(chunks) == "line1\nline2\nline3\n" == result.output


async def test_background_child_holding_the_pipe_does_not_block(call, reaper) -> None:
    result = await call("bash", command="sleep 100 & echo bg=$!", timeout=60)
    bg = int(re.search(r"bg=(\d+)", result.output).group(1))
    reaper.append(bg)
    assert not result.is_error and result.meta["exit_code"] == 0
    assert "timed out" not in result.output


async def test_timeout_kills_the_whole_group(call, reaper) -> None:
    result = await call("bash", command=SPAWNER, timeout=1)
    assert result.is_error
    assert result.output.endswith("timed out after 1s")
    assert "pg=" in result.output  # the partial output is kept
    pg, bg = ids(result.output)
    reaper.append(bg)
    assert group_gone(pg, [bg])


async def test_cancellation_kills_the_group_and_propagates(ws: Path, reaper) -> None:
    seen: list[str] = []
    started = asyncio.Event()

    def on_output(chunk: str) -> None:
        seen.append(chunk)
        if "bg=" in "".join(seen):
            started.set()

    ctx = ToolContext(workspace=ws, on_output=on_output)
    task = asyncio.create_task(BashTool().run({"command": SPAWNER}, ctx))
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pg, bg = ids("".join(seen))
    reaper.append(bg)
    assert group_gone(pg, [bg])


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_an_interrupt_while_the_sandbox_starts_ends_the_command_at_once(ws: Path) -> None:
    """Esc a moment after `bash` was called, while bwrap was still starting: asyncio's own clean-up
    killed only bwrap's first process, and the sandbox it had forked ran on without a parent, holding
    the pipe: the turn waited for the whole command (30 s in the API tests, or for ever)."""
    sandbox = ("bwrap", "--die-with-parent", "--unshare-pid", "--unshare-user", "--ro-bind", "/", "/")
    sandbox += ("--dev", "/dev", "--proc", "/proc")
    ctx = ToolContext(workspace=ws)
    for step in range(30):  # interrupted at a spread of moments early in the start
        task = asyncio.create_task(run_command("sleep 600", 900, ctx, sandbox))
        for _ in range(1 + step % 3):
            await asyncio.sleep(0)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=120)  # the command alone would take 600 s
        assert done, f"interrupted at step {step}: the turn still waits for the command"
    assert not [line for line in _processes() if "sleep 600" in line and "bwrap" in line]


def _processes() -> list[str]:
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()


async def test_bad_timeouts(call) -> None:
    negative = await call("bash", command="echo x", timeout=-5)
    assert negative.is_error and "positive" in negative.output
    wrong = await call("bash", command="echo x", timeout="soon")
    assert wrong.is_error and "timeout" in wrong.output


async def test_empty_command(call) -> None:
    result = await call("bash", command="   ")
    assert result.is_error and "empty" in result.output


def test_target_is_the_first_line_cut() -> None:
    tool = BashTool()
    assert tool.target({"command": "pytest -q\necho done"}) == "pytest -q …"
    long = tool.target({"command": "echo " + "x" * 200})
    assert len(long) == 80 and long.endswith("…")
