"""Custom slash commands from Markdown files: names, frontmatter, arguments, and how they run."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli.agent.parts import SessionSetup
from agent_cli.agent.runner import AgentSession
from agent_cli.api.compose import compose_session
from agent_cli.core.events import CommandResult, Notice, PermissionDenied, PermissionRequest, ToolStarted
from agent_cli.extensions.custom_commands import load_custom_commands
from agent_cli.llm.scripted import Script, ScriptedProvider
from agent_cli.settings.config import Config

from .helpers import run


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_names_folders_precedence_and_problems(tmp_path):
    user, ws = tmp_path / "user", tmp_path / "ws"
    write(user / "review.md", "user review")
    write(user / "only-user.md", "mine")
    write(ws / ".claude" / "commands" / "review.md", "claude review")
    write(ws / ".agent" / "commands" / "review.md", "agent review")
    write(ws / ".claude" / "commands" / "frontend" / "component.md", "make $1")
    write(ws / ".agent" / "commands" / "help.md", "not me")
    write(ws / ".agent" / "commands" / "broken.md", "---\ndescription: [unclosed\n---\nstill $ARGUMENTS\n")
    found = load_custom_commands(ws, [user], ["help", "compact"])
    assert sorted(found.commands) == ["broken", "component", "frontend:component", "only-user", "review"]
    assert found.commands["review"].body == "user review"  # a workspace never replaces yours
    assert len(found.warnings) == 4
    assert sum("/review is one of yours" in w and "which wins" in w for w in found.warnings) == 2
    builtin = next(w for w in found.warnings if "built-in" in w)
    broken = next(w for w in found.warnings if "broken.md" in w)
    assert "help.md: /help is a built-in command" in builtin
    assert "broken.md: frontmatter is not valid YAML at line" in broken and "loaded without" in broken
    assert found.commands["broken"].expand("it") == "still it"


def test_a_command_in_a_folder_is_also_its_short_name(tmp_path):
    """Claude Code calls `.claude/commands/frontend/component.md` `/component` (the folder shows in
    its description); `/frontend:component` stays. Of two files with one short name, the one that
    would win a full-name clash has it (yours over the workspace's, a later folder's over an
    earlier's); the other keeps its full name. A full name or a built-in keeps its own."""
    user, ws = tmp_path / "user", tmp_path / "ws"
    write(ws / ".claude" / "commands" / "frontend" / "component.md", "Make component $ARGUMENTS")
    write(ws / ".claude" / "commands" / "a" / "deploy.md", "theirs, a")
    write(ws / ".agent" / "commands" / "b" / "deploy.md", "theirs, b")
    write(user / "git" / "commit.md", "my commit")
    write(ws / ".claude" / "commands" / "commit.md", "their commit")
    write(ws / ".claude" / "commands" / "x" / "commit.md", "their x commit")
    write(ws / ".claude" / "commands" / "y" / "help.md", "not /help")
    write(ws / ".claude" / "commands" / "mine" / "review.md", "their review")
    write(ws / ".claude" / "commands" / "review.md", "plain review")
    found = load_custom_commands(ws, [user], ["help"])
    component = found.find("/component Button")
    assert component is not None and component[0].expand(component[1]) == "Make component Button"
    assert found.find("/frontend:component")[0] is component[0]
    assert found.commands["deploy"].body == "theirs, b" and found.commands["a:deploy"].body == "theirs, a"
    assert found.commands["commit"].body == "my commit"  # a repository never takes your name
    assert found.commands["x:commit"].body == "their x commit"
    assert "help" not in found.commands and found.commands["review"].body == "plain review"
    assert any(
        "/deploy is /b:deploy" in w and "/a:deploy keeps its full name only" in w for w in found.warnings
    )
    assert any(
        w.startswith(f"{ws / '.claude' / 'commands' / 'commit.md'}: /commit is one of yours")
        for w in found.warnings
    )
    specs = {spec.name: spec.help for spec in found.specs(ws)}
    assert (
        specs["component"]
        == "Make component $ARGUMENTS (.claude/commands/frontend/component.md); also /frontend:component"
    )
    assert "frontend:component" not in specs and "a:deploy" in specs and "mine:review" in specs


def test_between_workspace_folders_the_later_wins_and_a_link_outside_is_not_read(tmp_path):
    ws, secret = tmp_path / "ws", write(tmp_path / "id_rsa", "PRIVATE-KEY")
    write(ws / ".claude" / "commands" / "review.md", "claude review")
    write(ws / ".agent" / "commands" / "review.md", "agent review")
    (ws / ".agent" / "commands" / "test.md").symlink_to(secret)
    found = load_custom_commands(ws, [tmp_path / "user"], [])
    assert found.commands["review"].body == "agent review" and "test" not in found.commands
    assert [w for w in found.warnings if "test.md" in w] == [
        f"{ws / '.agent' / 'commands' / 'test.md'}: a link to a file outside the workspace; skipped"
    ]


def test_frontmatter_and_expansion(tmp_path):
    write(
        tmp_path / ".agent" / "commands" / "fix.md",
        "---\ndescription: Fix an issue\nargument-hint: <issue> [priority]\n"
        "allowed-tools: Bash(git add:*), Bash(git status:*), Edit\nmodel: claude-haiku-5-5\n---\n"
        "Fix issue #$1 with priority $2. All: $ARGUMENTS. Missing: [$3]\n",
    )
    write(tmp_path / ".agent" / "commands" / "plain.md", "Summarize the repo.\n")
    found = load_custom_commands(tmp_path, [], [])
    fix = found.commands["fix"]
    assert (fix.description, fix.argument_hint, fix.model) == (
        "Fix an issue",
        "<issue> [priority]",
        "claude-haiku-5-5",
    )
    assert fix.allowed_tools == ("Bash(git add:*)", "Bash(git status:*)", "Edit")
    assert (
        fix.expand('123 "very high"')
        == 'Fix issue #123 with priority very high. All: 123 "very high". Missing: []'
    )
    assert fix.expand("$2 x") == "Fix issue #$2 with priority x. All: $2 x. Missing: []"  # expanded once
    assert (
        found.commands["plain"].expand("focus on tests") == "Summarize the repo.\n\nARGUMENTS: focus on tests"
    )
    spec = fix.spec(tmp_path)
    assert (spec.name, spec.args) == ("fix", "<issue> [priority]")
    assert spec.help == "Fix an issue (.agent/commands/fix.md)"
    assert (
        found.find("/FIX 1 2") == (fix, "1 2") and found.find("/nope") is None and found.find("//fix") is None
    )


def make(
    workspace: Path, responses, *, trusted: bool, mode: str = "ask", interactive: bool = True
) -> AgentSession:
    provider = ScriptedProvider(Script(responses=responses))
    config = Config(model="scripted", provider="scripted", permission_mode=mode, debug=True)
    return compose_session(config, provider, SessionSetup(workspace, None, interactive, trusted))


async def test_a_command_runs_as_a_prompt_and_shows_in_help(workspace):
    write(
        workspace / ".agent" / "commands" / "hello.md",
        "---\ndescription: Greet\n---\nSay hello to $ARGUMENTS.\n",
    )
    s = make(workspace, [{"text": "Hello, world!"}], trusted=False)
    events = await run(s, "/hello world")
    assert events[-1].result == "Hello, world!"
    sent = json.dumps(s.provider.requests[0].messages)
    assert "Say hello to world." in sent and "/hello" not in sent
    assert '"prompt": "/hello world"' in s.log.path.read_text().replace('"prompt":"', '"prompt": "')
    help_text = [e for e in await run(s, "/help") if isinstance(e, CommandResult)][0].text
    assert "`/hello` | Greet (.agent/commands/hello.md)" in help_text
    assert "hello" in [c.name for c in s.commands()]


BASH_TWICE = {
    "tool_calls": [
        {"name": "bash", "input": {"command": "git status --short"}},
        {"name": "bash", "input": {"command": "git status; rm -rf x"}},
    ]
}


async def test_allowed_tools_count_only_in_a_trusted_workspace(workspace):
    write(
        workspace / ".agent" / "commands" / "st.md",
        "---\nallowed-tools: Bash(git status:*)\n---\nShow the status.\n",
    )

    async def collect(trusted: bool) -> tuple[list[str], list, list[str]]:
        s = make(workspace, [BASH_TWICE, {"text": "ok"}], trusted=trusted)
        asked: list[str] = []

        async def answer(event):
            if isinstance(event, PermissionRequest):
                asked.append(event.call.input["command"])
                event.future.set_result("deny")

        events = await run(s, "/st", answer)
        ran = [e.call.input["command"] for e in events if isinstance(e, ToolStarted)]
        notices = [e.text for e in events if isinstance(e, Notice)]
        return asked, ran, notices

    asked, ran, _ = await collect(trusted=True)
    assert ran == ["git status --short"]  # allowed by the command's rule, no question
    assert asked == ["git status; rm -rf x"]  # a compound line never matches a prefix rule
    asked, ran, notices = await collect(trusted=False)
    assert ran == [] and asked == ["git status --short", "git status; rm -rf x"]
    assert any("allowed-tools ignored (this workspace is not trusted)" in n for n in notices)


async def test_a_command_s_model_the_provider_cannot_serve_is_said_and_the_turn_runs_on_the_session_s(
    workspace,
):
    write(workspace / ".agent" / "commands" / "other.md", "---\nmodel: gpt-5\n---\nGo.\n")
    s = make(workspace, [{"text": "a"}], trusted=True)
    s.provider.name, s.provider.routes_any_model = "anthropic", False  # Anthropic's own API
    events = await run(s, "/other")
    assert [r.model for r in s.provider.requests] == ["scripted"]
    [said] = [e.text for e in events if isinstance(e, Notice) and "gpt-5" in e.text]
    assert said.startswith("/other asks for gpt-5: gpt-5 is a model of openai") and "runs on scripted" in said
    assert s.model == "scripted"


async def test_the_model_of_a_command_is_used_for_its_turn_only(workspace):
    write(workspace / ".agent" / "commands" / "quick.md", "---\nmodel: claude-haiku-5-5\n---\nBe quick.\n")
    s = make(workspace, [{"text": "a"}, {"text": "b"}], trusted=True)
    await run(s, "/quick")
    await run(s, "normal")
    assert [r.model for r in s.provider.requests] == ["claude-haiku-5-5", "scripted"]
    assert s.model == "scripted"


async def test_an_untrusted_workspace_command_cannot_choose_the_model(workspace):
    """A cloned repository's `/review` asking for the dearest model runs on the person's."""
    write(workspace / ".agent" / "commands" / "review.md", "---\nmodel: claude-opus-5-5\n---\nReview.\n")
    s = make(workspace, [{"text": "a"}], trusted=False)
    events = await run(s, "/review")
    assert [r.model for r in s.provider.requests] == ["scripted"]
    [said] = [e.text for e in events if isinstance(e, Notice) and "claude-opus-5-5" in e.text]
    assert "ignored (this workspace is not trusted)" in said and "runs on scripted" in said


def _sent(session: AgentSession) -> str:
    return json.dumps(session.provider.requests[0].messages)


async def test_a_command_s_mentions_attach_the_file_as_a_typed_prompt_s_do(workspace, tmp_path, monkeypatch):
    """`- File: @app.py` in a command reached the model as words; now it is a read after the prompt.
    A repository's command naming a file outside the workspace is not the person's yes: it asks (and
    headless, it is not attached); the person's own command's is."""
    (tmp_path / "secret.txt").write_text("SECRET-OUTSIDE")
    write(
        workspace / ".claude" / "commands" / "look.md", "- File: @app.py\n- Also: @../secret.txt\nReview $1"
    )
    s = make(workspace, [{"text": "ok"}], trusted=True)
    asked: list[str] = []

    async def deny(event):
        if isinstance(event, PermissionRequest):
            asked.append(event.call.input["path"])
            event.future.set_result("deny")

    await run(s, "/look README.md", deny)
    sent = _sent(s)
    assert "return a - b" in sent and "SECRET-OUTSIDE" not in sent and "# demo" not in sent
    assert asked == [str(tmp_path / "secret.txt")]  # the repository's file asked; the person said no
    headless = make(workspace, [{"text": "ok"}], trusted=True, interactive=False)
    events = await run(headless, "/look @README.md")  # the person's own argument is theirs
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert "return a - b" in _sent(headless) and "# demo" in _sent(headless)
    assert any("@../secret.txt: not attached without a person to ask" in n for n in notices)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write(tmp_path / "xdg" / "agent" / "commands" / "mine.md", "Read @../secret.txt")
    mine = make(workspace, [{"text": "ok"}], trusted=False, interactive=False)
    await run(mine, "/mine")
    assert "SECRET-OUTSIDE" in _sent(mine)


async def test_a_command_s_bang_commands_run_first_as_the_model_s_bash_would(workspace):
    """`` !`cmd` `` runs before the prompt is sent, its output after it, through the same rules,
    question and sandbox as the model's bash: a repository's file is not the person's yes. Its
    `allowed-tools` allow it only in a trusted workspace; an ask headless is a refusal the result says."""
    write(
        workspace / ".claude" / "commands" / "st.md",
        "---\nallowed-tools: Bash(echo:*)\n---\nStatus: !`echo BANG-$1`\nNot a command: `!x` and a!`y`\n$ARGUMENTS",
    )
    s = make(workspace, [{"text": "ok"}], trusted=True)
    events = await run(s, "/st one !`touch pwned`")
    assert [e.call.input["command"] for e in events if isinstance(e, ToolStarted)] == ["echo BANG-one"]
    assert "BANG-one\\n" in _sent(s) and not (workspace / "pwned").exists()
    asked: list[str] = []

    async def deny(event):
        if isinstance(event, PermissionRequest):
            asked.append(event.call.input["command"])
            event.future.set_result("deny")

    untrusted = make(workspace, [{"text": "ok"}], trusted=False)
    events = await run(untrusted, "/st two", deny)
    assert asked == ["echo BANG-two"] and not any(isinstance(e, ToolStarted) for e in events)
    headless = make(workspace, [{"text": "ok"}], trusted=False, interactive=False)
    events = await run(headless, "/st three")
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert "Permission denied: bash" in _sent(headless) and "BANG-three\\n" not in _sent(headless)
    assert [e for e in events if isinstance(e, PermissionDenied)]
