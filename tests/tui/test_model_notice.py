"""An unknown model is said once in the TUI: a warning Notice with the default it gets and how to
describe it, on the first turn only."""

from __future__ import annotations

from tui_helpers import type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.notice import Notice


def _notices(app) -> list[str]:
    return [n.text for n in app.query(Notice) if "model registry" in n.text]


async def test_an_unknown_model_is_a_warning_notice_once(workspace):
    config = Config(model="my-local-model", provider="scripted", permission_mode="yolo")
    provider = ScriptedProvider(Script(responses=[{"text": "one"}, {"text": "two"}]))
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    app = create_app(backend=session)
    async with app.run_test(size=(120, 30)) as pilot:
        for done, prompt in enumerate(("first", "second"), start=1):
            await type_text(pilot, prompt)
            await pilot.press("enter")
            await wait_until(pilot, lambda n=done: session.totals.requests == n and not app.turn_running)
        notices = _notices(app)
        assert len(notices) == 1 and "200,000-token window" in notices[0]
        assert '[models."my-local-model"]' in notices[0]
        assert [n.level for n in app.query(Notice) if "model registry" in n.text] == ["warning"]
    assert session.warnings == []  # headless would have printed it on stderr instead
