"""Plan mode in the TUI: Shift+Tab cycles the modes, and a finished plan is shown for approval."""

from __future__ import annotations

from fake_backend import FakeBackend
from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.core.events import TextDelta
from agent_cli.tui.app import PLAN_APPROVED, create_app
from agent_cli.tui.screens.plan_screen import PlanScreen

PLAN = "## Plan\n\n1. Fix the sign in `add`.\n2. Run the tests."


async def test_shift_tab_cycles_ask_auto_edit_plan() -> None:
    fake = FakeBackend()
    app = create_app(backend=fake)
    async with app.run_test(size=(100, 30)) as pilot:
        for expected in ("auto-edit", "plan", "ask", "auto-edit"):
            await pilot.press("shift+tab")
            await wait_until(pilot, lambda want=expected: app.status_bar.permission_mode == want)
        assert fake.modes == ["auto-edit", "plan", "ask", "auto-edit"]
        fake.permission_mode = "yolo"
        await pilot.press("shift+tab")
        assert fake.permission_mode == "ask"  # yolo is left by Shift+Tab but never entered


async def plan_turn(pilot, app, fake, clock) -> PlanScreen:
    await pilot.press("shift+tab", "shift+tab")  # ask -> auto-edit -> plan
    assert fake.permission_mode == "plan" and fake.mode_before_plan == "auto-edit"
    await type_text(pilot, "fix add")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen))
    screen = app.screen
    assert screen.plan == PLAN and screen.back_to == "auto-edit"
    clock.advance(5)
    await wait_until(pilot, lambda: screen.armed_shown)
    return screen


async def test_approving_the_plan_returns_to_the_previous_mode_and_goes_ahead() -> None:
    fake, clock = FakeBackend({"fix add": [TextDelta(text=PLAN)]}), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await plan_turn(pilot, app, fake, clock)
        await pilot.press("enter")
        await wait_until(pilot, lambda: PLAN_APPROVED in fake.submitted and not app.turn_running)
        assert fake.permission_mode == "auto-edit"
        assert fake.submitted == ["fix add", PLAN_APPROVED]
        assert app.status_bar.permission_mode == "auto-edit"


async def test_the_plan_is_a_centred_dialog_over_the_dimmed_transcript() -> None:
    fake, clock = FakeBackend({"fix add": [TextDelta(text=PLAN)]}), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await plan_turn(pilot, app, fake, clock)
        dialog = screen.query_one("#permission-dialog").region
        assert dialog.x > 0 and dialog.y > 0  # centred, as the permission dialog is (it sat at 0, 0)
        assert abs((dialog.x + dialog.right) / 2 - 50) <= 1
        assert screen.styles.background.a < 1  # the transcript shows through, dimmed


async def test_rejecting_the_plan_stays_in_plan_mode() -> None:
    fake, clock = FakeBackend({"fix add": [TextDelta(text=PLAN)]}), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await plan_turn(pilot, app, fake, clock)
        await pilot.press("n")
        clock.advance(1)  # a letter answers once no other key follows it
        await wait_until(pilot, lambda: not isinstance(app.screen, PlanScreen))
        assert fake.permission_mode == "plan" and fake.submitted == ["fix add"]


async def test_typing_does_not_approve_the_plan() -> None:
    fake, clock = FakeBackend({"fix add": [TextDelta(text=PLAN)]}), FakeClock()
    app = create_app(backend=fake, clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("shift+tab", "shift+tab")
        await type_text(pilot, "fix add")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen))
        await type_text(pilot, "yes")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen) and fake.permission_mode == "plan"
        assert app.prompt.text == "yes" and fake.submitted == ["fix add"]  # kept, not sent
