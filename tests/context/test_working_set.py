"""The working set: what the model is still working with stays; stale and finished work goes first."""

from __future__ import annotations

from dataclasses import replace

from agent_cli.context.model import ContextConfig, apply_compaction
from agent_cli.context.tiers import Digest, MicroCompact
from agent_cli.context.tiers.region import find_runs
from agent_cli.context.working_set import UNCHANGED_PREFIX, working_set
from tests.context.test_tiers import Counter, FakeSummarizer, asst, make_ctx, person, read_pair, results

WS = ContextConfig(working_set_fraction=0.5, working_set_calls=4, micro_keep_recent=1)


def numbered(name: str, lines: int = 60) -> str:
    return "\n".join(f"{n:>6}\t{name} line {n}: value = {n}" for n in range(1, lines + 1))


def call(tid: str, name: str, **inp) -> list:
    output = (
        numbered(inp.get("path", tid)) if name == "read_file" else f"{name} done on {inp.get('path', '')}"
    )
    return [asst("", (tid, name, inp)), results((tid, name, output))]


def session() -> list:
    """Reads of a.py (twice: the first is superseded), b.py and 4 old files, edits of a.py."""
    view = [person("refactor a.py")]
    for n in range(4):
        view += call(f"old{n}", "read_file", path=f"old{n}.py")
    view += call("a1", "read_file", path="a.py")
    view += call("b1", "read_file", path="b.py")
    view += call("a2", "read_file", path="a.py")  # covers the first read: that one is stale
    view += call(
        "e1", "edit_file", path="a.py", old_string="a.py line 3: value = 3" * 8, new_string="x = 3" * 40
    )
    return view


def test_a_read_then_edited_file_is_kept_and_a_superseded_read_is_stale():
    ws = working_set(session(), Counter(), 100_000, recent_calls=4)
    assert {"a2", "e1", "b1"} <= ws.keep and "a1" not in ws.keep
    assert "a1" in ws.stale and not ({"old0", "old1"} & ws.keep)
    assert ws.files[0] == "a.py"  # the most recently touched first


def test_the_budget_and_the_window_bound_the_working_set():
    view = session()
    assert working_set(view, Counter(), 0, recent_calls=4).keep == frozenset()
    wide = working_set(view, Counter(), 100_000, recent_calls=100)
    assert {"old0", "old3"} <= wide.keep  # within the window, every file is being worked on


def test_files_in_the_todo_list_or_a_failing_test_come_first():
    view = session()
    view += call("todo", "todo_write", todos=[{"content": "finish old1.py", "status": "pending"}])
    view += [
        asst("", ("t", "bash", {"command": "pytest"})),
        results(("t", "bash", "FAILED tests/old2.py::test_x\n[exit 1]"), error=True),
    ]
    ws = working_set(view, Counter(), 100_000, recent_calls=2)
    assert set(ws.files[:2]) == {"old1.py", "old2.py"}
    assert {"old1", "old2"} <= ws.keep and "old0" not in ws.keep


async def test_t1_clears_stale_and_finished_reads_first_and_keeps_the_working_set():
    view = session()
    ctx = make_ctx(view, budget=100_000, last_request_at=0.0, config=WS)
    compaction = await MicroCompact().propose(view, ctx, "cache_cold")
    assert compaction is not None
    after = apply_compaction(view, compaction)
    text = {b.tool_use_id: b.text for m in after if m.role == "user" for b in m.tool_results()}
    assert text["a2"].startswith("     1\ta.py line 1") and "value = 60" in text["a2"]
    assert text["a1"].startswith("[cleared: read_file a.py lines 1-60,")  # stale, though recent
    assert "recall ref" in text["old0"] and "old0.py lines 1-60" in text["old0"]
    edit = next(b for m in after for b in m.blocks if b.type == "tool_use" and b.id == "e1")
    assert edit.input["new_string"] == "x = 3" * 40  # the working set's inputs stay too
    # without the working set the same T1 clears the kept read and the edit's input
    config = ContextConfig(working_set_fraction=0, micro_keep_recent=1)
    off = make_ctx(view, budget=100_000, last_request_at=0.0, config=config)
    cleared = apply_compaction(view, await MicroCompact().propose(view, off, "cache_cold"))
    text = {b.tool_use_id: b.text for m in cleared if m.role == "user" for b in m.tool_results()}
    assert text["a2"].startswith("[cleared: read_file a.py lines 1-60,")


async def test_t3_and_digest_leave_the_working_set_alone():
    view = session() + [asst("a.py is refactored."), person("thanks, now b.py")]
    config = replace(WS, tail_fraction=0.01)  # a short tail: the runs before it are candidates
    ctx = make_ctx(view, budget=20_000, used=30_000, summarizer=FakeSummarizer(), config=config)
    runs = find_runs(view, ctx, {})
    kept = {"a2", "e1", "b1"}
    for run in runs:
        ids = {b.tool_use_id for m in view[run.start : run.end] for b in m.tool_results()}
        assert not ids & kept
    assert runs  # the rest is summarizable
    digest = await Digest().propose(view, ctx, "digest")
    assert digest is None  # the run holds a.py's calls: it stays whole until that work is done
    done = read_pair(7) + [asst("ok")]
    later = [person("look at file7")] + done + [person("next")]
    assert await Digest().propose(
        later, make_ctx(later, config=ContextConfig(working_set_fraction=0)), "digest"
    )


async def test_a_folded_cleared_read_still_names_its_path_lines_and_ref():
    view = [person("survey")]
    for n in range(16):
        view += call(f"r{n}", "read_file", path=f"mod{n}.py")
    view += [asst("Surveyed."), person("next")]
    ctx = make_ctx(
        view,
        budget=100_000,
        last_request_at=0.0,
        config=ContextConfig(working_set_fraction=0, micro_coarse_calls=0),
    )
    after = apply_compaction(view, await MicroCompact().propose(view, ctx, "cache_cold"))
    digests = "\n".join(b.text for m in after for b in m.blocks if b.meta.tag == "tool-digest")
    assert "- read_file mod0.py lines 1-60 → ok (output cleared, ref r" in digests


def test_an_unchanged_since_answer_does_not_make_the_read_it_points_to_stale():
    view = session()
    view += [
        asst("", ("a3", "read_file", {"path": "a.py"})),
        results(("a3", "read_file", UNCHANGED_PREFIX + "a2: a.py lines 1-60 are exactly as that read shows")),
    ]
    ws = working_set(view, Counter(), 100_000, recent_calls=4)
    assert {"a2", "a3"} <= ws.keep and "a2" not in ws.stale


def test_an_edit_s_old_text_does_not_count_against_the_budget_since_t1_clears_it():
    def edited(old: str) -> list:
        view = [person("fix a.py")] + call("a1", "read_file", path="a.py")
        return view + call("e1", "edit_file", path="a.py", old_string=old, new_string="x = 3")

    counter = Counter()
    kept = working_set(edited("y" * 40), counter, 10**6, recent_calls=4)
    picture = sum(counter.text(b.text) for m in edited("") for b in m.tool_results())
    budget = picture + 40  # room for the read, its result texts and the new text, not for 4k of old text
    assert working_set(edited("y" * 4_000), counter, budget, recent_calls=4).keep == kept.keep == {"a1", "e1"}


def test_a_whole_read_after_a_write_and_edits_supersedes_them_but_a_partial_read_does_not():
    view = [person("write c.py")]
    view += call("w1", "write_file", path="c.py", content="def f():\n    return 1\n" * 30)
    view += call("e1", "edit_file", path="c.py", old_string="return 1", new_string="return 2" * 20)
    view += call("p1", "read_file", path="c.py", offset=5, limit=10)  # a part: the edit may lie elsewhere
    ws = working_set(view, Counter(), 100_000, recent_calls=10)
    assert {"w1", "e1", "p1"} <= ws.keep and not ({"w1", "e1"} & ws.stale)
    view += call("r1", "read_file", path="c.py")  # the whole file as it is now
    ws = working_set(view, Counter(), 100_000, recent_calls=10)
    assert "r1" in ws.keep and {"w1", "e1", "p1"} <= ws.stale and not ({"w1", "e1", "p1"} & ws.keep)
    view += call("e2", "edit_file", path="c.py", old_string="def f", new_string="def g" * 30)
    ws = working_set(view, Counter(), 100_000, recent_calls=10)
    assert {"r1", "e2"} <= ws.keep  # an edit after the read patches it: both stay
