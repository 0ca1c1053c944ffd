"""Skills and /init end to end: `agent -p` against the local Messages API server (tests/fakeapi), the
real client over loopback, asserting on what the server received."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e import anthropic_env, run_agent, tool_results
from tests.fakeapi.replies import Reply, ToolUse, text, tool_call
from tests.fakeapi.server import FakeAnthropic

DESCRIPTIONS = {
    "pdf-forms": "Fill in PDF forms and extract their fields (DESC-PDF)",
    "changelog": "Write the changelog entry for a release (DESC-CHANGELOG)",
    "lint-fix": "Fix the linter's complaints in this repository (DESC-LINT)",
}


def write_skill(folder: Path, name: str, description: str, body: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return path


def three_skills(workspace: Path) -> None:
    """Two of the person's own (XDG_CONFIG_HOME and CLAUDE_CONFIG_DIR) and one of the workspace."""
    write_skill(workspace / ".cfg" / "agent" / "skills", "pdf-forms", DESCRIPTIONS["pdf-forms"], "BODY-PDF\n")
    write_skill(
        workspace / ".claude-home" / "skills", "changelog", DESCRIPTIONS["changelog"], "BODY-CHANGELOG\n"
    )
    write_skill(
        workspace / ".claude" / "skills", "lint-fix", DESCRIPTIONS["lint-fix"], "BODY-LINT $ARGUMENTS\n"
    )


def env(workspace: Path, server: FakeAnthropic) -> dict[str, str]:
    return {**anthropic_env(workspace, server), "CLAUDE_CONFIG_DIR": str(workspace / ".claude-home")}


def agent(workspace: Path, server: FakeAnthropic, *args: str):
    return run_agent(workspace, env(workspace, server), *args, "--output-format", "json")


def test_a_task_that_loads_one_skill_of_three(workspace, fake_anthropic):
    server = fake_anthropic
    three_skills(workspace)
    server.push(tool_call("skill", {"name": "lint-fix", "arguments": "src/"}), text("Fixed."))
    out = agent(workspace, server, "-p", "fix the lint errors", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"] == "Fixed."
    first, second = server.requests
    for body in (first, second):
        sent = json.dumps(body)
        assert all(d in sent for d in DESCRIPTIONS.values())  # three descriptions, every request
    assert "BODY-" not in json.dumps(first)
    loaded = json.dumps(second["messages"])
    assert "BODY-LINT src/" in loaded  # one body, with its arguments
    assert "BODY-PDF" not in loaded and "BODY-CHANGELOG" not in loaded
    assert first["system"] == second["system"]  # the listing sits in the cached prefix, unchanged
    assert "skill" in [t["name"] for t in first["tools"]] and "skill_search" not in json.dumps(first["tools"])


def test_an_untrusted_workspace_s_skill_stays_out(workspace, fake_anthropic):
    server = fake_anthropic
    three_skills(workspace)
    server.push(text("ok"))
    out = agent(workspace, server, "-p", "hello")
    assert out.returncode == 0, out.stderr
    sent = json.dumps(server.requests[0])
    assert "DESC-PDF" in sent and "DESC-CHANGELOG" in sent and "DESC-LINT" not in sent
    assert (
        "not using the skills of .claude/skills: this workspace is not trusted (pass --trust-workspace"
        in out.stderr
    )


def test_a_50_mb_skill_body_is_offloaded_and_recall_finds_its_middle(workspace, fake_anthropic):
    server = fake_anthropic
    middle = "The secret handshake is three taps and a wave."
    path = workspace / ".cfg" / "agent" / "skills" / "huge" / "SKILL.md"
    path.parent.mkdir(parents=True)
    filler = ("padding line of the enormous skill, nothing to see here\n" * 20_000).encode()  # ~1.1 MB
    with path.open("wb") as handle:
        handle.write(b"---\ndescription: An enormous skill\n---\n")
        for _ in range(23):
            handle.write(filler)
        handle.write(middle.encode() + b"\n")
        for _ in range(23):
            handle.write(filler)
    assert path.stat().st_size > 50_000_000
    server.push(
        tool_call("skill", {"name": "huge"}, id="toolu_huge"),
        tool_call("recall", {"ref": "toolu_huge", "pattern": "secret handshake"}),
        text("Three taps and a wave."),
    )
    out = agent(workspace, server, "-p", "use the huge skill")
    assert out.returncode == 0, out.stderr
    loaded = json.dumps(server.requests[1]["messages"])
    assert len(json.dumps(server.requests[1])) < 200_000  # a preview, never 50 MB
    assert '<persisted-output ref=\\"toolu_huge\\"' in loaded and middle not in loaded
    recalled = tool_results(server)[-1]
    assert middle in recalled, recalled[:500]


def test_slash_skills_lists_them_with_their_tokens(workspace, fake_anthropic):
    three_skills(workspace)
    out = run_agent(workspace, env(workspace, fake_anthropic), "-p", "/skills", "--trust-workspace")
    assert out.returncode == 0, out.stderr
    assert "| lint-fix | .claude/skills | listed |" in out.stdout
    assert "| changelog |" in out.stdout and "| pdf-forms |" in out.stdout
    assert "The system prompt lists 3 of them in" in out.stdout
    assert fake_anthropic.requests == []  # a command: no model call


CHILD = "CHILD-INIT-EXPLORE"
FOUND = "Build: make build. Test: pytest -q (tests/). Layout: src/ app code."


def script_init(server: FakeAnthropic, write: ToolUse) -> None:
    server.push(
        Reply(
            (
                ToolUse(
                    "task",
                    {
                        "description": "survey",
                        "prompt": f"{CHILD}: report commands and layout",
                        "subagent_type": "explore",
                    },
                ),
            )
        ),
        Reply((write,)),
        text("AGENTS.md now covers the commands and the layout."),
    )
    server.route(CHILD, tool_call("read_file", {"path": "Makefile"}), text(FOUND))


def test_init_explores_in_a_sub_agent_and_headless_the_write_is_denied(workspace, fake_anthropic):
    server = fake_anthropic
    (workspace / "Makefile").write_text("build:\n\tcc -o app app.c  # MAKEFILE-BODY\n")
    script_init(server, ToolUse("write_file", {"path": "AGENTS.md", "content": "# demo\n\n" + FOUND + "\n"}))
    out = run_agent(workspace, env(workspace, server), "-p", "/init", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert not (workspace / "AGENTS.md").exists()  # ask mode, headless: the write is refused
    assert [d["tool_input"]["path"] for d in data["permission_denials"] if d["tool_name"] == "Write"] == [
        "AGENTS.md"
    ]
    parent = [b for b in server.requests if CHILD not in json.dumps(b["messages"][0])]
    child = server.conversations(CHILD)
    assert len(child) == 2 and "MAKEFILE-BODY" in json.dumps(child[-1])
    assert sorted(t["name"] for t in child[0]["tools"]) == ["glob", "grep", "ls", "read_file", "recall"]
    first = json.dumps(parent[0]["messages"])
    assert "create `AGENTS.md`" in first and "subagent_type" in first
    assert all("MAKEFILE-BODY" not in json.dumps(b) for b in parent)  # the exploration stayed out
    assert FOUND in json.dumps(parent[1]["messages"])  # only the sub-agent's answer came back


def test_init_updates_the_claude_md_that_exists_once_edits_are_allowed(workspace, fake_anthropic):
    server = fake_anthropic
    (workspace / "CLAUDE.md").write_text("# demo\n\nOld notes.\n")
    edit = ToolUse("edit_file", {"path": "CLAUDE.md", "old_string": "Old notes.", "new_string": FOUND})
    script_init(server, edit)
    out = run_agent(
        workspace,
        env(workspace, server),
        "-p",
        "/init focus on the tests",
        "--permission-mode",
        "auto-edit",
        "--output-format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    assert (workspace / "CLAUDE.md").read_text() == f"# demo\n\n{FOUND}\n"
    assert not (workspace / "AGENTS.md").exists()
    first = json.dumps(server.requests[0]["messages"])
    assert "update `CLAUDE.md`" in first and "edit_file" in first and "focus on the tests" in first


def test_init_is_listed_and_a_command_file_cannot_take_its_name(workspace, fake_anthropic):
    (workspace / ".agent" / "commands").mkdir(parents=True)
    (workspace / ".agent" / "commands" / "init.md").write_text("not the real init\n")
    out = run_agent(workspace, env(workspace, fake_anthropic), "-p", "/help")
    assert out.returncode == 0, out.stderr
    assert "`/init [focus]`" in out.stdout and "`/skills`" in out.stdout
    assert "init.md: /init is a built-in command, which wins" in out.stderr
