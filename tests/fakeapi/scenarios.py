"""Closed-loop scenarios for the reactive model (reactive.py), and one run of one through the real CLI.

    scenario = SCENARIOS["batch"]()                     # files to write, the model's steps, a prompt
    run = run_closed_loop(scenario, tmp_path / "repo", 60_000)   # budget None: unpressured
    run.model.forced, run.model.weighted_input, run.missing, run.problem, run.result["compactions"]

A run writes the files into a fresh git repository at `workspace`, starts the fake Messages API
answered by a `ReactiveModel` of the scenario, and runs `python -m agent_cli.cli -p PROMPT
--permission-mode yolo --output-format json --budget-tokens N` there (tests/e2e.py). Unpressured
(`budget=None`): `[context] policy = "none"` in the person's config and a budget of 1M tokens, the
default model's window (agent_cli/llm/models.toml), so nothing is managed. Bash runs unconfined
(`sandbox = "off"` in the person's config): the commands are the scenario's own and bwrap may be
missing. `missing` are the files whose content on disk is not what the scenario's edits make.

Files have 250 lines of ~60 characters (~4.4k tokens read, line numbers and JSON included); every
line is unique across all files, so one file's text never stands in for another's.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tests.e2e import anthropic_env, run_agent, user_config
from tests.fakeapi.reactive import Answer, Bash, Edit, ReactiveModel, Read, Step
from tests.fakeapi.server import FakeAnthropic

UNPRESSURED = 1_000_000
FILE_LINES = 250
MIDDLE = FILE_LINES // 2
RUN_TIMEOUT = 600.0


@dataclass(frozen=True)
class Scenario:
    name: str
    prompt: str
    files: dict[str, str]  # path -> content, written before the run
    steps: tuple[Step, ...]

    def expected_files(self) -> dict[str, str]:
        """Every file as the scenario's edits leave it."""
        out = dict(self.files)
        for step in self.steps:
            if isinstance(step, Edit):
                out[step.path] = out[step.path].replace(step.old, step.new, 1)
        return out


def line_of(file: int, n: int, extra: int = 0) -> str:
    """Line n (1-based) of file `file`, with `extra` characters added to its end (negative: cut from
    it; a line stays unique either way)."""
    line = f"    total_{file:02d}_{n:03d} = scale(values[{n}], factor={(n * 37 + file) % 97}) + offset_{file:02d}"
    return line + "#" * extra if extra >= 0 else line[:extra]


def content(file: int, extra: int = 0) -> str:
    return "".join(line_of(file, n, extra) + "\n" for n in range(1, FILE_LINES + 1))


def path_of(file: int) -> str:
    return f"src/mod_{file:02d}.py"


def edit(file: int, n: int, extra: int = 0) -> Edit:
    old = line_of(file, n, extra)
    return Edit(path_of(file), old, old + "  # checked", line=n)


def _files(count: int, extra: int = 0) -> dict[str, str]:
    return {path_of(i): content(i, extra) for i in range(count)}


# -- the scenarios -----------------------------------------------------------------------------------


def batch(count: int = 10, extra: int = 0) -> Scenario:
    """Read `count` files whole, then edit a middle line of each (`extra` characters more a line)."""
    steps = [Read(path_of(i)) for i in range(count)] + [edit(i, MIDDLE, extra) for i in range(count)]
    return Scenario(
        "batch",
        "Read the modules, then mark a middle line of each as checked.",
        _files(count, extra),
        tuple(steps),
    )


def with_instructions(scenario: Scenario, chars: int) -> Scenario:
    """`scenario` in a project whose AGENTS.md holds `chars` characters (0: as it is): every request
    then carries that much more, as it would in a real project."""
    if chars <= 0:
        return scenario
    files = {**scenario.files, "AGENTS.md": ("Use the project's style. " * (chars // 24 + 1))[:chars]}
    return replace(scenario, name=f"{scenario.name} (AGENTS.md {chars})", files=files)


def repeated(edits: int = 8) -> Scenario:
    """Read one file, then edit `edits` lines spread through it."""
    lines = [20 + k * (FILE_LINES - 40) // (edits - 1) for k in range(edits)]
    steps = [Read(path_of(0))] + [edit(0, n) for n in lines]
    return Scenario("repeated", "Mark eight lines of the module as checked.", _files(1), tuple(steps))


def repeated_loaded(others: int = 9, edits: int = 8) -> Scenario:
    """`repeated` after `others` whole reads of other files: the edits run under pressure."""
    base = repeated(edits)
    steps = [Read(path_of(i)) for i in range(1, others + 1)] + list(base.steps)
    return Scenario(
        "repeated_loaded",
        "Read the modules, then mark eight lines of the first as checked.",
        _files(others + 1),
        tuple(steps),
    )


def interleaved(count: int = 10) -> Scenario:
    """Read a file, edit it, read the next, … over `count` files."""
    steps = [s for i in range(count) for s in (Read(path_of(i)), edit(i, MIDDLE))]
    return Scenario("interleaved", "Go through the modules one by one.", _files(count), tuple(steps))


def exploration(count: int = 40, edited: int = 10) -> Scenario:
    """Read `count` files whole, then edit `edited` of them, spread over the reads."""
    chosen = [i * count // edited for i in range(edited)]
    steps = [Read(path_of(i)) for i in range(count)] + [edit(i, MIDDLE) for i in chosen]
    return Scenario("exploration", "Explore the modules, then fix ten of them.", _files(count), tuple(steps))


def bash_between(count: int = 5) -> Scenario:
    """Read `count` files, then `seq 1 20000` before each of their edits."""
    steps: list[Step] = [Read(path_of(i)) for i in range(count)]
    for i in range(count):
        steps += [Bash("seq 1 20000"), edit(i, MIDDLE)]
    return Scenario(
        "bash", "Read the modules; check the sequence before each fix.", _files(count), tuple(steps)
    )


def steps30() -> Scenario:
    """30 tool calls — 15 x `seq 1 3000`, 14 small `echo`s between them, one read — and an answer."""
    steps: list[Step] = []
    for k in range(15):
        steps.append(Bash("seq 1 3000"))
        if k < 14:
            steps.append(Bash(f"echo step {k + 1}"))
    steps.append(Read(path_of(0)))
    steps.append(Answer("All thirty steps are done."))
    return Scenario("steps30", "Run the thirty steps.", _files(1), tuple(steps))


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "batch": batch,
    "repeated": repeated,
    "repeated_loaded": repeated_loaded,
    "interleaved": interleaved,
    "exploration": exploration,
    "bash": bash_between,
    "steps30": steps30,
}


# -- one run -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClosedLoop:
    model: ReactiveModel
    returncode: int
    stdout: str  # the CLI's JSON result (`result` parses it)
    stderr: str
    missing: tuple[str, ...]  # files whose content is not what the scenario's edits make

    @property
    def result(self) -> dict[str, Any]:
        """The CLI's `--output-format json` object ({} when it printed none): compactions, usage, …"""
        try:
            found = json.loads(self.stdout)
        except json.JSONDecodeError:
            return {}
        return found if isinstance(found, dict) else {}

    @property
    def problem(self) -> str:
        """One line saying why the run does not count ("" when it does)."""
        if self.returncode != 0:
            return f"exit {self.returncode}: {self.stderr.strip()[-300:]}"
        if not self.model.done:
            return "the scenario did not finish"
        if self.model.errors:
            step, message = self.model.errors[0]
            return f"{len(self.model.errors)} tool errors, the first at step {step}: {message[:200]}"
        return f"edits missing in {', '.join(self.missing)}" if self.missing else ""


def write_workspace(scenario: Scenario, workspace: Path) -> None:
    for path, text in scenario.files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)


def run_closed_loop(
    scenario: Scenario, workspace: Path, budget: int | None, *, max_fetches: int = 4
) -> ClosedLoop:
    """`scenario` through the real CLI in `workspace` (created) at `budget` (None: unpressured);
    `max_fetches` 0: a model that edits from memory, never fetching what it cannot see."""
    write_workspace(scenario, workspace)
    config = 'sandbox = "off"\n' + ('[context]\npolicy = "none"\n' if budget is None else "")
    user_config(workspace, config)
    model = ReactiveModel(scenario.steps, max_fetches=max_fetches)
    with FakeAnthropic(responder=model) as server:
        out = run_agent(
            workspace,
            anthropic_env(workspace, server),
            "-p",
            scenario.prompt,
            "--permission-mode",
            "yolo",
            "--output-format",
            "json",
            "--budget-tokens",
            str(budget or UNPRESSURED),
            timeout=RUN_TIMEOUT,
        )
    missing = tuple(p for p, t in scenario.expected_files().items() if (workspace / p).read_text() != t)
    return ClosedLoop(model, out.returncode, out.stdout, out.stderr, missing)
