"""The prompt's own keys on the real backend: Tab completes (a command, an `@` path) or does nothing —
the focus never leaves the prompt; `@` completion picks a file and the chip above the prompt shows
its token cost before sending; text typed after a paste chip stays the person's own words; an image
path in the prompt reaches the model as an image and the gauge counts it."""

from __future__ import annotations

import re
from pathlib import Path

from fake_backend import FakeBackend
from PIL import Image
from textual import events
from tui_helpers import type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.core.images import tokens_for
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.prompt_input import PromptTextArea
from agent_cli.tui.widgets.user_message import UserMessage

PASTE = "".join(f"pasted line {i}: {'lorem ipsum ' * 8}\n" for i in range(700))  # ~70 kB: offloaded


def _session(workspace: Path, replies: list[dict] | None = None) -> AgentSession:
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    script = Script(responses=replies or [{"text": "Done."}])
    return compose_session(config, ScriptedProvider(script), SessionSetup(workspace, None, True))


def _focused_on_prompt(app) -> bool:
    return isinstance(app.focused, PromptTextArea)


async def test_tab_never_moves_the_focus_out_of_the_prompt() -> None:
    app = create_app(backend=FakeBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        assert _focused_on_prompt(app)
        for _ in range(6):  # an empty prompt: nothing to complete, nothing happens
            await pilot.press("tab")
            assert _focused_on_prompt(app)
        await type_text(pilot, "hello")
        await pilot.press("tab", "tab")
        assert _focused_on_prompt(app) and app.prompt.text == "hello"
        await type_text(pilot, " there")  # typing still goes to the prompt
        assert app.prompt.text == "hello there"
        app.prompt.set_text("/mo")  # Tab completes a command
        await wait_until(pilot, lambda: app.prompt.completions_shown)
        await pilot.press("tab")
        assert app.prompt.text == "/model " and _focused_on_prompt(app)


async def test_at_completion_picks_a_file_and_the_chip_shows_its_tokens(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "parser.py").write_text("def parse(text):\n    return text.split()\n" * 30)
    (workspace / "notes.txt").write_text("unrelated\n")
    session = _session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "explain @srcpar")
        await wait_until(pilot, lambda: app.prompt.completions_shown, steps=2000)
        assert app.prompt.completions[0].label == "src/parser.py"
        assert "⚠" not in app.prompt.mention_bar.label  # the word being typed names no file yet
        await pilot.press("tab")
        assert app.prompt.text == "explain @src/parser.py " and _focused_on_prompt(app)
        expected = session.counter.text(
            (await session.tools.get("read_file").run({"path": "src/parser.py"}, session.tool_ctx)).output
        )
        bar = app.prompt.mention_bar
        await wait_until(pilot, lambda: "src/parser.py" in bar.label, steps=2000)
        assert f"[@src/parser.py · {expected} tokens]" == bar.label
        await type_text(pilot, "and @nope.py ")  # a space: no longer being typed
        await wait_until(pilot, lambda: "nope.py" in bar.label, steps=2000)
        assert "⚠ @nope.py: no such file or directory (not attached)" in bar.label
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and session.engine.messages, steps=2000)
        view = session.engine.messages
        uses = [b for m in view for b in m.tool_uses()]
        assert [(u.name, u.input) for u in uses] == [("read_file", {"path": "src/parser.py"})]
        results = [b for m in view for b in m.tool_results()]
        assert "def parse(text):" in results[0].text


async def test_text_typed_after_a_paste_chip_stays_the_persons_words(workspace: Path) -> None:
    session = _session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "look at this: ")
        app.post_message(events.Paste(PASTE))
        await wait_until(pilot, lambda: "[Pasted text" in app.prompt.text)
        await type_text(pilot, " and count the lines")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and len(session.engine.messages) >= 2)
        first = session.engine.messages[0]
        words = [b.text for b in first.blocks if b.type == "text" and not b.meta.tag]
        assert words[0] == "look at this: " and words[-1] == " and count the lines"
        assert words[1].startswith("<persisted-output") and "paste-1" in words[1]  # the paste, offloaded
        kept = session.dir_store.get("paste-1")
        assert kept == PASTE  # the store holds the paste, and only the paste
        assert [m.text for m in app.query(UserMessage)][0].endswith(" and count the lines")


async def test_an_image_path_reaches_the_model_as_an_image_and_the_gauge_counts_it(workspace: Path) -> None:
    Image.new("RGB", (1200, 900), (20, 120, 220)).save(workspace / "shot.png")
    session = _session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(110, 30)) as pilot:
        before = session.status().used
        await type_text(pilot, f"what is in {workspace}/shot.png")
        bar = app.prompt.mention_bar
        await wait_until(pilot, lambda: "shot.png" in bar.label, steps=2000)
        shown = re.search(r"shot\.png · image ≈([\d.]+)k tokens\]", bar.label)
        assert shown and 0 <= float(shown.group(1)) * 1000 - tokens_for(1200, 900) < 100  # + its caption
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and session.engine.messages, steps=2000)
        results = [b for m in session.engine.messages for b in m.tool_results()]
        assert results[0].media_type == "image/png" and results[0].data
        assert session.breakdown()["images"] >= tokens_for(1200, 900)
        assert session.status().used - before >= tokens_for(1200, 900)
        assert app.status_bar.gauge.status.used == session.status().used  # the gauge shows it


async def test_at_completion_quotes_a_name_the_mention_parser_would_cut(workspace: Path) -> None:
    """`weird#name.py` completed as `@weird#name.py` was read as `weird` ("no such file"), `a"quote.txt`
    as `a`, `@at.txt` as no mention at all: each is quoted, read back whole, and its chip shows."""
    names = ["weird#name.py", 'a"quote.txt', "@at.txt"]
    for name in names:
        (workspace / name).write_text(f"contents of {name}\n")
    session = _session(workspace)
    app = create_app(backend=session)
    async with app.run_test(size=(120, 30)) as pilot:
        for name, query, word in zip(
            names,
            ["weird", "quote", "at.t"],
            ['@"weird#name.py"', '@"a\\"quote.txt"', '@"@at.txt"'],
            strict=True,
        ):
            app.prompt.set_text("")
            await type_text(pilot, f"read @{query}")
            await wait_until(pilot, lambda: app.prompt.completions_shown, steps=2000)
            assert app.prompt.completions[0].label == name
            await pilot.press("tab")
            assert app.prompt.text == f"read {word} "
            bar = app.prompt.mention_bar
            await wait_until(pilot, lambda word=word, bar=bar: word in bar.label, steps=2000)
            assert "⚠" not in bar.label and "tokens]" in bar.label
