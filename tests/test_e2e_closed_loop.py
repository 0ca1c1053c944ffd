"""The context policy closed-loop, end to end: `agent -p` against the fake Messages API answered by a
reactive model (tests/fakeapi/reactive.py) that re-reads — or recalls — what it must edit but
cannot see. Ten whole reads of 250-line files (~44k as the server counts them, with the first
request's ~3.5k: 47.5k) fit the 48k a 60k budget leaves after output's reserve, so a policy that
makes the model fetch them again before editing them pays for clearing it did not need."""

from __future__ import annotations

import pytest

from tests.fakeapi.reactive import Read
from tests.fakeapi.scenarios import (
    MIDDLE,
    Scenario,
    _files,
    batch,
    edit,
    path_of,
    run_closed_loop,
    with_instructions,
)


def test_ten_reads_then_ten_edits_at_60k_force_at_most_one_re_read(tmp_path):
    scenario = batch(10)
    workspace = tmp_path / "repo"
    run = run_closed_loop(scenario, workspace, 60_000)
    assert run.returncode == 0, run.stderr
    assert run.model.done and not run.model.errors, run.model.errors
    assert run.model.blind == []  # every edit was made with its old text in view
    for path, expected in scenario.expected_files().items():  # every edit landed on disk
        assert (workspace / path).read_text() == expected, path
    assert run.model.requests == 21 + len(run.model.forced)  # 10 reads, 10 edits, the answer
    assert len(run.model.forced) <= 1, run.model.forced


def test_the_same_run_costs_at_most_a_tenth_more_than_unpressured(tmp_path):
    """What the priced clears and the forced room-making at 60k cost, against the run with no
    management at all (weighted input as the server bills it, every request counted)."""
    scenario = batch(10)
    pressured = run_closed_loop(scenario, tmp_path / "pressured", 60_000)
    free = run_closed_loop(scenario, tmp_path / "free", None)
    assert pressured.returncode == free.returncode == 0, pressured.stderr + free.stderr
    assert free.model.forced == [] and pressured.model.blind == []
    ratio = pressured.model.weighted_input / free.model.weighted_input
    assert ratio <= 1.1, f"{ratio:.3f}x the unpressured run"


def assert_both_targets(tmp_path, extra: int, agents_md: int) -> None:
    """The batch with lines `extra` characters longer and an AGENTS.md of `agents_md` characters, at
    60k: at most one re-read, and at most a tenth more than the same run unpressured."""
    scenario = with_instructions(batch(10, extra=extra), agents_md)
    pressured = run_closed_loop(scenario, tmp_path / "pressured", 60_000)
    free = run_closed_loop(scenario, tmp_path / "free", None)
    assert pressured.problem == free.problem == "", pressured.problem + free.problem
    assert len(pressured.model.forced) <= 1, pressured.model.forced
    ratio = pressured.model.weighted_input / free.model.weighted_input
    assert ratio <= 1.1, f"{ratio:.3f}x the unpressured run"


@pytest.mark.parametrize(("extra", "agents_md"), [(-2, 0), (-2, 300), (-6, 2_000)])
def test_reads_that_fit_stay_under_both_targets_whatever_else_the_request_carries(tmp_path, extra, agents_md):
    """The batch in projects where the ten reads still fit the usable budget but fill it to different
    depths: files a little smaller, and an AGENTS.md that every request carries. Editing a read must
    not make a lossy tier due or force a clear (context/tiers/pricing.py:worth_keeping): at most one
    re-read and a tenth more than unpressured in each."""
    assert_both_targets(tmp_path, extra, agents_md)


@pytest.mark.parametrize(("extra", "agents_md"), [(2, 0), (4, 300)])
def test_reads_that_do_not_fit_cost_one_re_read_and_a_tenth_at_most(tmp_path, extra, agents_md):
    """Files a little larger: the ten reads no longer fit the usable 48k, so something read must go
    before the last edits. A miss is priced as a share of the budget (putting a wrong act right
    reads a 48k context here, not a 180k one), so the read waiting its turn goes and comes back
    once, where clearing the reads already edited would rewrite the cache from the head: at most
    one re-read and a tenth more than unpressured."""
    assert_both_targets(tmp_path, extra, agents_md)


def test_a_model_that_edits_a_file_it_cannot_see_gets_the_read_back_for_its_next_edit(tmp_path):
    """A model that never fetches (it edits from memory) and edits each of ten files twice: at 60k
    some reads are cleared before their edits. The first edit of such a file is blind; its result
    brings the read back (context/restore.py), so the second edit of the file sees its text."""
    count = 10
    steps = [Read(path_of(i)) for i in range(count)]
    steps += [e for i in range(count) for e in (edit(i, MIDDLE), edit(i, MIDDLE + 40))]
    scenario = Scenario("batch_twice", "Check every module.", _files(count), tuple(steps))
    run = run_closed_loop(scenario, tmp_path / "repo", 60_000, max_fetches=0)
    assert run.problem == "", run.problem
    first_edits = {count + 2 * i for i in range(count)}  # the step of each file's first edit
    assert run.model.blind, "no read was cleared before its edit: the run tests nothing"
    assert set(run.model.blind) <= first_edits, run.model.blind  # never the second edit of a file
