"""The bypass table (bypass_table.py): what `decide` gives for each published way past a peer's
rules, and, run in real bash with a stand-in for every program, that the reading saw every program
bash ran."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_cli.tools.permissions import Permissions
from agent_cli.tools.registry import default_tools
from agent_cli.tools.rules import Rule, SourcedRule
from agent_cli.tools.shell import parse_shell
from tests.tools.bypass_table import CASES, Case

BASH = {t.name: t for t in default_tools()}["bash"]
# Programs the stand-in directory links to the real ones, so what they run is run (and logged).
REAL = ("timeout", "nice", "nohup", "stdbuf", "env", "xargs", "find", "setsid", "flock", "bash", "sh")
_NOT_FOUND = re.compile(r"^[^:\n]*: (?:line \d+: )?([^:\n]+): command not found", re.M)


def test_the_table_is_large_and_covers_every_mode() -> None:
    assert len(CASES) >= 100
    assert {c.mode for c in CASES} == {"ask", "auto-edit", "plan", "yolo"}
    assert {c.expect for c in CASES} == {"allow", "ask", "deny"}
    assert len({c.id for c in CASES}) == len(CASES), "two rows are the same"


def _permissions(case: Case, ws: Path) -> Permissions:
    rules = [
        SourcedRule(Rule.parse(text), effect, "table")  # type: ignore[arg-type]
        for effect, texts in (("allow", case.allow), ("deny", case.deny), ("ask", case.ask))
        for text in texts
    ]
    return Permissions(case.mode, ws, rules)  # type: ignore[arg-type]


def _links(case: Case, ws: Path) -> None:
    for link, target in case.links:
        path = ws / link
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_bypass_gets_the_expected_decision(case: Case, ws: Path) -> None:
    _links(case, ws)
    decision = _permissions(case, ws).decide(BASH, {"command": case.command})
    assert decision.action == case.expect, f"{case.source}: {decision.reason}"
    assert decision.reason or decision.action == "allow"
    headless = "allow" if decision.action == "allow" else "deny"  # headless, what asks is denied
    assert headless == ("allow" if case.expect == "allow" else "deny")


# -- the reading against real bash -------------------------------------------------------------------


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH where every program named in the table logs its name and does nothing (the few in
    REAL are the real ones, so what they wrap runs and logs too)."""
    if not shutil.which("bash"):
        pytest.skip("no bash")
    root = tmp_path_factory.mktemp("stand-ins")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    names = {m.rsplit("/", 1)[-1] for c in CASES for m in re.findall(r"[A-Za-z_][\w.+-]*", c.command)}
    for name in names | {"touch", "rm", "id", "whoami", "curl", "git", "cat", "ls", "python3", "tail"}:
        target = bin_dir / name
        real = shutil.which(name) if name in REAL else None
        if real:
            target.symlink_to(real)
        else:
            target.write_text('#!/bin/sh\nprintf "%s\\n" "${0##*/}" >> "$RAN_LOG"\n')
            target.chmod(0o755)
    return bin_dir


def _ran(command: str, bin_dir: Path, cwd: Path) -> set[str]:
    log = cwd.parent / f"{cwd.name}.ran"  # one per run: a background program may still write to it
    log.write_text("")
    env = {"PATH": str(bin_dir), "HOME": str(cwd), "RAN_LOG": str(log), "LC_ALL": "C"}
    done = subprocess.run(
        [shutil.which("bash") or "bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    names = set(log.read_text().split())
    names |= {m.rsplit("/", 1)[-1] for m in _NOT_FOUND.findall(done.stderr)}
    return names - set(REAL)


@pytest.mark.parametrize("case", [c for c in CASES if c.run], ids=[c.id for c in CASES if c.run])
def test_the_reading_sees_every_program_bash_runs(case: Case, stand_ins, tmp_path: Path) -> None:
    """When the reading is sure of a line and sees no risk in it, every program bash runs is one
    of its commands (else a rule could allow a line that runs something no rule was asked about)."""
    cwd = tmp_path / "run"
    cwd.mkdir()
    _links(case, cwd)
    line = parse_shell(case.command)
    ran = _ran(case.command, stand_ins, cwd)
    if not line.sure or any(c.risk for c in line.commands):
        return  # no rule but an exact one or a bare Bash allows it: nothing to prove here
    seen = {c.words[0].rsplit("/", 1)[-1] for c in line.commands if c.words}
    assert ran <= seen, f"bash ran {sorted(ran - seen)}, which the reading did not see"


def test_the_stand_ins_do_log(stand_ins, tmp_path: Path) -> None:
    cwd = tmp_path / "run"
    cwd.mkdir()
    assert _ran("touch a; timeout 5 rm b; nosuchprogram", stand_ins, cwd) == {
        "touch",
        "rm",
        "nosuchprogram",
    }
    assert os.access(stand_ins / "touch", os.X_OK)
