from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.tools.permissions import Permissions, command_words
from agent_cli.tools.registry import default_tools

TOOLS = {t.name: t for t in default_tools()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere"
    path.mkdir()
    return path


def decide(p: Permissions, name: str, **input) -> str:
    return p.decide(TOOLS[name], input).action


@pytest.mark.parametrize("mode", ["ask", "auto-edit", "yolo"])
def test_read_only_tools_inside_always_run(ws: Path, mode: str) -> None:
    p = Permissions(mode, ws)
    assert decide(p, "read_file", path="src/a.py") == "allow"
    assert decide(p, "grep", pattern="x") == "allow"
    assert decide(p, "glob", pattern="**/*.py") == "allow"
    assert decide(p, "ls") == "allow"
    assert decide(p, "todo_write", todos=[]) == "allow"
    assert decide(p, "recall", ref="r") == "allow"


def test_ask_mode(ws: Path) -> None:
    p = Permissions("ask", ws)
    assert decide(p, "write_file", path="a.py", content="") == "ask"
    assert decide(p, "edit_file", path="a.py", old_string="a", new_string="b") == "ask"
    assert decide(p, "bash", command="ls") == "ask"


def test_auto_edit_mode(ws: Path, outside: Path) -> None:
    p = Permissions("auto-edit", ws)
    assert decide(p, "write_file", path="a.py", content="") == "allow"
    assert decide(p, "edit_file", path=str(ws / "src/a.py"), old_string="a", new_string="b") == "allow"
    assert decide(p, "bash", command="pytest") == "ask"
    assert decide(p, "write_file", path=str(outside / "a.py"), content="") == "ask"
    assert decide(p, "read_file", path=str(outside / "a.py")) == "ask"


def test_yolo_mode_still_asks_for_writes_outside(ws: Path, outside: Path) -> None:
    p = Permissions("yolo", ws)
    assert decide(p, "bash", command="rm -rf build") == "allow"
    assert decide(p, "write_file", path="a.py", content="") == "allow"
    assert decide(p, "read_file", path=str(outside / "notes.txt")) == "allow"
    assert decide(p, "write_file", path=str(outside / "a.py"), content="") == "ask"
    assert decide(p, "edit_file", path="../elsewhere/a.py", old_string="a", new_string="b") == "ask"
    assert decide(p, "write_file", path="~/.bashrc", content="") == "ask"
    p.allow_always(TOOLS["write_file"], {"path": str(outside / "a.py"), "content": ""})
    assert decide(p, "write_file", path=str(outside / "a.py"), content="") == "ask"  # always asks


def test_reads_outside_the_workspace_ask(ws: Path, outside: Path) -> None:
    p = Permissions("ask", ws)
    assert decide(p, "read_file", path=str(outside / "a.txt")) == "ask"
    assert decide(p, "grep", pattern="x", path=str(outside)) == "ask"
    assert decide(p, "glob", pattern=f"{outside}/**/*.py") == "ask"
    assert decide(p, "ls", path="..") == "ask"
    rule = p.describe_rule(TOOLS["read_file"], {"path": str(outside / "a.txt")})
    assert f"Read(/{outside.resolve()}/**)" in rule
    p.allow_always(TOOLS["read_file"], {"path": str(outside / "a.txt")})
    assert decide(p, "read_file", path=str(outside / "b.txt")) == "allow"
    assert decide(p, "ls", path=str(outside)) == "allow"
    assert decide(p, "ls", path=str(outside.parent)) == "ask"


def test_symlink_out_of_the_workspace_is_outside(ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside)
    p = Permissions("auto-edit", ws)
    assert decide(p, "write_file", path="link/a.py", content="") == "ask"


def test_session_rule_for_bash_prefix(ws: Path) -> None:
    p = Permissions("ask", ws)
    tool = TOOLS["bash"]
    assert p.describe_rule(tool, {"command": "pytest -q tests"}) == (
        "saves the rule Bash(pytest:*) for this session"
    )
    assert p.allow_always(tool, {"command": "pytest -q tests"}) == ["Bash(pytest:*)"]
    assert decide(p, "bash", command="pytest tests/tools -x") == "allow"
    assert decide(p, "bash", command="LANG=C pytest") == "allow"  # a harmless assignment
    assert decide(p, "bash", command="FOO=1 pytest") == "ask"  # an assignment is part of the command
    assert decide(p, "bash", command="PYTHONPATH=. pytest") == "ask"
    assert decide(p, "bash", command="pytest && rm -rf /") == "ask"
    assert decide(p, "bash", command="pytest $(rm -rf /)") == "ask"
    assert decide(p, "bash", command="pytester") == "ask"
    assert decide(p, "bash", command="npm test") == "ask"
    assert [(r.rule.text, r.effect, r.source) for r in p.rules] == [("Bash(pytest:*)", "allow", "session")]


def test_session_rule_for_compound_command(ws: Path) -> None:
    p = Permissions("auto-edit", ws)
    saved = p.allow_always(TOOLS["bash"], {"command": "cd src && make | tee log"})
    assert saved == ["Bash(cd:*)", "Bash(make:*)", "Bash(tee:*)"]
    assert decide(p, "bash", command="cd lib && make all") == "allow"
    assert decide(p, "bash", command="cd lib && make all | tee out; rm x") == "ask"


def test_session_rule_for_edits_is_the_file(ws: Path, outside: Path) -> None:
    p = Permissions("ask", ws)
    edit = TOOLS["edit_file"]
    input = {"path": "src/a.py", "old_string": "a", "new_string": "b"}
    assert p.describe_rule(edit, input) == "saves the rule Edit(src/a.py) for this session"
    p.allow_always(edit, input)
    assert decide(p, "edit_file", path="src/a.py", old_string="x", new_string="y") == "allow"
    assert decide(p, "write_file", path="src/a.py", content="") == "allow"  # the file, by either tool
    assert decide(p, "edit_file", path="src/b.py", old_string="x", new_string="y") == "ask"
    assert p.allow_always(TOOLS["write_file"], {"path": "a.py", "content": ""}) == ["Write(./a.py)"]
    assert decide(p, "write_file", path="a.py", content="") == "allow"
    assert decide(p, "write_file", path="sub/a.py", content="") == "ask"  # ./ anchors at the root
    assert decide(p, "edit_file", path=str(outside / "b.py"), old_string="x", new_string="y") == "ask"


def test_unknown_mode_is_refused(ws: Path) -> None:
    with pytest.raises(ValueError):
        Permissions("everything", ws)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("pytest -q", ["pytest"]),
        ("cd src && make || echo failed", ["cd", "make", "echo"]),
        ("FOO=1 BAR=2 npm test", ["npm"]),
        ("git log | head -5; ls", ["git", "head", "ls"]),
        ("echo 'a && b'", ["echo"]),
        ("ls\npwd", ["ls", "pwd"]),
        ("echo $(whoami)", ["echo", "whoami"]),
        ("echo `whoami`", ["echo", "whoami"]),
        ("echo 'unterminated", []),
        ("echo $(whoami) | tee x", ["echo", "tee", "whoami"]),
        ("", []),
    ],
)
def test_command_words(command: str, words: list[str]) -> None:
    assert command_words(command) == words


def test_always_allow_saves_what_the_rules_need_of_wrappers_and_assignments(ws: Path) -> None:
    p = Permissions("ask", ws)
    rules = p.always_rules
    assert rules(TOOLS["bash"], {"command": "timeout 60 pytest -q"}) == ["Bash(pytest:*)"]
    assert rules(TOOLS["bash"], {"command": "LANG=C pytest -q"}) == ["Bash(pytest:*)"]
    assert rules(TOOLS["bash"], {"command": "FOO=1 pytest -q"}) == ["Bash(FOO=1 pytest:*)"]
    assert rules(TOOLS["bash"], {"command": "bash -c 'make && ls'"}) == ["Bash(make:*)", "Bash(ls:*)"]
    assert rules(TOOLS["bash"], {"command": "echo ${x:-$(id)}"}) == ["Bash(echo:*)", "Bash(id:*)"]
    # what no prefix rule may allow can only be allowed once
    for command in ("GIT_PAGER=cat git log", "git diff --output=x", "echo $((x))", "$CMD x"):
        assert rules(TOOLS["bash"], {"command": command}) == [], command
        assert "only this call" in p.describe_rule(TOOLS["bash"], {"command": command})
    p.allow_always(TOOLS["bash"], {"command": "FOO=1 pytest -q"})
    assert decide(p, "bash", command="FOO=1 pytest tests") == "allow"
    assert decide(p, "bash", command="FOO=2 pytest tests") == "ask"
