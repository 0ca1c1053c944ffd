"""SVG snapshots (pytest-textual-snapshot) of the screens a person looks at most.

Everything on screen is fixed: durations come from the script, animations are off (no spinner
frames), the cursor does not blink. Update with `pytest tests/tui --snapshot-update` and look.
"""

from __future__ import annotations

from fake_backend import Ask, FakeBackend, Pause, tool_call
from textual.pilot import Pilot
from textual.widgets import Markdown
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.agent.api import SessionInfo
from agent_cli.core.events import (
    ContextStatus,
    ContextUpdate,
    TextDelta,
    ToolFinished,
    ToolStarted,
    UsageUpdate,
)
from agent_cli.tui.app import AgentApp, create_app
from agent_cli.tui.screens.permission_screen import PermissionScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.compaction_notice import CompactionNotice

SIZE = (100, 30)
READ = tool_call("t1", "read_file", path="src/parse.py")
BASH = tool_call("t2", "bash", command="pytest tests/test_parse.py -q")
SOURCE = "\n".join(
    [
        "1  import re",
        "2  ",
        "3  def split_fields(line: str) -> list[str]:",
        '4      """Split a CSV-ish line."""',
        "5      parts = re.split(r',\\s*', line)",
        "6      return [p for p in parts if p]",
        "7  ",
        "8  def parse(text: str) -> list[list[str]]:",
        "9      return [split_fields(l) for l in text.splitlines()]",
        "10 ",
    ]
)


def mid_task_backend() -> FakeBackend:
    script = [
        TextDelta(text="I'll read the parser first, then run "),
        TextDelta(
            text="the failing test.\n\n- `split_fields` drops **empty** fields\n- that breaks trailing commas"
        ),
        ToolStarted(call=READ, target="src/parse.py"),
        ToolFinished(call=READ, target="src/parse.py", output=SOURCE, duration=0.04),
        ContextUpdate(status=ContextStatus(used=156_400, budget=200_000)),
        UsageUpdate(cost_usd=0.4821, cache_hit_rate=0.91),
        ToolStarted(call=BASH, target="pytest tests/test_parse.py -q"),
        Pause("running"),
    ]
    return FakeBackend({"fix the trailing-comma bug in the parser": script})


def quiet(app: AgentApp) -> AgentApp:
    app.animation_level = "none"
    return app


async def settle(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    app.prompt.text_area.cursor_blink = False
    await wait_until(
        pilot,
        lambda: all(m.query_one(Markdown).source == m.text for m in app.query(AssistantMessage)),
    )
    await pilot.pause()


async def submit(pilot: Pilot, text: str) -> None:
    app = pilot.app
    assert isinstance(app, AgentApp)
    app.prompt.set_text(text)
    await pilot.pause()
    app.prompt.hide_completions()
    await pilot.press("enter")


def test_main_screen_mid_task(snap_compare) -> None:
    backend = mid_task_backend()

    async def run_before(pilot: Pilot) -> None:
        await type_text(pilot, "fix the trailing-comma bug in the parser")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "running" in backend.reached)
        await settle(pilot)

    assert snap_compare(quiet(create_app(backend=backend)), terminal_size=SIZE, run_before=run_before)


def test_context_screen(snap_compare) -> None:
    backend = FakeBackend(status=ContextStatus(used=51_200, budget=180_000, window=200_000))

    async def run_before(pilot: Pilot) -> None:
        await submit(pilot, "/context")
        await settle(pilot)

    assert snap_compare(quiet(create_app(backend=backend)), terminal_size=SIZE, run_before=run_before)


def test_permission_modal(snap_compare) -> None:
    """Armed (the key hints lit), with the full command, where it runs and the rule "always" saves."""
    ask = Ask(
        call=tool_call("p1", "bash", command="rm -rf build dist"),
        target="rm -rf build dist",
        reason="`rm -rf build dist` is not allowed by any rule",
        rule="saves the rule Bash(rm:*) for this session",
        detail="rm -rf build dist",
        detail_kind="command",
        cwd="/home/dev/project",
    )
    backend = FakeBackend({"clean the build output": [TextDelta(text="Removing the build output."), ask]})
    clock = FakeClock()

    async def run_before(pilot: Pilot) -> None:
        await submit(pilot, "clean the build output")
        await wait_until(pilot, lambda: "ask:bash" in backend.log)
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen))
        clock.advance(5)
        await wait_until(pilot, lambda: pilot.app.screen.armed_shown)
        await settle(pilot)

    app = quiet(create_app(backend=backend, clock=clock))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_edit_permission_modal_shows_the_diff(snap_compare) -> None:
    """Before it is armed: the hint says keys go to the prompt; the diff is highlighted."""
    diff = (
        "--- a/src/parse.py\n+++ b/src/parse.py\n@@ -1,4 +1,4 @@\n def split_fields(line):\n"
        "-    return line.split(',')[:-1]\n+    return [f for f in line.split(',') if f]\n"
    )
    ask = Ask(
        call=tool_call("e1", "edit_file", path="src/parse.py", old_string="x", new_string="y"),
        target="src/parse.py",
        reason="edit_file asks in ask mode",
        rule="saves the rule Edit(src/parse.py) for this session",
        detail=diff,
        detail_kind="diff",
    )
    backend = FakeBackend({"fix it": [ask]})

    async def run_before(pilot: Pilot) -> None:
        await submit(pilot, "fix it")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen))
        await settle(pilot)

    app = quiet(create_app(backend=backend, clock=FakeClock()))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_compaction_notice_expanded(snap_compare) -> None:
    backend = FakeBackend(status=ContextStatus(used=171_300, budget=200_000))

    async def run_before(pilot: Pilot) -> None:
        await submit(pilot, "/compact keep the parser work")
        app = pilot.app
        # click only once the title is laid out and the turn has finished painting (a click on a
        # widget with no region yet lands nowhere, which made this test fail under load)
        await wait_until(
            pilot,
            lambda: (
                bool(app.query("CompactionNotice CollapsibleTitle"))
                and app.query_one("CompactionNotice CollapsibleTitle").region.width > 0
                and not app.turn_running
            ),
        )
        notice = app.query_one(CompactionNotice)
        await pilot.click("CompactionNotice CollapsibleTitle")
        await wait_until(pilot, lambda: not notice.collapsed)
        await settle(pilot)

    assert snap_compare(quiet(create_app(backend=backend)), terminal_size=SIZE, run_before=run_before)


def test_welcome_screen(snap_compare) -> None:
    sessions = [SessionInfo("s-earlier", "2026-11-20T10:00:00", "fix the parser", 4, "")]
    backend = FakeBackend(sessions=sessions)

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)

    assert snap_compare(quiet(create_app(backend=backend)), terminal_size=SIZE, run_before=run_before)
