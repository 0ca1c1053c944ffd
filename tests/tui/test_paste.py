"""A big paste is a chip in the prompt; the full text is what gets sent."""

from __future__ import annotations

import json

from fake_backend import FakeBackend
from textual import events
from tui_helpers import type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.core.events import TextDelta
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.paste import PasteStore, chip_label, format_size
from agent_cli.tui.widgets.user_message import UserMessage, shown_text

LINE = "0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefg\n"  # 85 B
BIG = LINE * 120_000  # 10.2 MB, 120,000 lines


def test_the_chip_says_size_and_lines() -> None:
    assert len(BIG.encode()) == 10_200_000
    assert chip_label(BIG) == "[Pasted text: 10.2 MB, 120,000 lines]"
    assert chip_label("a\nb", 2) == "[Pasted text #2: 3 B, 2 lines]"
    assert format_size(4_096) == "4.1 kB"
    store = PasteStore()  # a terminal pastes line breaks as CR
    assert store.add(BIG.replace("\n", "\r")) == "[Pasted text: 10.2 MB, 120,000 lines]"
    assert store.expand("[Pasted text: 10.2 MB, 120,000 lines]") == BIG


def test_chips_expand_in_one_pass_and_the_same_paste_is_kept_once() -> None:
    store = PasteStore()
    first = store.add("one " * 400)
    second = store.add("two " * 400)
    assert store.add("one " * 400) == first and len(store) == 2
    assert store.expand(f"compare {first} with {second}") == f"compare {'one ' * 400} with {'two ' * 400}"
    assert store.expand("no chips here") == "no chips here"


async def test_a_10_mb_paste_collapses_to_a_chip_and_is_sent_in_full() -> None:
    backend = FakeBackend()
    # a model answers briefly (the fake's default echo would render all 10 MB back as Markdown)
    backend.scripts[f"summarize {BIG}"] = [TextDelta(text="It is one line, repeated.")]
    app = create_app(backend=backend)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "summarize ")
        app.post_message(events.Paste(BIG))
        chip = "[Pasted text: 10.2 MB, 120,000 lines]"
        await wait_until(pilot, lambda: app.prompt.text.endswith(chip))
        assert app.prompt.text == f"summarize {chip}"  # the prompt holds the chip, not 10 MB
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert backend.submitted == [f"summarize {BIG}"]  # the full text is what gets sent
        assert [m.text for m in app.query(UserMessage)] == [f"summarize {chip}"]
        assert app.prompt.text == ""
        await pilot.press("up")  # recalled from history, the chip still carries the paste
        assert app.prompt.text == f"summarize {chip}"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert backend.submitted[-1] == f"summarize {BIG}"


async def test_backspace_or_delete_into_a_chip_takes_the_whole_chip_never_one_character() -> None:
    """A chip with one character cut off is no chip: its label, not the paste, would be sent."""
    paste = "x\n" * 2_000
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "before ")
        app.post_message(events.Paste(paste))
        chip = chip_label(paste)
        await wait_until(pilot, lambda: chip in app.prompt.text)
        await type_text(pilot, " after")
        for _ in range(7):  # " after", then into the chip's `]`
            await pilot.press("backspace")
        assert app.prompt.text == "before "
        await pilot.press("ctrl+z")  # undo brings the chip back whole
        assert app.prompt.text == f"before {chip} after"
        await pilot.press("home")
        for _ in range(7):
            await pilot.press("right")
        await pilot.press("delete")
        assert app.prompt.text == "before  after"
        await pilot.press("ctrl+z", "end")
        for _ in range(6):
            await pilot.press("backspace")
        await type_text(pilot, "plain")
        await pilot.press("backspace")
        assert app.prompt.text == f"before {chip}plai"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert app.backend.submitted == [f"before {paste}plai"]


async def test_a_small_paste_goes_in_as_text() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(events.Paste("just a line"))
        await wait_until(pilot, lambda: app.prompt.text == "just a line")


async def test_a_pasted_prompt_is_stored_once_and_offloaded_from_the_view(workspace) -> None:
    marker = "UNIQUE-PASTE-MARKER"
    pasted = marker + "\n" + LINE * 1_000  # 85 kB: more than T0's 50,000 characters
    config = Config(model="scripted", provider="scripted", permission_mode="yolo")
    provider = ScriptedProvider(Script(responses=[{"text": "Got it."}]))
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(events.Paste(pasted))
        await wait_until(pilot, lambda: app.prompt.text.startswith("[Pasted text"))
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(provider.requests) and not app.turn_running)
    in_log = session.log.path.read_text().count(json.dumps(LINE * 1_000)[1:-1])
    kept = [p for p in (session.session_dir / "tool-results").iterdir() if p.read_text() == pasted]
    assert in_log + len({p.stat().st_ino for p in kept}) == 1  # the paste is on disk once, recallable
    sent = json.dumps(provider.requests[0].messages)
    assert marker in sent and len(sent) < 50_000  # the request carries a preview and a recall ref


def test_a_huge_prompt_from_a_log_is_shown_cut_with_its_size() -> None:
    shown = shown_text("question\n" + LINE * 2_000)
    assert shown.startswith("question\n0123456789") and len(shown) < 5_000
    assert shown.endswith(" more, 1,954 lines]"), shown[-60:]
    assert shown_text("short") == "short"
