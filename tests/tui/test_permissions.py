"""The permission modal: Enter allows once, `a` always, Esc or `d` denies; nothing runs before; and it
cannot be answered by keys that belong to typing in progress (the clock is a fake the tests move)."""

from __future__ import annotations

import pytest
from fake_backend import Ask, FakeBackend, Pause, tool_call
from rich.console import Console
from textual.widgets import Button, Static
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.core.events import TextDelta
from agent_cli.tui.app import create_app
from agent_cli.tui.screens.permission_screen import PermissionScreen
from agent_cli.tui.widgets.tool_call import ToolCall

RM = tool_call("p1", "bash", command="rm -rf build")
DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


def backend(ask: Ask | None = None) -> FakeBackend:
    ask = ask or Ask(
        call=RM,
        target="rm -rf build",
        reason="bash asks in ask mode",
        output="removed",
        duration=0.3,
        rule="saves the rule Bash(rm:*) for this session",
        detail="rm -rf build",
        detail_kind="command",
        cwd="/work/project",
    )
    return FakeBackend({"clean": [ask, TextDelta(text="Cleaned.")]})


def shown(widget: Static) -> str:
    """What a Static shows, as plain text (rendered the way Rich would print it)."""
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


async def ask_and_wait(pilot, app) -> PermissionScreen:
    await type_text(pilot, "clean")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
    return app.screen


async def arm(pilot, screen: PermissionScreen, clock: FakeClock) -> None:
    clock.advance(5)
    await wait_until(pilot, lambda: screen.armed_shown)


@pytest.mark.parametrize(
    ("key", "decision"),
    [("enter", "allow_once"), ("y", "allow_once"), ("a", "allow_always"), ("escape", "deny"), ("d", "deny")],
)
async def test_each_key_resolves_the_future_once_armed(key: str, decision: str) -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        assert (screen.tool, screen.target, screen.reason) == (
            "bash",
            "rm -rf build",
            "bash asks in ask mode",
        )
        # Nothing ran while the question is open.
        assert fake.log == ["submit:clean", "ask:bash"]
        assert app.query_one(ToolCall).status == "pending"

        await arm(pilot, screen, clock)
        await pilot.press(key)
        clock.advance(1)  # a letter answers once no other key follows it (Enter and Esc at once)
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()

        assert not isinstance(app.screen, PermissionScreen)
        assert fake.decisions == [decision]
        tool = app.query_one(ToolCall)
        if decision == "deny":
            assert "run:bash" not in fake.log
            assert tool.status == "denied"
        else:
            assert fake.log.index(f"decision:{decision}") < fake.log.index("run:bash")
            assert tool.status == "done" and tool.body_text == "removed"


async def test_typing_in_progress_goes_to_the_prompt_not_the_modal() -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        # the person keeps typing their next message as the modal pops up: a, Space, d, y, Enter-less
        await pilot.press("a", "space", "d")
        clock.advance(0.7)  # on screen long enough, but the last key was just now: still typing
        await pilot.press("y")
        clock.advance(0.6)
        await pilot.press("a", "backspace")
        await pilot.pause()
        assert app.screen is screen and fake.decisions == []
        assert not screen.armed_shown
        assert "pause to answer" in shown(screen.query_one("#permission-hint", Static))
        assert all(button.disabled for button in screen.query(Button))
        assert app.prompt.text == "a dy"

        clock.advance(1.1)  # a pause: now it may be answered, and it shows it
        await wait_until(pilot, lambda: screen.armed_shown)
        assert not any(button.disabled for button in screen.query(Button))
        await pilot.press("space")  # Space never answers
        await pilot.pause()
        assert app.screen is screen and fake.decisions == []
        await pilot.press("d")
        clock.advance(1)
        await wait_until(pilot, lambda: app.screen is not screen)
        await app.workers.wait_for_complete()
        assert fake.decisions == ["deny"] and app.prompt.text == "a dy"


async def test_a_key_right_after_the_modal_appears_does_not_answer_it() -> None:
    fake, clock = backend(), FakeClock()
    fake.scripts["clean"] = [Pause("work"), *fake.scripts["clean"]]
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "clean")
        await pilot.press("enter")
        clock.advance(30)  # the model works a while; the person stopped typing long ago
        fake.release("work")
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        screen = app.screen
        clock.advance(0.2)
        await pilot.press("enter")  # within half a second of the modal appearing
        await pilot.pause()
        assert app.screen is screen and fake.decisions == []
        clock.advance(1.1)
        await wait_until(pilot, lambda: screen.armed_shown)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert fake.decisions == ["allow_once"]


async def test_a_message_started_while_the_question_sat_unnoticed_answers_nothing() -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        await arm(pilot, screen, clock)  # open a while, nobody looking: armed
        await pilot.press("a", "b", "c")  # the person starts their next message; `a` is "Always"
        clock.advance(5)
        await wait_until(pilot, lambda: screen.armed_shown)
        assert app.screen is screen and fake.decisions == []
        assert app.prompt.text == "abc"

        await pilot.press("n")  # on its own, then a pause: an answer, once it has settled
        assert app.screen is screen and screen.has_class("-held") and fake.decisions == []
        assert shown(screen.query_one("#permission-hint", Static)).startswith("n: answering")
        clock.advance(1)
        await wait_until(pilot, lambda: app.screen is not screen)
        await app.workers.wait_for_complete()
        assert fake.decisions == ["deny"] and app.prompt.text == "abc"


async def test_escape_right_after_a_held_letter_denies_and_keeps_the_letter_in_the_prompt() -> None:
    """Armed, a letter that answers is held; Esc follows before it settles: the letter was typing
    (a key followed it), so it goes to the prompt, and Esc denies."""
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        await arm(pilot, screen, clock)
        await pilot.press("y")
        assert screen.has_class("-held") and fake.decisions == []
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: app.prompt.text == "y")
        assert fake.decisions == ["deny"]


async def test_escape_denies_at_once_even_while_typing() -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask_and_wait(pilot, app)
        await pilot.press("x", "escape")
        await app.workers.wait_for_complete()
        assert fake.decisions == ["deny"] and app.prompt.text == "x"


async def test_it_shows_the_command_where_it_runs_and_the_rule_always_saves() -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        texts = {w.id: shown(w).strip() for w in screen.query(Static) if w.id}
        assert texts["permission-title"] == "Allow bash?"
        assert "rm -rf build" in texts["permission-detail-text"]
        assert texts["permission-cwd"] == "in /work/project"
        assert "Bash(rm:*)" in texts["permission-rule"]


async def test_an_edit_shows_its_diff_scrollable() -> None:
    long_diff = DIFF + "".join(f"+line {i}\n" for i in range(80))
    ask = Ask(
        call=tool_call("e1", "edit_file", path="app.py", old_string="a - b", new_string="a + b"),
        target="app.py",
        detail=long_diff,
        detail_kind="diff",
        rule="saves the rule Edit(./app.py) for this session",
    )
    fake, clock = backend(ask), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        assert shown(screen.query_one("#permission-title", Static)).strip() == "Allow edit app.py?"
        body = shown(screen.query_one("#permission-detail-text", Static))
        assert "-    return a - b" in body and "+    return a + b" in body
        detail = screen.query_one("#permission-detail")
        assert detail.max_scroll_y > 0  # longer than the screen: it scrolls
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: detail.scroll_y > 0)
        assert fake.decisions == []


async def test_the_buttons_answer_once_armed() -> None:
    fake, clock = backend(), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        await arm(pilot, screen, clock)
        await pilot.click("#allow_always")
        await app.workers.wait_for_complete()
        assert fake.decisions == ["allow_always"]


async def test_interrupting_while_asked_closes_the_modal_and_denies() -> None:
    fake = backend()
    app = create_app(backend=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        await ask_and_wait(pilot, app)
        await pilot.press("ctrl+c")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, PermissionScreen)
        assert "run:bash" not in fake.log
        assert fake.interrupts == 1


async def test_a_fetch_shows_its_url_host_and_the_domain_rule_always_saves() -> None:
    url = "https://docs.python.org/3/library/os.html"
    ask = Ask(
        call=tool_call("w1", "web_fetch", url=url),
        target=url,
        reason="no rule allows fetching from docs.python.org (WebFetch(domain:docs.python.org) would)",
        output="web_fetch …: HTTP 200",
        duration=0.3,
        rule="saves the rule WebFetch(domain:docs.python.org) for this session",
        detail=f"URL: {url}\nhost: docs.python.org",
    )
    fake, clock = backend(ask), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await ask_and_wait(pilot, app)
        texts = {w.id: shown(w).strip() for w in screen.query(Static) if w.id}
        assert texts["permission-title"] == f"Allow fetching {url}?"
        assert "host: docs.python.org" in texts["permission-detail-text"]
        assert "WebFetch(domain:docs.python.org)" in texts["permission-rule"]
        await arm(pilot, screen, clock)
        await pilot.press("a")
        clock.advance(1)
        await wait_until(pilot, lambda: not isinstance(app.screen, PermissionScreen))
        assert fake.decisions == ["allow_always"]


@pytest.mark.parametrize("rows", [14, 30])
async def test_on_a_short_screen_the_detail_gives_way_to_the_buttons_and_the_hint(rows: int) -> None:
    """At 14 rows the buttons and the hint were cut off: the detail shrinks (it scrolls) and the spacing
    goes, so every answer stays in view; a tall screen keeps its spacing."""
    script = "\n".join(f"echo step {i}" for i in range(12))
    ask = Ask(
        call=tool_call("p2", "bash", command=script),
        target=script,
        reason="bash asks in ask mode",
        rule="saves the rule Bash(echo:*) for this session",
        detail=script,
        detail_kind="command",
        cwd="/work/project",
    )
    app = create_app(backend=backend(ask))
    async with app.run_test(size=(120, rows)) as pilot:
        screen = await ask_and_wait(pilot, app)
        hint, detail = screen.query_one("#permission-hint"), screen.query_one("#permission-detail")

        def in_view(widget) -> bool:
            return widget.region.height > 0 and widget.region.bottom <= rows

        await wait_until(pilot, lambda: in_view(hint) and all(in_view(b) for b in screen.query(Button)))
        assert in_view(detail) and detail.region.height >= 1
        assert screen.has_class("-short") == (rows == 14)
        if rows == 14:
            assert detail.max_scroll_y > 0  # what does not fit scrolls
