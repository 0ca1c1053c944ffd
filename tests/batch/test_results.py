"""The results file: the driver appends whole lines; a task with a row is skipped the next time
(one whose row is an error too, unless --retry-failed); a torn line is named and its task runs again."""

from __future__ import annotations

import json

from agent_cli.batch.results import ResultsFile, Row, read_results
from agent_cli.core.types import Usage


def test_rows_round_trip_and_a_torn_last_line_does_not_swallow_the_next(tmp_path):
    path = tmp_path / "out.jsonl"
    ok = Row("a", False, "done", num_turns=2, usage=Usage(10, 5, 100, 20), branch="agent/batch/a")
    path.write_text(json.dumps(ok.to_json()) + "\n" + '{"id": "b", "is_err')  # a crash tore line 2

    earlier = read_results(path)
    assert earlier.rows == {"a": ok}
    assert earlier.problems == ("out.jsonl line 2: not a result; ignored (its task runs again)",)

    results = ResultsFile(path)
    results.append(Row("b", True, "failed"))
    results.close()

    again = read_results(path)
    assert set(again.rows) == {"a", "b"} and len(again.problems) == 1
    assert again.rows["a"].usage == Usage(10, 5, 100, 20)


def test_a_rows_permission_denials_are_the_list_p_prints(tmp_path):
    denial = {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "rm -rf x"}}
    row = Row("a", False, "ok", permission_denials=(denial,))
    assert row.to_json()["permission_denials"] == [denial]
    assert Row.from_json(json.loads(json.dumps(row.to_json()))) == row
    old = {**Row("b", False, "ok").to_json(), "permission_denials": 2}  # a row from before: a count
    assert Row.from_json(old).permission_denials == ()


def test_which_tasks_a_second_run_skips(tmp_path):
    path = tmp_path / "out.jsonl"
    results = ResultsFile(path)
    results.append(Row("done", False, "ok"))
    results.append(Row("failed", True, "no"))
    results.append(Row("fixed", True, "no"))
    results.append(Row("fixed", False, "ok"))  # the last row of a task counts
    results.close()

    earlier = read_results(path)

    assert [t for t in ("done", "failed", "fixed", "new") if earlier.skip(t, retry_failed=False)] == [
        "done",
        "failed",
        "fixed",
    ]
    assert [t for t in ("done", "failed", "fixed", "new") if earlier.skip(t, retry_failed=True)] == [
        "done",
        "fixed",
    ]
    assert read_results(tmp_path / "none.jsonl").rows == {}
