"""A `Read(...)` deny rule keeps what it covers out of grep, glob and ls, as it keeps it from read_file:
a search whose root the rule covers (or that lies in a denied folder, through a symlink too) is
refused; a search over a folder that merely holds denied files runs and leaves them out, saying how
many it left out (a number that does not depend on the pattern). edit_file shows what it reads (the
closest region to a missed old_string, the lines around an edit), so a rule on reading covers it too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import agent_cli.tools.grep as grep_module
from agent_cli.core.types import ToolCall
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.denied_reads import deny_check, rg_exclusions
from agent_cli.tools.grep import find_rg
from agent_cli.tools.permissions import Decision, Permissions
from agent_cli.tools.registry import default_tools, run_call
from agent_cli.tools.rules import Rule, SourcedRule

REGISTRY = default_tools()
TOOLS = {t.name: t for t in REGISTRY}
RULES = ("Read(./.env)", "Read(./secrets/**)")
SECRETS = ("sk-live-123", "hunter2")


def perms(ws: Path, *deny: str, mode: str = "ask", home: Path | None = None) -> Permissions:
    rules = [SourcedRule(Rule.parse(text), "deny", ".claude/settings.json") for text in deny]
    return Permissions(mode, ws, rules, home=home or ws.parent / "nohome")  # type: ignore[arg-type]


async def through_the_loop(p: Permissions, name: str, **input: Any) -> ToolResult:
    """What the model gets: the permission decision, then the tool with the session's deny rules."""
    decision = p.decide(TOOLS[name], input)
    if decision.action != "allow":
        return ToolResult(f"{decision.action}: {decision.reason}", is_error=True)
    ctx = ToolContext(workspace=p.workspace, read_guard=p)
    return await run_call(REGISTRY, ToolCall(id="toolu_1", name=name, input=input), ctx)


@pytest.fixture
def secret_ws(ws: Path) -> Path:
    (ws / ".env").write_text("API_KEY=sk-live-123\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key.txt").write_text("SECRET_TOKEN=hunter2\n")
    (ws / "lnk").symlink_to("secrets")
    (ws / "app.py").write_text("API_KEY = env('API_KEY')\nSECRET_TOKEN = None\n")
    return ws


@pytest.fixture(params=["rg", "python"])
def engine(request, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "rg" and find_rg() is None:
        pytest.skip("rg is not installed")
    if request.param == "python":
        monkeypatch.setattr(grep_module, "find_rg", lambda: None)
    return request.param


def leaks(result: ToolResult) -> list[str]:
    return [s for s in (*SECRETS, ".env", "key.txt") if s in result.output]


LEFT_OUT_TWO = "(2 files left out: deny rules forbid reading them)"


async def test_grep_content_leaves_out_denied_files(secret_ws: Path, engine: str) -> None:
    p = perms(secret_ws, *RULES)
    result = await through_the_loop(p, "grep", pattern="API_KEY|SECRET_TOKEN", output_mode="content")
    assert not result.is_error and leaks(result) == [], result.output
    assert result.output.splitlines() == [
        "app.py",
        "1:API_KEY = env('API_KEY')",
        "2:SECRET_TOKEN = None",
        LEFT_OUT_TWO,
    ]
    assert result.meta == {"matches": 2, "files": 1}


@pytest.mark.parametrize("mode", ["files_with_matches", "count"])
async def test_grep_files_and_count_leave_out_denied_files(secret_ws: Path, engine: str, mode: str) -> None:
    p = perms(secret_ws, *RULES)
    result = await through_the_loop(p, "grep", pattern="API_KEY|SECRET_TOKEN", output_mode=mode)
    assert leaks(result) == [], result.output
    assert result.output.splitlines()[0] == ("app.py" if mode == "files_with_matches" else "app.py:2")
    assert result.output.splitlines()[-1] == LEFT_OUT_TWO


async def test_the_note_says_the_same_whatever_the_pattern(secret_ws: Path, engine: str) -> None:
    """A count of denied files that *match* would let a model spell a secret out one guess at a time."""
    p = perms(secret_ws, *RULES)
    hit = await through_the_loop(p, "grep", pattern="sk-live-1")
    miss = await through_the_loop(p, "grep", pattern="sk-live-9")
    assert hit.output.replace("sk-live-1", "sk-live-9") == miss.output
    assert miss.output.splitlines() == ["No matches for 'sk-live-9' in the workspace.", LEFT_OUT_TWO]


@pytest.mark.parametrize("path", ["secrets", "lnk", "./secrets/", "secrets/key.txt", ".env"])
@pytest.mark.parametrize("tool", ["grep", "glob", "ls"])
async def test_a_search_in_a_denied_folder_is_refused_like_read_file(
    secret_ws: Path, tool: str, path: str
) -> None:
    p = perms(secret_ws, *RULES)
    input = {"pattern": "*" if tool == "glob" else "SECRET"} if tool != "ls" else {}
    result = await through_the_loop(p, tool, path=path, **input)
    rule = "Read(./.env)" if path == ".env" else "Read(./secrets/**)"
    assert result.output == f"deny: denied by the rule {rule} (.claude/settings.json)"
    read = p.decide(TOOLS["read_file"], {"path": "secrets/key.txt"})
    assert read.reason == "denied by the rule Read(./secrets/**) (.claude/settings.json)"


@pytest.mark.parametrize("tool", ["grep", "glob", "ls"])
async def test_a_search_in_a_folder_an_ask_rule_covers_asks_and_one_over_it_leaves_nothing_out(
    secret_ws: Path, tool: str
) -> None:
    """`ask Read(./secrets/**)`: read_file of secrets/key.txt asks, and so does a search rooted in
    `secrets` (or a link to it); a search of the whole workspace runs as before."""
    rules = [SourcedRule(Rule.parse("Read(./secrets/**)"), "ask", ".claude/settings.json")]
    p = Permissions("ask", secret_ws, rules, home=secret_ws.parent / "nohome")  # type: ignore[arg-type]
    input = {"pattern": "*" if tool == "glob" else "SECRET"} if tool != "ls" else {}
    for path in ("secrets", "lnk"):
        decision = p.decide(TOOLS[tool], {"path": path, **input})
        assert decision.action == "ask" and "Read(./secrets/**)" in decision.reason, decision
    assert p.decide(TOOLS[tool], input).action == "allow"


async def test_a_search_through_a_symlink_is_filtered_by_the_target(secret_ws: Path, engine: str) -> None:
    """Had the root not been refused (a rule on one file, not the folder), the link's files are judged
    by where they lead: grep of `lnk` finds lnk/key.txt, which is secrets/key.txt."""
    p = perms(secret_ws, "Read(secrets/key.txt)")
    ctx = ToolContext(workspace=secret_ws, read_guard=p)
    for mode in ("content", "files_with_matches"):
        call = ToolCall(id="t", name="grep", input={"pattern": "SECRET", "path": "lnk", "output_mode": mode})
        result = await run_call(REGISTRY, call, ctx)
        assert result.output.splitlines() == [
            "No matches for 'SECRET' in lnk.",
            "(1 file left out: a deny rule forbids reading it)",
        ]
    (secret_ws / "keylink").symlink_to("secrets/key.txt")  # a link to a denied file, named as the root
    call = ToolCall(id="t", name="grep", input={"pattern": "SECRET", "path": "keylink"})
    assert "hunter2" not in (await run_call(REGISTRY, call, ctx)).output
    assert p.decide(TOOLS["grep"], {"pattern": "x", "path": "keylink"}).action == "deny"


async def test_glob_leaves_out_denied_files(secret_ws: Path) -> None:
    p = perms(secret_ws, *RULES)
    result = await through_the_loop(p, "glob", pattern="**/*")
    assert sorted(result.output.splitlines()) == sorted(["app.py", "lnk", LEFT_OUT_TWO])
    assert result.meta == {"count": 2}
    none = await through_the_loop(p, "glob", pattern="**/*.txt")
    assert none.output.splitlines() == ["No files match '**/*.txt' in the workspace.", LEFT_OUT_TWO]


async def test_ls_leaves_out_denied_entries(secret_ws: Path) -> None:
    p = perms(secret_ws, *RULES)
    result = await through_the_loop(p, "ls")
    assert result.output.splitlines() == [
        "./",
        "  app.py",
        "  lnk",
        "  secrets/",
        "(2 entries left out: deny rules forbid reading them)",
    ]


async def test_without_deny_rules_nothing_is_left_out(secret_ws: Path) -> None:
    p = perms(secret_ws)
    result = await through_the_loop(p, "grep", pattern="hunter2", output_mode="content")
    assert result.output.splitlines() == ["secrets/key.txt", "1:SECRET_TOKEN=hunter2"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / "notes.txt").write_text("PRIVATE notes\n")
    monkeypatch.setenv("HOME", str(home))
    return home


async def test_the_readmes_ssh_rule_covers_grep_glob_and_ls_in_yolo(
    ws: Path, home: Path, engine: str
) -> None:
    p = perms(ws, "Read(~/.ssh/**)", mode="yolo", home=home)
    denied = "deny: denied by the rule Read(~/.ssh/**) (.claude/settings.json)"
    for path in ("~/.ssh", str(home / ".ssh"), "~/.ssh/"):
        assert (await through_the_loop(p, "grep", pattern="PRIVATE", path=path)).output == denied
        assert (await through_the_loop(p, "ls", path=path)).output == denied
    assert (await through_the_loop(p, "glob", pattern="~/.ssh/*")).output == denied
    found = await through_the_loop(p, "grep", pattern="PRIVATE", path="~", output_mode="content")
    assert found.output.splitlines() == [
        str(home / "notes.txt"),
        "1:PRIVATE notes",
        "(1 file left out: a deny rule forbids reading it)",
    ]
    listed = await through_the_loop(p, "glob", pattern="~/**/*")
    assert listed.output.splitlines() == [
        str(home / "notes.txt"),
        "(1 file left out: a deny rule forbids reading it)",
    ]
    tree = await through_the_loop(p, "ls", path="~")
    assert "id_ed25519" not in tree.output and "notes.txt" in tree.output


# -- edit_file reads what it edits ----------------------------------------------------------------------

ENV = "API_KEY=SECRETENV-999\nDB_PASSWORD=hunter2-SECRET\n"


@pytest.mark.parametrize("mode", ["ask", "auto-edit", "yolo"])
@pytest.mark.parametrize("rule", ["Read(./.env)", "Read", "Read(/.env)", "Grep(*.env)"])
@pytest.mark.parametrize("path", [".env", "envlink"])
def test_a_deny_rule_on_reading_denies_edit_file_as_it_does_read_file(
    ws: Path, mode: str, rule: str, path: str
) -> None:
    (ws / ".env").write_text(ENV)
    (ws / "envlink").symlink_to(".env")
    p = perms(ws, rule, mode=mode)
    read = p.decide(TOOLS["read_file"], {"path": path})
    edit = p.decide(TOOLS["edit_file"], {"path": path, "old_string": "API_KEY=x", "new_string": "y"})
    assert edit == read == Decision("deny", f"denied by the rule {rule} (.claude/settings.json)", rule)


def test_a_deny_rule_on_reading_a_folder_denies_edits_in_it_and_no_others(secret_ws: Path) -> None:
    p = perms(secret_ws, *RULES, mode="auto-edit")
    for path in ("secrets/key.txt", "lnk/key.txt", str(secret_ws / "secrets" / "key.txt")):
        decision = p.decide(TOOLS["edit_file"], {"path": path, "old_string": "a", "new_string": "b"})
        assert decision.reason == "denied by the rule Read(./secrets/**) (.claude/settings.json)", path
    other = p.decide(TOOLS["edit_file"], {"path": "app.py", "old_string": "a", "new_string": "b"})
    assert other == Decision("allow", "auto-edit mode")


@pytest.mark.parametrize("mode", ["auto-edit", "yolo"])
def test_an_ask_rule_on_reading_asks_for_edit_file(ws: Path, mode: str) -> None:
    (ws / ".env").write_text(ENV)
    rules = [SourcedRule(Rule.parse("Read(./.env)"), "ask", "config")]
    p = Permissions(mode, ws, rules, home=ws.parent / "nohome")  # type: ignore[arg-type]
    decision = p.decide(TOOLS["edit_file"], {"path": ".env", "old_string": "A", "new_string": "B"})
    assert decision == Decision("ask", "the rule Read(./.env) (config) asks", "Read(./.env)")


def test_an_allow_rule_on_reading_does_not_allow_edit_file(ws: Path) -> None:
    (ws / ".env").write_text(ENV)
    for text in ("Read(./.env)", "Read"):
        p = Permissions("ask", ws, [SourcedRule(Rule.parse(text), "allow", "config")], home=ws)
        decision = p.decide(TOOLS["edit_file"], {"path": ".env", "old_string": "A", "new_string": "B"})
        assert decision == Decision("ask", "edit_file asks in ask mode"), text


async def test_edit_file_of_a_denied_file_shows_the_model_nothing_of_it(ws: Path) -> None:
    """The report: in auto-edit, a missed old_string showed the closest line, and an edit that adds a
    space showed the whole file as its excerpt."""
    (ws / ".env").write_text(ENV)
    rules = [SourcedRule(Rule.parse("Read(./.env)"), "deny", "config")]  # the person's own config
    p = Permissions("auto-edit", ws, rules, home=ws.parent / "nohome")
    denied = "deny: denied by the rule Read(./.env) (config)"
    for old, new in (("API_KEY=x", "y"), ("SECRETENV", "SECRETENV "), ("", "x")):
        result = await through_the_loop(p, "edit_file", path=".env", old_string=old, new_string=new)
        assert result.output == denied and result.is_error
    assert (await through_the_loop(p, "read_file", path=".env")).output == denied
    assert (ws / ".env").read_text() == ENV


async def test_write_file_is_left_to_the_rules_on_writing_and_shows_nothing_it_replaced(ws: Path) -> None:
    """write_file reads the old file only to count its lines (and keep its encoding)."""
    (ws / ".env").write_text(ENV)
    p = perms(ws, "Read(./.env)", mode="auto-edit")
    result = await through_the_loop(p, "write_file", path=".env", content="API_KEY=x\n")
    assert result.output == "Overwrote .env (1 line; was 2 lines)."
    assert "SECRET" not in result.output + json.dumps(result.meta)


# -- the parts -----------------------------------------------------------------------------------------


def test_the_search_check_agrees_with_read_files_rule_matching(secret_ws: Path, tmp_path: Path) -> None:
    """deny_check is Rule.matches_path for read_file, compiled once for a whole search."""
    (secret_ws / "sub").mkdir()
    (secret_ws / "sub" / ".env").write_text("x")
    (secret_ws / "envlink").symlink_to(".env")
    texts = ["Read(./.env)", "Read(secrets/**)", "Grep(*.txt)", "Read(/sub/**)", "Edit(app.py)", "Read(~/x)"]
    paths = [
        secret_ws / name
        for name in (".env", "sub/.env", "envlink", "lnk/key.txt", "secrets/key.txt", "app.py", "sub/a.txt")
    ] + [tmp_path / "x", tmp_path / "x" / "y"]
    home = tmp_path
    for text in texts:
        rule = Rule.parse(text)
        check = deny_check([SourcedRule(rule, "deny", "t")], secret_ws, home)
        for path in paths:
            expected = rule.matches_path("read_file", path, secret_ws, home)
            assert (check is not None and check(path)) == expected, (text, path)
    assert deny_check([SourcedRule(Rule.parse("Read(.env)"), "allow", "t")], secret_ws, home) is None
    everything = deny_check([SourcedRule(Rule.parse("Read"), "deny", "t")], secret_ws, home)
    assert everything is not None and everything(secret_ws / "app.py")


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
async def test_ripgrep_does_not_read_a_denied_file(secret_ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The filter is the authority; ripgrep, given each denied file as an exclusion, never reads one."""
    records: list[bytes] = []
    feed = grep_module._RgParser.feed
    monkeypatch.setattr(grep_module._RgParser, "feed", lambda self, r: records.append(r) or feed(self, r))
    await through_the_loop(perms(secret_ws, *RULES), "grep", pattern="API_KEY|SECRET", output_mode="content")
    assert records and not [r for r in records if any(s.encode() in r for s in SECRETS)]


@pytest.mark.skipif(find_rg() is None, reason="rg is not installed")
def test_the_exclusions_ripgrep_gets_are_literal(ws: Path) -> None:
    names = ["we*ird{a,b}[x].pem", "trail.pem ", "!bang.pem", "#hash.pem", "back\\slash.pem"]
    for name in names:
        (ws / name).write_text("x\n")
        (ws / name.replace(".pem", ".txt")).write_text("x\n")
    globs = rg_exclusions(ws, [ws / name for name in names])
    args = [find_rg(), "--no-config", "--files", "--sort", "path"] + [f"--glob={g}" for g in globs]
    listed = subprocess.run([*args, "--", str(ws)], cwd=ws, capture_output=True, text=True, check=True)
    assert sorted(Path(line).name for line in listed.stdout.splitlines()) == sorted(
        name.replace(".pem", ".txt") for name in names
    )
    assert rg_exclusions(ws, [ws / "caf\udce9.pem", ws.parent / "out.pem"]) == []  # left to the filter
