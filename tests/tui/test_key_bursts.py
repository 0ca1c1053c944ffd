"""Keys that arrive in one burst (one read of the terminal) are applied in the order they were typed:
the prompt's bound keys (Backspace, arrows, Home/End, Ctrl+W…) ran after the characters that came
after them (Textual issue #6605), so `abc` Backspace `d` showed `abc`."""

from __future__ import annotations

import pytest
from fake_backend import FakeBackend
from tui_helpers import burst, type_text, wait_until

from agent_cli.tui.app import create_app

SPACE = "space"


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (("a", "b", "c", "backspace", "d"), "abd"),
        (("a", "b", "c", "left", "X"), "abXc"),
        (("h", "i", SPACE, "y", "o", "u", "ctrl+w", "t", "h", "e", "m"), "hi them"),
        (("b", "c", "home", "a", "end", "d"), "abcd"),
        (("b", "c", "ctrl+a", "a", "ctrl+e", "d"), "abcd"),
        (("a", "c", "left", "left", "right", "b"), "abc"),
        (("a", "b", "x", "c", "left", "left", "delete", "y"), "abyc"),
        (("a", "b", "c", "left", "ctrl+u", "X"), "Xc"),
        (("a", "b", "c", "home", "ctrl+k", "z"), "z"),
    ],
)
async def test_a_burst_of_keys_edits_in_the_order_typed(keys: tuple[str, ...], expected: str) -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await burst(pilot, *keys)
        await wait_until(pilot, lambda: app.prompt.text == expected)


async def test_up_in_a_burst_recalls_the_last_prompt_before_the_keys_after_it() -> None:
    backend = FakeBackend()
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await burst(pilot, "up", "!", "enter", "n", "e", "x", "t")
        await wait_until(
            pilot, lambda: backend.submitted == ["first", "first!"] and app.prompt.text == "next"
        )
