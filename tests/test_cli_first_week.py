"""What a person coming from Claude Code hits in their first week (audit I): a script that forgot
-p, Claude Code's model aliases, a repository's config written for a newer version, the flags
`claude -p` scripts pass, bad endpoints and values caught at start-up, and one warning per problem."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e import clean_env, run_agent


def agent(workspace: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_agent(workspace, clean_env(workspace), *args, stdin=stdin, timeout=60)


def test_without_p_and_without_a_terminal_it_says_so_instead_of_painting_a_screen(workspace):
    out = agent(workspace, "hi")  # stdin is /dev/null, stdout a pipe
    assert out.returncode == 2
    assert out.stderr.strip() == (
        'agent: the interactive UI needs a terminal; use -p for scripts (agent -p "PROMPT")'
    )
    assert out.stdout == "" and "\x1b[" not in out.stderr  # no escape codes


def test_a_p_only_flag_without_p_names_what_is_missing(workspace):
    for flag, value in (("--output-format", "json"), ("--input-format", "stream-json")):
        out = agent(workspace, "hi", flag, value)
        assert out.returncode == 2, out.stderr
        assert (
            out.stderr.strip() == f'agent: {flag} needs -p (a headless run): agent -p {flag} {value} "PROMPT"'
        )


def test_piped_stdin_with_p_still_runs(workspace):
    out = agent(workspace, "-p", "what is this?", "--demo", "--output-format", "json", stdin="a log line\n")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["is_error"] is False
