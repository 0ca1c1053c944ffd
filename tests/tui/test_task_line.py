"""A sub-agent in the TUI, on the real backend: one live line per child that follows its progress and
expands to its steps; a child's permission ask goes through the same modal as the parent's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from tui_helpers import FakeClock, type_text, wait_until

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config
from agent_cli.tui.app import create_app
from agent_cli.tui.widgets.notice import Notice
from agent_cli.tui.widgets.task_call import TaskCall

WAIT = "wait"


class RoutedProvider(ScriptedProvider):
    """The parent plays `responses`; a conversation whose first message holds a key of `children`
    plays that list instead, where WAIT holds the child until `gate` is set."""

    def __init__(self, responses: list[dict], children: dict[str, list]) -> None:
        super().__init__(Script(responses=responses))
        self.children = children
        self.gate = asyncio.Event()
        self.waiting = 0

    async def stream(self, request) -> AsyncIterator:
        first = json.dumps(request.messages[0])
        for marker, replies in self.children.items():
            if marker in first:
                if replies and replies[0] == WAIT:
                    replies.pop(0)
                    self.waiting += 1
                    await self.gate.wait()
                self.requests.append(request)
                async for event in self._play(request, replies.pop(0) if replies else {"text": "Done."}):
                    yield event
                return
        async for event in super().stream(request):
            yield event


def _task(marker: str, kind: str) -> dict:
    return {
        "name": "task",
        "input": {"description": f"{marker} job", "prompt": f"{marker}: go", "subagent_type": kind},
    }


async def test_each_child_is_one_live_line_that_expands_to_its_steps(workspace):
    provider = RoutedProvider(
        [
            {"tool_calls": [_task("CHILD-A", "explore"), _task("CHILD-B", "explore")]},
            {"text": "Both reported."},
        ],
        {
            "CHILD-A": [
                {"tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
                WAIT,
                {"text": "A: add() subtracts."},
            ],
            "CHILD-B": [
                {"tool_calls": [{"name": "grep", "input": {"pattern": "demo"}}]},
                WAIT,
                {"text": "B: README is a stub."},
            ],
        },
    )
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    app = create_app(backend=session)
    async with app.run_test(size=(110, 40)) as pilot:
        await type_text(pilot, "look around")
        await pilot.press("enter")
        await wait_until(pilot, lambda: provider.waiting == 2 and len(app.query(TaskCall)) == 2)
        first, second = app.query(TaskCall)
        await wait_until(pilot, lambda: "now: read_file app.py" in first.body_text)
        assert first.status == "running" and first.target == "explore: CHILD-A job"
        assert first.body_text.startswith("explore · 1 model call · ")
        await wait_until(pilot, lambda: "now: grep demo" in second.body_text)

        first.focus()
        await pilot.press("enter")  # expand: the steps so far
        await wait_until(pilot, lambda: "⎿ read_file app.py" in first.body_text)

        provider.gate.set()
        await wait_until(pilot, lambda: not app.turn_running)
        assert (first.status, second.status) == ("done", "done")
        assert "A: add() subtracts." in first.body_text and "2 model calls" in first.body_text
        assert "now:" not in first.body_text
        assert "B: README is a stub." in second.body_text and "⎿" not in second.body_text


async def test_a_childs_permission_ask_is_the_same_modal(workspace):
    provider = RoutedProvider(
        [{"tool_calls": [_task("CHILD-A", "general-purpose")]}, {"text": "Made it."}],
        {
            "CHILD-A": [
                {"tool_calls": [{"name": "bash", "input": {"command": "echo hi > child.txt"}}]},
                {"text": "made"},
            ]
        },
    )
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    session = compose_session(config, provider, SessionSetup(workspace, None, True))
    clock = FakeClock()
    app = create_app(backend=session, clock=clock)
    async with app.run_test(size=(110, 40)) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "PermissionScreen")
        assert not (workspace / "child.txt").exists()
        clock.advance(5)  # the modal takes an answer only after a pause
        await wait_until(pilot, lambda: app.screen.armed_shown)
        await pilot.press("enter")  # allow once
        await wait_until(pilot, lambda: not app.turn_running)
        assert (workspace / "child.txt").read_text() == "hi\n"
        [line] = app.query(TaskCall)
        assert line.status == "done" and "made" in line.body_text


async def test_a_malformed_agent_definition_is_one_warning_line_and_the_rest_works(workspace):
    (workspace / ".agent" / "agents").mkdir(parents=True)
    (workspace / ".agent" / "agents" / "broken.md").write_text("---\nname: [oops\n---\nbody\n")
    provider = RoutedProvider(
        [{"tool_calls": [_task("CHILD-A", "explore")]}, {"text": "ok"}], {"CHILD-A": [{"text": "found"}]}
    )
    config = Config(model="scripted", provider="scripted", permission_mode="ask")
    session = compose_session(config, provider, SessionSetup(workspace, None, True, trusted=True))
    app = create_app(backend=session)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: len(app.query(Notice)) == 1)
        assert "broken.md" in app.query_one(Notice).text and "skipped" in app.query_one(Notice).text
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and len(app.query(TaskCall)) == 1)
        assert "found" in app.query_one(TaskCall).body_text
