"""Fidelity in replay: was the text each recorded edit needed in the request the policy built?"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.replay.driver import load_transcript, replay
from agent_cli.replay.fidelity import FidelityProbe, edit_probes, fidelity, visible_texts

from .helpers import SessionWriter

FIXTURES = Path(__file__).parent / "fixtures"
SOURCE = "def area(r):\n    return 3.14 * r * r\n\ndef volume(r, h):\n    return area(r) * h\n"


def numbered(text: str, sep: str = "→") -> str:
    return "\n".join(f"{n:>6}{sep}{line}" for n, line in enumerate(text.splitlines(), 1))


def _session(tmp_path: Path, read_output: str, edit: dict | None, *, write: str | None = None) -> Path:
    s = SessionWriter()
    s.user("use math.pi", 0)
    s.tool_turn("Read", {"file_path": "/repo/geo.py"}, read_output, at=5)
    if edit is not None:
        s.tool_turn("Edit", {"file_path": "/repo/geo.py", **edit}, "The file has been updated.", at=10)
    if write is not None:
        s.tool_turn("Write", {"file_path": "/repo/geo.py", "content": write}, "File written.", at=15)
    s.response([{"type": "text", "text": "Done."}], at=20)
    return s.write(tmp_path / "geo.jsonl")


EDIT = {
    "old_string": "def area(r):\n    return 3.14 * r * r",
    "new_string": "def area(r):\n    return math.pi * r * r",
}


def test_an_edit_whose_text_was_read_is_visible_with_either_line_prefix(tmp_path: Path):
    for sep in ("→", "\t"):
        path = _session(tmp_path, numbered(SOURCE, sep), EDIT)
        result = replay(path, policy="default")
        assert result.fidelity.to_json() | {"adjusted_weighted_input": 0} == {
            "edits": 1,
            "visible_unmanaged": 1,
            "blind": 0,
            "adjusted_weighted_input": 0,
            "blind_edits": [],
        }
        assert result.fidelity.adjusted_weighted_input == result.weighted_input


def test_an_edit_of_text_never_shown_is_not_visible_even_unmanaged(tmp_path: Path):
    edit = {"old_string": "def perimeter(r):\n    return 2 * 3.14 * r", "new_string": "x"}
    result = replay(_session(tmp_path, numbered(SOURCE), edit), policy="none")
    assert (result.fidelity.edits, result.fidelity.visible_unmanaged, result.fidelity.blind) == (1, 0, 0)


def test_a_cleared_read_makes_the_edit_blind_and_costs_a_re_read(tmp_path: Path):
    transcript = load_transcript(_session(tmp_path, numbered(SOURCE), EDIT))
    probe = FidelityProbe(transcript)
    (edit,) = [p for ps in probe.probes.values() for p in ps]
    assert edit.kind == "edit" and edit.needed == ("def area(r):", "return 3.14 * r * r")
    use = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/repo/geo.py"}}
    shown = [
        {"role": "assistant", "content": [use]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": numbered(SOURCE)}],
        },
    ]
    cleared = [
        shown[0],
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "[cleared: read_file /repo/geo.py lines 1-5, 120 chars; recall ref r1]",
                }
            ],
        },
    ]
    probe.observe(edit.request, shown, 10_000, len)
    unmanaged = list(probe.checks)
    probe.checks.clear()
    probe.observe(edit.request, cleared, 8_000, len)
    result = fidelity(probe.checks, unmanaged, 50_000)
    assert (result.edits, result.visible_unmanaged, result.blind) == (1, 1, 1)
    # one extra request: the context just sent read from the cache, the re-read output written
    assert unmanaged[0].reread_tokens == len(visible_texts(shown)[-1])  # the read, prefixes stripped
    assert result.adjusted_weighted_input == 50_000 + int(0.1 * 8_000 + 1.25 * unmanaged[0].reread_tokens)


def test_a_write_over_a_read_file_needs_what_the_reads_and_edits_showed(tmp_path: Path):
    path = _session(tmp_path, numbered(SOURCE), EDIT, write="import math\n")
    probes = edit_probes(load_transcript(path))
    assert [p.kind for p in probes] == ["edit", "write"]
    write = probes[1]
    assert "return math.pi * r * r" in write.needed and "return 3.14 * r * r" not in write.needed
    assert replay(path, policy="default").fidelity.visible_unmanaged == 2


def test_a_write_over_a_file_read_under_another_spelling_of_its_path_is_probed(tmp_path: Path):
    """Windows: read as `C:\\repo\\geo.py`, written as `c:/repo/geo.py`: one file, so the write
    needs what the read showed (working_set.file_key)."""
    s = SessionWriter()
    s.user("use math.pi", 0)
    s.tool_turn("Read", {"file_path": "C:\\repo\\geo.py"}, numbered(SOURCE), at=5)
    s.tool_turn("Write", {"file_path": "c:/repo/geo.py", "content": "import math\n"}, "File written.", at=15)
    s.response([{"type": "text", "text": "Done."}], at=20)
    probes = edit_probes(load_transcript(s.write(tmp_path / "win.jsonl")))
    assert [(p.kind, p.path) for p in probes] == [("write", "C:/repo/geo.py")]
    assert "return 3.14 * r * r" in probes[0].needed


def test_a_session_without_edits_reports_zeros():
    result = replay(FIXTURES / "merged.jsonl", policy="default")
    data = result.to_json()["fidelity"]
    assert (data["edits"], data["visible_unmanaged"], data["blind"]) == (0, 0, 0)
    assert data["adjusted_weighted_input"] == result.weighted_input


def test_the_priced_clear_keeps_the_read_an_edit_after_an_idle_gap_needs():
    """The fixture: 14 early reads, the parser read, 4 more reads, ten idle minutes (T1 runs on the
    cold cache, where a clear costs no rewrite), then an edit of the parser. The default keeps the
    parser's read (a whole read not yet edited is worth more than it costs), as the oracle does, which
    knows the edit comes; the API's context editing (3 tool uses kept) would not."""
    path = FIXTURES / "working_set.jsonl"
    assert replay(path, policy="oracle").fidelity.blind == 0
    new = replay(path, policy="default")
    assert new.recoverable_items == new.compacted_items and new.integrity.ok
    assert (new.fidelity.visible_unmanaged, new.fidelity.blind) == (1, 0)


def test_dump_requests_writes_each_simulated_request(tmp_path: Path):
    out = tmp_path / "requests.jsonl"
    fixture = FIXTURES / "working_set.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_cli.cli",
            "replay",
            str(fixture),
            "--json",
            "--dump-requests",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["request"] for line in lines] == list(range(report["requests"]))
    last = lines[-1]
    assert last["messages"][0]["role"] == "user" and last["usage"]["output_tokens"] >= 0
    # the edit's request (the second to last) shows the parser's read, as the report says
    assert "def parse(text):" in json.dumps(lines[-2]["messages"])
    assert report["fidelity"]["blind"] == 0
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_cli.cli",
            "replay",
            str(fixture),
            "--dump-requests",
            str(tmp_path / "no" / "x.jsonl"),
        ],
        capture_output=True,
        text=True,
    )
    assert (
        bad.returncode == 2 and "cannot write --dump-requests" in bad.stderr and "Traceback" not in bad.stderr
    )


@pytest.mark.parametrize(
    "name", ["4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"]
)
def test_the_default_policy_keeps_blind_edits_within_two_percent_on_real_sessions(name: str):
    path = FIXTURES / "transcripts" / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    result = replay(path, policy="default")
    fid = result.fidelity
    assert fid.visible_unmanaged >= 20  # the sessions edit a lot: the measure means something
    assert fid.blind <= 0.02 * fid.visible_unmanaged, fid.to_json()["blind_edits"]
    assert result.weighted_input <= fid.adjusted_weighted_input < result.reference.weighted_input
