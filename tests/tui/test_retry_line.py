"""A request being retried is said in the line above the prompt (why, which try) until an answer
comes, then the line says "working" again; the transcript keeps a notice of it."""

from __future__ import annotations

from fake_backend import FakeBackend, Pause
from tui_helpers import type_text, wait_until

from agent_cli.core import events as ev
from agent_cli.tui.app import BUSY_HINT, create_app
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.thinking import Thinking

STALLED = "no data from the API for 90 s"


async def test_a_retry_after_a_stall_is_said_where_the_spinner_is_until_the_answer_comes() -> None:
    script = [
        ev.Retrying(attempt=2, delay=3.0, reason=STALLED),
        Pause("retrying"),
        ev.TextDelta(text="Back."),
        Pause("answering"),
    ]
    backend = FakeBackend({"hi": script})
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "retrying" in backend.reached)
        assert app.activity.text == f"{STALLED} · retrying (attempt 2) · Esc to interrupt"
        assert app.activity.busy
        assert f"{STALLED} — retrying in 3.0s (attempt 2)" in [n.text for n in app.query(Notice)]
        backend.release("retrying")
        await wait_until(pilot, lambda: "answering" in backend.reached)
        await wait_until(pilot, lambda: app.activity.text == BUSY_HINT)
        backend.release("answering")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: app.activity.text == "")


async def test_a_retry_that_discards_the_streamed_part_dims_it_and_says_so() -> None:
    script = [
        ev.ThinkingDelta(text="Let me think"),
        ev.TextDelta(text="PARTIAL answer"),
        ev.Retrying(attempt=1, delay=2.0, reason="API overloaded", discarded=True),
        ev.TextDelta(text="The whole answer."),
    ]
    app = create_app(backend=FakeBackend({"hi": script}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        cut, whole = app.query(AssistantMessage)
        assert (cut.text, whole.text) == ("PARTIAL answer", "The whole answer.")
        assert cut.has_class("discarded") and not whole.has_class("discarded")
        assert app.query_one(Thinking).has_class("discarded")
        notices = [n.text for n in app.query(Notice)]
        assert (
            "API overloaded — the answer above was cut off and is discarded; retrying in 2.0s (attempt 1)"
            in notices
        )
