"""Rules in Claude Code's syntax, bash parsed as shell, and how rules combine with the modes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.tools.permissions import PLAN_REFUSAL, Permissions
from agent_cli.tools.registry import default_tools
from agent_cli.tools.rules import Rule, RuleError, SourcedRule, split_rule_list
from agent_cli.tools.shell import parse_shell

TOOLS = {t.name: t for t in default_tools()}


class FakeMcpTool:
    name = "mcp__time__now"
    description = ""
    input_schema: dict = {}
    read_only = False
    compactable = False

    def target(self, input):
        return ""

    def paths(self, input):
        return []


def perms(ws: Path, mode: str = "ask", home: Path | None = None, **effects: list[str]) -> Permissions:
    rules = [
        SourcedRule(Rule.parse(text), effect, "test")  # type: ignore[arg-type]
        for effect, texts in effects.items()
        for text in texts
    ]
    return Permissions(mode, ws, rules, home=home)  # type: ignore[arg-type]


def bash(p: Permissions, command: str) -> str:
    return p.decide(TOOLS["bash"], {"command": command}).action


# -- the shell parse -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "commands", "writes"),
    [
        ("echo hi", ["echo hi"], []),
        ("echo hi; rm f.txt", ["echo hi", "rm f.txt"], []),
        ("git log | head -5 && make || echo 'a && b'", ["git log", "head -5", "make", "echo a && b"], []),
        ("echo $(rm -rf x) `id`", ["echo $(rm -rf x) `id`", "rm -rf x", "id"], []),
        ("diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"], []),
        ("(cd x; rm y) && { touch z; }", ["cd x", "rm y", "touch z"], []),
        ("for f in *.py; do rm $f; done", ["rm $f"], []),
        ("f() { rm x; }; f", ["rm x", "f"], []),
        ("FOO=1 BAR=$(whoami) pytest -q", ["FOO=1 BAR=$(whoami) pytest -q", "whoami"], []),
        ("echo x > f.txt", ["echo x"], ["f.txt"]),
        ("echo x >> log 2>&1", ["echo x"], ["log"]),
        ("make &> build.log", ["make"], ["build.log"]),
        ("ls > /dev/null 2>&1 < input.txt", ["ls"], []),
        ("cat <<EOF\nhi\nEOF", ["cat"], []),
        ("cat <<'EOF' > f.txt\n$(rm x)\nEOF", ["cat"], ["f.txt"]),  # a quoted here-doc runs nothing
        ("cat <<EOF\n$(rm x) ${y:-`id`}\nEOF", ["cat", "rm x", "id"], []),
        ("echo ${x:-$(rm x)} $((1 + 2))", ["echo ${x:-$(rm x)} $((1 + 2))", "rm x"], []),
        ("timeout 5 nice -n 3 rm x", ["timeout 5 nice -n 3 rm x", "nice -n 3 rm x", "rm x"], []),
        ("bash -c 'ls; rm x' && eval 'id'", ["bash -c ls; rm x", "ls", "rm x", "eval id", "id"], []),
        ("find . -name '*.o' -exec rm {} +", ["find . -name *.o -exec rm {} +", "rm {}"], []),
        ("echo $'\\' '; rm x; #'", ["echo ' ", "rm x"], []),  # ANSI-C quoting read as bash does
        ("echo hi 1>&- x", ["echo hi x"], []),  # a closed descriptor (bashlex gives bare text): no crash
        ("echo a 3>&- > out", ["echo a"], ["out"]),
    ],
)
def test_parse_shell_sees_every_command_and_write(
    command: str, commands: list[str], writes: list[str]
) -> None:
    line = parse_shell(command)
    assert line is not None
    assert [c.text for c in line.commands] == commands
    assert list(line.writes) == writes


@pytest.mark.parametrize(
    ("command", "doubt"),
    [
        ("", "empty"),
        ("echo 'unterminated", "unterminated single quote"),
        ("[[ -f x ]] && rm x", "bash syntax this check does not follow"),
        ("echo $((x + 1))", "evaluates a value as arithmetic"),
        ("echo ${!name}", "the variable named by a value"),
        ("cd sub && echo x > f.txt", "changes directory"),
        ("echo x > $out", "named by an expansion"),
        ("cat <<EOF\nno end", "not ended by EOF"),
        ("echo " + "$(" * 3000, "nested too deep"),
    ],
)
def test_lines_that_cannot_be_read_with_certainty_have_a_doubt(command: str, doubt: str) -> None:
    line = parse_shell(command)
    assert not line.sure and doubt in line.doubts[0]


def test_a_line_that_does_not_parse_is_still_split_for_deny_rules() -> None:
    line = parse_shell("[[ -f x ]] && rm -rf x")
    assert not line.sure
    assert ("rm", "-rf", "x") in [c.words for c in line.commands]


# -- parsing rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "spec"),
    [
        ("Bash", "bash", None),
        ("bash(echo:*)", "bash", "echo:*"),
        ("Bash(*)", "bash", None),
        ("Read(~/.ssh/**)", "read", "~/.ssh/**"),
        ("read_file(src/**)", "read", "src/**"),
        ("MultiEdit(src/**)", "edit", "src/**"),
        ("WebFetch", "web_fetch", None),
        ("mcp__srv", "mcp__srv", None),
        ("  Edit( src/** )  ", "edit", "src/**"),
    ],
)
def test_rules_parse(text: str, tool: str, spec: str | None) -> None:
    rule = Rule.parse(text)
    assert (rule.tool, rule.spec) == (tool, spec)


@pytest.mark.parametrize("text", ["Bash(echo", "Bash()", "", "Bash(echo 'x:*)", "two words", "Bash(:*)"])
def test_bad_rules_are_named_in_the_error(text: str) -> None:
    with pytest.raises(RuleError) as info:
        Rule.parse(text)
    assert repr(text) in str(info.value)


def test_rule_lists_split_like_claude_code() -> None:
    assert split_rule_list("Bash(git diff:*) Edit,Read(~/a b/**) , mcp__srv") == [
        "Bash(git diff:*)",
        "Edit",
        "Read(~/a b/**)",
        "mcp__srv",
    ]


# -- bash rules ------------------------------------------------------------------------------------


def test_bash_prefix_rule_needs_every_command_to_match(ws: Path) -> None:
    p = perms(ws, allow=["bash(echo:*)"])
    assert bash(p, "echo hi") == "allow"
    assert bash(p, "echo hi | echo there && echo 'x; rm y'") == "allow"
    assert bash(p, "echo hi; rm f.txt") == "ask"
    assert bash(p, "echo $(rm f.txt)") == "ask"
    assert bash(p, "echo `rm f.txt`") == "ask"
    assert bash(p, "cat <(rm f.txt)") == "ask"
    assert bash(p, "echoes") == "ask"
    assert bash(p, "[[ -f x ]] && echo y") == "ask"  # not parseable: never allowed by rules


def test_a_redirect_that_writes_needs_edit_permission(ws: Path, tmp_path: Path) -> None:
    p = perms(ws, allow=["Bash(echo:*)"])
    assert bash(p, "echo x > f.txt") == "ask"
    assert "f.txt" in p.decide(TOOLS["bash"], {"command": "echo x > f.txt"}).reason
    assert bash(p, "echo x > /dev/null 2>&1") == "allow"
    assert bash(p, "echo x 2>&1 | echo y") == "allow"
    p.add_rule("Edit(out/**)", "allow")
    assert bash(p, "echo x > out/f.txt") == "allow"
    assert bash(p, "echo x > f.txt") == "ask"
    auto = perms(ws, "auto-edit", allow=["Bash(echo:*)"])
    assert bash(auto, "echo x > f.txt") == "allow"  # auto-edit may edit files in the workspace
    assert bash(auto, f"echo x > {tmp_path}/outside.txt") == "ask"


def test_exact_and_wildcard_bash_rules(ws: Path) -> None:
    p = perms(ws, allow=["Bash(npm test)", "Bash(git diff:*)", "Bash(npm run *)"])
    assert bash(p, "npm test") == "allow"
    assert bash(p, "npm test --watch") == "ask"
    assert bash(p, "git diff HEAD~1 -- src") == "allow"
    assert bash(p, "git push") == "ask"
    assert bash(p, "npm run build") == "allow"


def test_deny_beats_ask_beats_allow(ws: Path) -> None:
    p = perms(ws, "yolo", allow=["Bash"], ask=["Bash(git push:*)"], deny=["Bash(rm:*)"])
    assert bash(p, "ls") == "allow"
    assert bash(p, "git push origin main") == "ask"
    decision = p.decide(TOOLS["bash"], {"command": "ls && rm -rf build"})
    assert decision.action == "deny" and "Bash(rm:*)" in decision.reason
    both = perms(ws, allow=["Bash(echo:*)"], deny=["Bash(echo:*)"])
    assert bash(both, "echo hi") == "deny"


# -- path rules ------------------------------------------------------------------------------------


def test_edit_rules_are_gitignore_style_globs_in_the_workspace(ws: Path) -> None:
    p = perms(ws, allow=["Edit(src/**)"], deny=["Write(*.env)"])
    edit = {"old_string": "a", "new_string": "b"}
    assert p.decide(TOOLS["edit_file"], {"path": "src/a/b.py", **edit}).action == "allow"
    assert p.decide(TOOLS["write_file"], {"path": "src/new.py", "content": ""}).action == "allow"
    assert p.decide(TOOLS["edit_file"], {"path": "lib/b.py", **edit}).action == "ask"
    assert p.decide(TOOLS["edit_file"], {"path": "src/deep/.env", **edit}).action == "deny"


def test_read_rules_with_home_and_absolute_paths(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    p = perms(ws, "yolo", home=home, deny=["Read(~/.ssh/**)", "read(//etc/shadow)"])
    assert p.decide(TOOLS["read_file"], {"path": str(home / ".ssh" / "id_rsa")}).action == "deny"
    assert p.decide(TOOLS["grep"], {"pattern": "x", "path": str(home / ".ssh" / "config")}).action == "deny"
    assert p.decide(TOOLS["read_file"], {"path": "/etc/shadow"}).action == "deny"
    assert p.decide(TOOLS["read_file"], {"path": str(home / "notes.txt")}).action == "allow"
    # `/x` is tried as absolute and as anchored at the workspace (Claude Code's reading)
    q = perms(ws, deny=["Read(/secrets/**)"])
    assert q.decide(TOOLS["read_file"], {"path": "secrets/key"}).action == "deny"
    assert q.decide(TOOLS["read_file"], {"path": "other/secrets/key"}).action == "allow"


def test_tool_names_are_case_insensitive_and_ours_or_claude_codes(ws: Path) -> None:
    for rule in ("Edit", "edit_file", "EDIT", "MultiEdit"):
        p = perms(ws, allow=[rule])
        assert p.decide(
            TOOLS["edit_file"], {"path": "a.py", "old_string": "a", "new_string": "b"}
        ).action == ("allow"), rule
    assert perms(ws, deny=["Grep"]).decide(TOOLS["grep"], {"pattern": "x"}).action == "deny"
    assert perms(ws, deny=["LS"]).decide(TOOLS["ls"], {}).action == "deny"


def test_mcp_rules_name_a_server_or_a_tool(ws: Path) -> None:
    tool = FakeMcpTool()
    assert perms(ws).decide(tool, {}).action == "ask"
    assert perms(ws, allow=["mcp__time"]).decide(tool, {}).action == "allow"
    assert perms(ws, allow=["mcp__time__now"]).decide(tool, {}).action == "allow"
    assert perms(ws, allow=["mcp__timer"]).decide(tool, {}).action == "ask"
    assert perms(ws, allow=["mcp__time"], deny=["mcp__time__now"]).decide(tool, {}).action == "deny"
    assert Permissions("ask", ws).always_rules(tool, {}) == ["mcp__time__now"]


# -- plan mode and revoking ------------------------------------------------------------------------


def test_plan_mode_refuses_everything_that_is_not_read_only(ws: Path) -> None:
    p = perms(ws, "plan", allow=["Bash(git diff:*)", "Edit"])
    edit = p.decide(TOOLS["edit_file"], {"path": "a.py", "old_string": "a", "new_string": "b"})
    assert edit.action == "deny" and edit.reason == PLAN_REFUSAL
    assert p.decide(TOOLS["write_file"], {"path": "a.py", "content": ""}).action == "deny"
    assert bash(p, "rm -rf build") == "deny"
    assert bash(p, "git diff") == "allow"  # allowed by a rule and writes nothing
    assert bash(p, "git diff > patch.txt") == "deny"
    assert p.decide(TOOLS["read_file"], {"path": "a.py"}).action == "allow"


def test_revoke_removes_a_rule_whatever_its_source(ws: Path) -> None:
    p = perms(ws, allow=["Bash(echo:*)"])
    assert bash(p, "echo hi") == "allow"
    assert [r.rule.text for r in p.revoke("bash(echo:*)")] == ["Bash(echo:*)"]
    assert bash(p, "echo hi") == "ask"
    assert p.revoke("Bash(echo:*)") == []


def test_always_rules_are_the_narrowest(ws: Path, tmp_path: Path) -> None:
    p = Permissions("ask", ws)
    rules = p.always_rules
    assert rules(TOOLS["bash"], {"command": "pytest -q tests/x.py"}) == ["Bash(pytest:*)"]
    assert rules(TOOLS["bash"], {"command": "git diff HEAD && python -m pytest -x"}) == [
        "Bash(git diff:*)",
        "Bash(python -m pytest:*)",
    ]
    assert rules(TOOLS["bash"], {"command": "echo x > out.txt"}) == ["Bash(echo:*)", "Edit(./out.txt)"]
    assert rules(TOOLS["bash"], {"command": f"echo x > {tmp_path}/elsewhere"}) == []
    assert rules(TOOLS["bash"], {"command": "$CMD arg"}) == []
    assert rules(TOOLS["bash"], {"command": "[[ -x y ]]"}) == []
    assert "only this call" in p.describe_rule(TOOLS["bash"], {"command": "[[ -x y ]]"})


# -- item 9 of issue 18: changes the suite once let through ---------------------------------------


def test_a_deny_rule_sees_a_bash_redirect_target(ws: Path) -> None:
    """`deny Edit(secrets/**)` with `allow Bash(echo:*)`: `echo x > secrets/key` is refused, not
    merely asked (and in auto-edit mode, where redirects in the workspace run, it would run)."""
    for mode in ("ask", "auto-edit", "yolo"):
        p = perms(ws, mode, allow=["Bash(echo:*)"], deny=["Edit(secrets/**)"])
        decision = p.decide(TOOLS["bash"], {"command": "echo x > secrets/key"})
        assert decision.action == "deny", mode
        assert "Edit(secrets/**)" in decision.reason
        assert bash(p, "echo x > notes.txt") == ("ask" if mode == "ask" else "allow")


def test_a_call_matching_an_ask_and_a_deny_rule_is_refused(ws: Path) -> None:
    p = perms(ws, allow=["Bash"], ask=["Bash(rm:*)"], deny=["Bash(rm -rf:*)"])
    decision = p.decide(TOOLS["bash"], {"command": "rm -rf build"})
    assert decision.action == "deny" and "Bash(rm -rf:*)" in decision.reason
    assert bash(p, "rm build") == "ask"
    edit = perms(ws, "auto-edit", ask=["Edit(src/**)"], deny=["Write(src/*.lock)"])
    assert edit.decide(TOOLS["write_file"], {"path": "src/a.lock", "content": ""}).action == "deny"
    assert edit.decide(TOOLS["write_file"], {"path": "src/a.py", "content": ""}).action == "ask"


def test_a_bare_edit_rule_covers_write_file_and_a_bare_write_rule_edit_file(ws: Path) -> None:
    write = {"path": "a.py", "content": ""}
    edit = {"path": "a.py", "old_string": "a", "new_string": "b"}
    assert perms(ws, allow=["Edit"]).decide(TOOLS["write_file"], write).action == "allow"
    assert perms(ws, allow=["Write"]).decide(TOOLS["edit_file"], edit).action == "allow"
    assert perms(ws, "auto-edit", deny=["Edit"]).decide(TOOLS["write_file"], write).action == "deny"
    assert perms(ws, allow=["Edit"]).decide(TOOLS["bash"], {"command": "ls"}).action == "ask"


# -- symlinks: a path rule matches a link by its target ---------------------------------------------


def test_an_allow_rule_does_not_allow_an_edit_through_a_symlink_out_of_its_scope(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "src").mkdir()
    (ws / "src" / "x").symlink_to("../.git/config")
    (ws / "src" / "real.py").write_text("a\n")
    (ws / "src" / "alias.py").symlink_to("real.py")
    p = perms(ws, allow=["Edit(src/**)"])
    edit = {"old_string": "a", "new_string": "b"}
    decision = p.decide(TOOLS["edit_file"], {"path": "src/x", **edit})
    assert decision.action == "ask"
    assert p.decide(TOOLS["write_file"], {"path": "src/x", "content": ""}).action == "ask"
    assert p.decide(TOOLS["edit_file"], {"path": "src/alias.py", **edit}).action == "allow"  # target in src
    assert p.decide(TOOLS["edit_file"], {"path": "src/real.py", **edit}).action == "allow"
    p.add_rule("Bash(echo:*)", "allow")
    assert bash(p, "echo x > src/x") == "ask"
    assert bash(p, "echo x > src/new.txt") == "allow"
    # "always allow" saves the file the link points to, which is what a rule can match
    assert p.always_rules(TOOLS["edit_file"], {"path": "src/x", **edit}) == ["Edit(.git/config)"]


def test_a_deny_rule_matches_a_symlink_by_its_target_and_its_own_path(ws: Path) -> None:
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text("k\n")
    (ws / "notes").symlink_to("secrets/key")
    (ws / "secrets" / "pub").symlink_to("../public.txt")
    p = perms(ws, "yolo", deny=["Read(secrets/**)"])
    assert p.decide(TOOLS["read_file"], {"path": "notes"}).action == "deny"
    assert p.decide(TOOLS["grep"], {"pattern": "k", "path": "notes"}).action == "deny"
    assert p.decide(TOOLS["read_file"], {"path": "secrets/pub"}).action == "deny"  # the link's own path
    assert p.decide(TOOLS["read_file"], {"path": "other.txt"}).action == "allow"
    p.add_rule("Bash(cat:*)", "allow")
    assert bash(p, "cat < notes") == "deny"


def test_quoted_text_never_reaches_bashlex() -> None:
    """bashlex allocates without end on `'${esac<newline>x'for ` (a quoted string it misreads): the
    scan hands it a marker instead. Run in a child with a memory cap, so a regression fails the test
    instead of the machine."""
    probe = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1_000_000_000, 1_000_000_000))\n"
        "from agent_cli.tools.shell import parse_shell\n"
        "line = parse_shell(\"'${esac\\nx'for \")\n"
        "print(line.commands[0].words, line.doubts)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "('${esac\\nxfor',) ()"
