"""The rough edges a newcomer hit on the command line (issue 20, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e import clean_env, run_agent


def agent(workspace: Path, *args: str):
    return run_agent(workspace, clean_env(workspace), *args, timeout=120)


def _session_of(out) -> str:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["session_id"]


def test_continue_goes_on_in_the_session_used_last_not_the_newest(workspace):
    s1 = _session_of(agent(workspace, "-p", "first task", "--demo", "--output-format", "json"))
    s2 = _session_of(agent(workspace, "-p", "second task", "--demo", "--output-format", "json"))
    assert s1 < s2  # S2 is the newest created
    # the person goes back to S1 ...
    assert (
        _session_of(agent(workspace, "-p", "more on S1", "--resume", s1, "--demo", "--output-format", "json"))
        == s1
    )
    # ... so --continue goes on there, not in S2
    assert (
        _session_of(agent(workspace, "-p", "and now?", "--continue", "--demo", "--output-format", "json"))
        == s1
    )
    # opening S2 again, even without a prompt, makes it the one used last
    assert agent(workspace, "-p", "/cost", "--resume", s2, "--demo").returncode == 0
    assert (
        _session_of(agent(workspace, "-p", "again", "--continue", "--demo", "--output-format", "json")) == s2
    )
    # the picker and `agent sessions` list the one used last first
    listing = agent(workspace, "sessions").stdout.splitlines()
    assert listing[0].startswith(s2) or s2 in listing[0], listing


def test_summary_of_an_empty_conversation_is_one_clear_line(workspace):
    out = agent(workspace, "-p", "/summary", "--demo")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Nothing to summarize yet: the conversation is empty. Send a prompt first."
    assert "internal error" not in out.stderr and "ValueError" not in out.stderr + out.stdout
