"""Skills in a session: the listing in the system prompt, `skill` and `skill_search`, `/name`,
`/skills` and `/context`, and what `allowed-tools` may and may not grant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.agent.parts import SessionSetup
from agent_cli.api.compose import compose_session
from agent_cli.context.model import ContextConfig
from agent_cli.core.events import CommandResult, Notice, PermissionRequest, ToolFinished, ToolStarted
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config, PermissionRules
from tests.agent.helpers import run

from .test_skill_catalog import front, skill


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's ~/.config/agent (XDG_CONFIG_HOME) and ~/.claude (CLAUDE_CONFIG_DIR)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path


def make(workspace: Path, responses, *, trusted: bool = True, mode: str = "ask", **config):
    provider = ScriptedProvider(Script(responses=responses))
    cfg = Config(model="scripted", provider="scripted", permission_mode=mode, debug=True, **config)
    return compose_session(cfg, provider, SessionSetup(workspace, None, True, trusted))


def call(tool: str, **input) -> dict:
    return {"tool_calls": [{"name": tool, "input": input}]}


def results(events) -> list[ToolFinished]:
    return [e for e in events if isinstance(e, ToolFinished)]


def command_text(events) -> str:
    return next(e.text for e in events if isinstance(e, CommandResult))


async def test_the_model_sees_names_and_descriptions_and_loads_one_body(workspace, user):
    skill(
        user / "xdg" / "agent" / "skills", "pdf", front("Fill PDF forms") + "PDF-BODY-MARK use $ARGUMENTS\n"
    )
    skill(user / "claude" / "skills", "notes", front("Keep notes") + "NOTES-BODY-MARK\n")
    skill(workspace / ".claude" / "skills", "lint", front("Lint the repo </env>") + "LINT-BODY-MARK\n")
    s = make(workspace, [call("skill", name="pdf", arguments="a.pdf"), {"text": "done"}])
    events = await run(s, "fill the form")
    first, second = s.provider.requests
    system = json.dumps(first.system)
    assert all(d in system for d in ("Fill PDF forms", "Keep notes", "Lint the repo &lt;/env>"))
    assert "BODY-MARK" not in json.dumps(first.to_api())  # no body until one is asked for
    sent = json.dumps(second.messages)
    assert (
        "PDF-BODY-MARK use a.pdf" in sent and "NOTES-BODY-MARK" not in sent and "LINT-BODY-MARK" not in sent
    )
    folder = user / "xdg" / "agent" / "skills" / "pdf"
    assert f"Base directory for this skill: {folder}" in sent
    assert second.system == first.system  # the listing is part of the cached prefix: unchanged
    assert not results(events)[0].is_error
    # /context counts the listing on its own row; /skills shows each skill's cost
    data = next(e for e in await run(s, "/context") if isinstance(e, CommandResult)).data
    assert data["skills"] > 0 and data["system"] > 0
    table = command_text(await run(s, "/skills"))
    assert "| pdf | ~/.config/agent/skills | listed |" in table.replace(str(user / "xdg"), "~/.config")
    assert "| lint | .claude/skills | listed |" in table


async def test_no_skills_no_tool_and_no_listing(workspace, user):
    s = make(workspace, [{"text": "hi"}])
    await run(s, "hello")
    request = s.provider.requests[0]
    assert "skill" not in [t["name"] for t in request.tools] and len(request.system) == 1
    assert s.breakdown()["skills"] == 0
    assert "No skills." in command_text(await run(s, "/skills"))


async def test_bad_calls_are_clear_error_results(workspace, user):
    skill(
        user / "xdg" / "agent" / "skills", "deploy", front("Deploy", **{"disable-model-invocation": "true"})
    )
    gone = skill(user / "xdg" / "agent" / "skills", "gone", front("Will vanish"))
    s = make(
        workspace,
        [
            call("skill", name="nope"),
            call("skill", name="deploy"),
            call("skill", name="gone"),
            {"text": "ok"},
        ],
    )
    gone.unlink()
    events = await run(s, "go")
    nope, deploy, vanished = results(events)
    assert nope.is_error and "no skill named 'nope'; skills: gone" in nope.output
    assert deploy.is_error and "started only by the person (/deploy)" in deploy.output
    assert vanished.is_error and "cannot be loaded" in vanished.output and "gone/SKILL.md" in vanished.output
    assert "deploy" not in json.dumps(s.provider.requests[0].system)


async def test_a_huge_body_is_offloaded_with_a_preview_and_recallable(workspace, user):
    middle = "THE-SENTENCE-IN-THE-MIDDLE is here."
    path = skill(user / "xdg" / "agent" / "skills", "huge", front("A big one"))
    line = "filler line of a very large skill body\n"
    half = line * 60_000  # ~2.4 MB each side
    path.write_text(front("A big one") + half + middle + "\n" + half)
    s = make(workspace, [call("skill", name="huge"), {"text": "ok"}])
    events = await run(s, "go")
    result = results(events)[0]
    assert not result.is_error and "<persisted-output" in result.output and middle not in result.output
    sent = json.dumps(s.provider.requests[1].messages)
    assert len(sent) < 50_000 and "<persisted-output ref=" in sent
    ref = s.dir_store.refs()[0]
    assert middle in s.dir_store.get(ref)


async def test_skill_search_appears_only_past_the_cap_and_finds_the_rest(workspace, user):
    root = user / "xdg" / "agent" / "skills"
    for i in range(30):
        skill(root, f"s{i:02d}", front(f"Generic helper {i} " + "padding words " * 40))
    skill(root, "zz-pdf", front("Fill PDF forms " + "padding words " * 40))
    small = ContextConfig(budget_tokens=40_000)  # 2%: 800 tokens of listing
    s = make(workspace, [call("skill_search", query="pdf forms"), {"text": "ok"}], context=small)
    events = await run(s, "go")
    tools = [t["name"] for t in s.provider.requests[0].tools]
    assert "skill" in tools and "skill_search" in tools
    system = json.dumps(s.provider.requests[0].system)
    assert "Fill PDF forms" not in system and "more skill(s) are not listed here" in system
    assert results(events)[0].output.startswith("1 skill(s) match 'pdf forms':\n- zz-pdf: Fill PDF forms")
    assert "via skill_search" in command_text(await run(s, "/skills"))
    few = make(workspace, [{"text": "x"}])
    assert "skill_search" not in few.tools  # the same 31 skills fit a 180k budget's 2%


BASH = call("bash", command="git status --short")


async def test_allowed_tools_of_the_persons_skill_hold_for_its_turn_only(workspace, user):
    skill(
        user / "xdg" / "agent" / "skills",
        "st",
        front("Show the status", **{"allowed-tools": "Bash(git status:*)"}) + "See ref.md beside me.\n",
    )
    (user / "xdg" / "agent" / "skills" / "st" / "ref.md").write_text("REFERENCE-TEXT\n")
    ref = str(user / "xdg" / "agent" / "skills" / "st" / "ref.md")
    s = make(
        workspace,
        [call("skill", name="st"), BASH, call("read_file", path=ref), {"text": "a"}, BASH, {"text": "b"}],
    )
    asked: list[str] = []

    async def deny(event):
        if isinstance(event, PermissionRequest):
            asked.append(event.call.name)
            event.future.set_result("deny")

    first = await run(s, "status please", deny)
    assert [e.call.name for e in first if isinstance(e, ToolStarted)] == ["skill", "bash", "read_file"]
    assert "allowed without asking until this turn ends: Bash(git status:*)" in results(first)[0].output
    assert "REFERENCE-TEXT" in results(first)[2].output  # its own folder is readable
    assert asked == []
    second = await run(s, "again", deny)
    assert asked == ["bash"]  # the grant ended with the turn
    assert not any(isinstance(e, ToolStarted) and e.call.name == "bash" for e in second)
    assert not any("git status" in r.rule.text for r in s.permissions.rules)


async def test_a_skill_never_grants_past_plan_mode_or_a_deny_rule(workspace, user):
    skill(
        user / "xdg" / "agent" / "skills",
        "wide",
        front("Anything goes", **{"allowed-tools": "Bash, Edit"}),
    )
    write = call("bash", command="echo hi > out.txt")
    edit = call("write_file", path="new.txt", content="x")
    s = make(workspace, [call("skill", name="wide"), write, edit, {"text": "a"}], mode="plan")
    events = await run(s, "go")
    assert [e.call.name for e in events if isinstance(e, ToolStarted)] == ["skill"]
    assert all(r.is_error and "plan mode" in r.output for r in results(events)[1:])
    assert not (workspace / "out.txt").exists() and not (workspace / "new.txt").exists()
    denied = make(
        workspace,
        [call("skill", name="wide"), BASH, {"text": "a"}],
        flag_permissions=PermissionRules(deny=("Bash(git status:*)",)),
    )
    events = await run(denied, "go")
    assert "denied by the rule Bash(git status:*)" in results(events)[1].output
    # a rule in Claude Code's spelling names a skill, however the model writes its name
    closed = make(
        workspace,
        [call("skill", name="/WIDE"), {"text": "a"}],
        flag_permissions=PermissionRules(deny=("Skill(wide)",)),
    )
    events = await run(closed, "go")
    assert "denied by the rule Skill(wide)" in results(events)[0].output


async def test_slash_name_starts_a_skill_and_wins_over_a_command(workspace, user):
    root = user / "xdg" / "agent" / "skills"
    skill(root, "review", front("Review code", **{"argument-hint": "<file>"}) + "Review $1 carefully.\n")
    skill(root, "help", front("A skill named help"))
    skill(
        root,
        "manual",
        front("Only by hand", **{"disable-model-invocation": "true"}) + "MANUAL-BODY $ARGUMENTS\n",
    )
    skill(root, "hidden", front("Model only", **{"user-invocable": "false"}))
    (workspace / ".agent" / "commands").mkdir(parents=True)
    (workspace / ".agent" / "commands" / "review.md").write_text("the command's review\n")
    s = make(workspace, [{"text": "r"}, {"text": "m"}, {"text": "h"}])
    events = await run(s, "/review app.py")
    notices = " ".join(e.text for e in events if isinstance(e, Notice))
    assert "/review: the skill" in notices and "wins over the command" in notices
    assert "/help is a built-in command, which wins" in notices
    sent = json.dumps(s.provider.requests[0].messages)
    assert "Review app.py carefully." in sent and "the command's review" not in sent
    await run(s, "/manual now")
    assert "MANUAL-BODY now" in json.dumps(s.provider.requests[1].messages)
    assert "manual" not in json.dumps(s.provider.requests[1].system)
    specs = {c.name: c for c in s.commands()}
    assert specs["review"].args == "<file>" and "hidden" not in specs
    await run(s, "/hidden")
    assert "Unknown command /hidden" in command_text(await run(s, "/hidden"))


async def test_a_workspace_skill_never_replaces_one_of_your_commands(workspace, user):
    """Trusted, a workspace's skill `review` (allowed-tools: Bash) took your `~/.claude/commands/
    review.md`'s `/review`: the workspace never replaces what is yours, by command or by skill."""
    (user / "claude" / "commands").mkdir(parents=True)
    (user / "claude" / "commands" / "review.md").write_text("YOUR-REVIEW-BODY\n")
    skill(
        workspace / ".claude" / "skills", "review", front("Theirs", **{"allowed-tools": "Bash"}) + "THEIRS\n"
    )
    s = make(workspace, [{"text": "r"}], trusted=True)
    events = await run(s, "/review")
    notices = " ".join(e.text for e in events if isinstance(e, Notice))
    assert "/review is one of yours" in notices and "which wins over the workspace's skill" in notices
    sent = json.dumps(s.provider.requests[0].messages)
    assert "YOUR-REVIEW-BODY" in sent and "THEIRS" not in sent


async def test_slash_name_of_a_skill_whose_file_went_away_is_one_line(workspace, user):
    gone = skill(user / "xdg" / "agent" / "skills", "gone", front("Will vanish"))
    s = make(workspace, [{"text": "still here"}])
    gone.unlink()
    events = await run(s, "/gone now")
    errors = [e.text for e in events if isinstance(e, Notice) and e.level == "error"]
    assert (
        len(errors) == 1 and errors[0].startswith("/gone: ") and "gone/SKILL.md: cannot be read" in errors[0]
    )
    assert events[-1].is_error and s.provider.requests == []  # nothing was sent
    assert (await run(s, "hello"))[-1].result == "still here"  # the session goes on
