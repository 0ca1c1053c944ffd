"""Files' pictures and the predictor that values them: what the model is still working with stays,
stale and finished work goes first (context/working_set.py, context/reuse.py, tiers/pricing.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_cli.context.model import ContextConfig, apply_compaction
from agent_cli.context.reuse import HAZARD, predict
from agent_cli.context.tiers import Digest, MicroCompact
from agent_cli.context.tiers.pricing import valued
from agent_cli.context.tiers.region import find_runs
from agent_cli.context.working_set import (
    UNCHANGED_PREFIX,
    file_key,
    glimpsed,
    named_files,
    pictures,
    todo_lists,
)
from agent_cli.replay.recoverable import RecoverableCheck
from tests.context.test_tiers import FakeSummarizer, asst, make_ctx, person, read_pair, results


def numbered(name: str, lines: int = 60) -> str:
    return "\n".join(f"{n:>6}\t{name} line {n}: value = {n}" for n in range(1, lines + 1))


def call(tid: str, name: str, error: bool = False, **inp) -> list:
    output = (
        numbered(inp.get("path", tid)) if name == "read_file" else f"{name} done on {inp.get('path', '')}"
    )
    return [asst("", (tid, name, inp)), results((tid, name, output), error=error)]


def session() -> list:
    """Reads of a.py (twice: the first is superseded), b.py and 4 old files, edits of a.py."""
    view = [person("refactor it")]
    for n in range(4):
        view += call(f"old{n}", "read_file", path=f"old{n}.py")
    view += call("a1", "read_file", path="a.py")
    view += call("b1", "read_file", path="b.py")
    view += call("a2", "read_file", path="a.py")  # covers the first read: that one is stale
    view += call(
        "e1", "edit_file", path="a.py", old_string="a.py line 3: value = 3" * 8, new_string="x = 3" * 40
    )
    return view


# -- pictures: what of each file the view still shows ------------------------------------------------


def test_a_whole_re_read_supersedes_the_earlier_read_and_an_edit_patches_the_picture():
    files = pictures(session())
    assert files["a.py"].picture == ["a2", "e1"] and files["a.py"].stale == ["a1"]
    assert files["a.py"].edited and files["a.py"].whole
    assert files["b.py"].picture == ["b1"] and not files["b.py"].edited


def test_a_same_range_re_read_supersedes_a_partial_one_and_a_narrower_one_does_not():
    view = [person("look")]
    view += call("p1", "read_file", path="c.py", offset=10, limit=20)
    view += call("p2", "read_file", path="c.py", offset=10, limit=20)  # the same lines again
    view += call("p3", "read_file", path="c.py", offset=12, limit=5)  # inside them: does not cover
    picture = pictures(view)["c.py"]
    assert picture.stale == ["p1"] and picture.picture == ["p2", "p3"]


def test_ten_lines_from_line_one_are_not_the_whole_file():
    view = [person("look")] + call("h", "read_file", path="c.py", offset=1, limit=10)
    view += call("p", "read_file", path="c.py", offset=40, limit=10)
    picture = pictures(view)["c.py"]
    assert not picture.whole and picture.picture == ["h", "p"] and not picture.stale


def test_a_failed_call_touches_nothing():
    view = [person("look")] + call("r1", "read_file", path="c.py")
    view += call("bad", "read_file", error=True, path="c.py")  # e.g. a wrong offset
    view += call("bade", "edit_file", error=True, path="c.py", old_string="nope", new_string="x")
    picture = pictures(view)["c.py"]
    assert picture.picture == ["r1"] and not picture.edited and picture.last == 1


def test_a_file_named_x_py_is_not_ax_py():
    view = [person("fix x.py please")] + call("r1", "read_file", path="src/ax.py")
    view += call("r2", "read_file", path="src/x.py")
    assert named_files(view, ["src/ax.py", "src/x.py"], ["fix x.py please"]) == ["src/x.py"]


def test_a_windows_path_is_named_with_either_separator():
    path = "C:\\repo\\src\\x.go"
    view = [person("look")] + call("r1", "read_file", path=path)
    view += call("r2", "read_file", path="C:\\repo\\src\\ax.go")
    for words in ("fix src\\x.go please", "fix src/x.go please", "fix x.go please"):
        assert named_files(view, [path, "C:\\repo\\src\\ax.go"], [words]) == [path], words


def test_claude_codes_open_tasks_name_files_and_a_completed_task_no_longer_does():
    def task(tid: str, name: str, answer: str, **inp) -> list:
        return [asst("", (tid, name, inp)), results((tid, name, answer))]

    view = [person("build it")] + call("r1", "read_file", path="/w/src/tree.ts")
    view += call("r2", "read_file", path="/w/src/view.tsx")
    view += task("c1", "TaskCreate", "Task #1 created successfully: deps", subject="Install deps")
    view += task(
        "c2",
        "TaskCreate",
        "Task #2 created successfully: tree",
        subject="Tree",
        description="Create src/tree.ts",
    )
    view += task("c3", "TaskCreate", "Task #3 created successfully: view", subject="Update view.tsx")
    paths = ["/w/src/tree.ts", "/w/src/view.tsx"]
    assert named_files(view, paths) == paths
    view += task("u1", "TaskUpdate", "Updated task #2 status", taskId="2", status="completed")
    assert named_files(view, paths) == ["/w/src/view.tsx"]
    view += task("u2", "TaskUpdate", "Updated task #3", taskId="3", subject="Polish the header")
    assert named_files(view, paths) == []  # the task no longer names the file


def test_an_unchanged_since_answer_does_not_make_the_read_it_points_to_stale():
    view = session()
    view += [
        asst("", ("a3", "read_file", {"path": "a.py"})),
        results(("a3", "read_file", UNCHANGED_PREFIX + "a2: a.py lines 1-60 are exactly as that read shows")),
    ]
    picture = pictures(view)["a.py"]
    assert picture.picture == ["a2", "e1", "a3"] and "a2" not in picture.stale


def test_a_whole_read_after_a_write_and_edits_supersedes_them_but_a_partial_read_does_not():
    view = [person("write c.py")]
    view += call("w1", "write_file", path="c.py", content="def f():\n    return 1\n" * 30)
    view += call("e1", "edit_file", path="c.py", old_string="return 1", new_string="return 2" * 20)
    view += call("p1", "read_file", path="c.py", offset=5, limit=10)  # a part: the edit may lie elsewhere
    assert pictures(view)["c.py"].picture == ["w1", "e1", "p1"]
    view += call("r1", "read_file", path="c.py")  # the whole file as it is now
    picture = pictures(view)["c.py"]
    assert picture.picture == ["r1"] and picture.stale == ["w1", "e1", "p1"] and not picture.edited
    view += call("e2", "edit_file", path="c.py", old_string="def f", new_string="def g" * 30)
    assert pictures(view)["c.py"].picture == ["r1", "e2"]  # an edit after the read patches it


# -- the predictor ------------------------------------------------------------------------------------


def test_the_predictor_values_a_file_being_edited_above_finished_work_and_stale_at_nothing():
    guess = predict(session())
    assert guess["a1"].p == 0 and guess["a1"].cls == "stale"
    assert (
        guess["a2"].cls == "editing" and guess["a2"].p == HAZARD["editing"].prior
    )  # the last call edited it
    assert guess["b1"].cls == "queued"  # read after a.py in the same run of reads: its turn comes next
    assert guess["old0"].cls == "whole" and guess["b1"].p > guess["old0"].p
    assert guess["old0"].age > guess["b1"].age
    assert guess["e1"].cls == "patch"


def test_files_the_person_the_todo_list_or_a_failing_test_name_do_not_decay():
    view = session()
    view += call("todo", "todo_write", todos=[{"content": "finish old1.py", "status": "pending"}])
    for n in range(30):  # thirty calls later
        view += call(f"x{n}", "bash", command=f"echo {n}")
    view += [
        asst("", ("t", "bash", {"command": "pytest"})),
        results(("t", "bash", "FAILED tests/old2.py::test_x\n[exit 1]"), error=True),
    ]
    guess = predict(view)
    assert guess["old1"].cls == guess["old2"].cls == "named" and guess["old1"].p == HAZARD["named"].prior
    assert guess["old0"].cls == "whole" and guess["old0"].p < 0.01


def test_the_files_read_with_a_file_just_edited_count_as_touched_with_it():
    view = [person("go")]
    view += [
        asst("", ("r1", "read_file", {"path": "p.py"}), ("r2", "read_file", {"path": "q.py"})),
        results(("r1", "read_file", numbered("p.py")), ("r2", "read_file", numbered("q.py"))),
    ]
    for n in range(10):
        view += call(f"x{n}", "bash", command="ls")
    before = predict(view)["r2"]
    view += call("e", "edit_file", path="p.py", old_string="p.py line 3", new_string="y")
    after = predict(view)["r2"]
    assert after.age < before.age and after.p > before.p


def test_reads_waiting_their_turn_in_a_run_edited_in_read_order_are_queued():
    """Five reads one after another, then edits in the order they were read: the reads after the
    last one edited wait their turn (`queued`, aged from that edit, not from their read); an edit out
    of order says the run was not a queue."""
    view = [person("fix the modules")]
    for n in range(5):
        view += call(f"r{n}", "read_file", path=f"m{n}.py")
    for n in range(8):
        view += call(f"x{n}", "bash", command="ls")
    view += call("e0", "edit_file", path="m0.py", old_string="m0.py line 3", new_string="y")
    view += call("e1", "edit_file", path="m1.py", old_string="m1.py line 3", new_string="y")
    guess = predict(view)
    assert {guess[f"r{n}"].cls for n in (2, 3, 4)} == {"queued"}
    assert guess["r4"].age == 0 and guess["r4"].p == HAZARD["queued"].prior  # its turn is still to come
    skipped = [*view, *call("e3", "edit_file", path="m3.py", old_string="m3.py line 3", new_string="y")]
    after_skip = predict(skipped)
    assert after_skip["r2"].cls == "whole" and after_skip["r4"].cls == "queued"  # m2 was passed over
    out_of_order = [
        *skipped,
        *call("e2", "edit_file", path="m2.py", old_string="m2.py line 3", new_string="y"),
    ]
    later = predict(out_of_order)
    assert later["r4"].cls == "whole"  # the run was not a queue after all
    assert later["r4"].p < guess["r4"].p


def test_a_file_of_the_queue_edited_and_then_moved_past_is_passed_until_it_is_touched_again():
    """Reads edited in the order they were read: once the model edits the next file of the run, the
    one before is done with (`passed`, near nothing: in the shared sessions no such file was needed
    again); the file being edited is not, and editing a passed file again brings it back."""
    view = [person("fix the modules")]
    for n in range(4):
        view += call(f"r{n}", "read_file", path=f"m{n}.py")
    view += call("e0", "edit_file", path="m0.py", old_string="m0.py line 3", new_string="y")
    view += call("e1", "edit_file", path="m1.py", old_string="m1.py line 3", new_string="y")
    guess = predict(view)
    assert guess["r0"].cls == "passed" and guess["r0"].p == HAZARD["passed"].prior
    assert guess["r1"].cls == "editing" and guess["r2"].cls == "queued"
    assert guess["r0"].p < guess["r1"].p < guess["r2"].p
    back = predict([*view, *call("e2", "edit_file", path="m0.py", old_string="m0.py line 4", new_string="z")])
    assert back["r0"].cls == "editing"  # the model came back to it
    on = predict([*view, *call("e3", "edit_file", path="m2.py", old_string="m2.py line 3", new_string="z")])
    assert on["r0"].cls == "passed" and on["r1"].cls == "passed" and on["r3"].cls == "queued"


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ('grep -n "nil," /repo/session_test.go | head -10', "/repo/session_test.go"),
        ("sed -n '120,160p' src/state.go", "src/state.go"),
        ("cd cli && head -n 40 ./cmd/main.go", "cmd/main.go"),
        ("grep -A 3 Save store.go", "store.go"),
        ("cat notes.md", "notes.md"),
        ("grep -rn Save src/", ""),  # a directory: no one file
        ("grep Save a.go b.go", ""),  # two files
        ("cat *.go", ""),  # a glob
        ("go test ./...", ""),
        ("ls -la main.go", ""),  # names the file, shows none of its lines
        ("sed -i 's/nil/ctx/' store.go", ""),  # changes it, prints nothing
        ("sed -n 'unterminated", ""),
    ],
)
def test_a_search_or_a_shell_command_that_prints_lines_of_one_file_is_a_glimpse_of_it(command, shown):
    assert glimpsed(asst("", ("b", "bash", {"command": command})).blocks[0]) == shown


def test_a_live_sessions_grep_is_a_glimpse_of_the_file_as_the_workspace_names_it():
    """A live session stamps each call with its file relative to the workspace (`BlockMeta.file`),
    and its reads are keyed by that name: a content grep given the absolute path is the same file."""
    block = asst(
        "", ("g", "grep", {"pattern": "x", "path": "/ws/src/a.py", "output_mode": "content"})
    ).blocks[0]
    assert glimpsed(block.with_meta(file="src/a.py")) == "src/a.py"
    assert glimpsed(block) == "/ws/src/a.py"


def test_a_glimpse_stays_young_while_its_file_is_edited_and_a_whole_read_makes_it_stale():
    """A content grep of one file, then edits of the lines it showed: the edits start from the grep's
    output, so it ages from the file's last edit (like a read), not from the grep; plain output and
    a search over a directory age from their own call. A whole read of the file afterwards shows
    those lines as they are now: the glimpse is stale."""
    view = [person("check the nil contexts"), *call("r", "read_file", path="s.go", limit=20)]
    view += call("g", "grep", pattern="nil,", path="s.go", output_mode="content")
    view += call("d", "grep", pattern="nil,", path="src", output_mode="content")
    view += call("o", "bash", command="go vet ./...")
    for n in range(6):
        view += call(f"e{n}", "edit_file", path="s.go", old_string=f"s.go line {n}", new_string="x")
    guess = predict(view)
    assert guess["g"].cls == "glimpse" and guess["g"].age == 0
    assert guess["d"].cls == "listing" and guess["o"].cls == "output" and guess["o"].age == 6
    assert guess["g"].p == HAZARD["glimpse"].prior > guess["o"].p
    view += call("w", "read_file", path="s.go")
    assert predict(view)["g"].cls == "stale" and predict(view)["g"].p == 0


def plan(tid: str, done: int, error: bool = False) -> list:
    """A todo_write of eight steps, the first `done` completed; its result shows the list (ours does)."""
    todos = [
        {"content": f"step {n}: update the parser's caller in module_{n}.py", "status": "completed"}
        if n < done
        else {"content": f"step {n}: update the parser's caller in module_{n}.py", "status": "pending"}
        for n in range(8)
    ]
    return [
        asst("", (tid, "todo_write", {"todos": todos})),
        results((tid, "todo_write", "Todo list:\n" + json.dumps(todos, indent=1)), error=error),
    ]


def test_a_todo_list_a_later_one_replaced_is_stale_and_a_failed_one_replaces_nothing():
    view = [person("update the callers"), *plan("t0", 0), *plan("t1", 2), *plan("t2", 3, error=True)]
    guess = predict(view)
    assert guess["t0"].cls == "stale" and guess["t0"].p == 0
    assert guess["t1"].cls != "stale"  # the plan: t2 failed and set nothing
    assert todo_lists(view) == ["t0", "t1"]


async def test_t1_clears_replaced_todo_lists_though_the_tool_is_kept_and_the_plan_stays_whole():
    """A todo tool's calls are never compacted while they are the plan; one a later list replaced
    is worth nothing: its input (a list, not a string) and its result go, and come back equal."""
    view = [person("update the callers")]
    for n in range(4):
        view += plan(f"t{n}", n)
        view += call(f"x{n}", "bash", command=f"go test ./module_{n}")
    view += [asst("Three done."), person("go on")]
    ctx = replace(
        make_ctx(view, budget=100_000, last_request_at=0.0),  # cold: no rewrite to pay
        tool_compactable=lambda name: name != "todo_write",
    )
    compaction = await MicroCompact().propose(view, ctx, "cache_cold")
    assert compaction is not None
    after = apply_compaction(view, compaction)
    uses = {b.id: b for m in after for b in m.tool_uses()}
    outputs = {b.tool_use_id: b.text for m in after for b in m.tool_results()}
    for old in ("t0", "t1", "t2"):
        assert str(uses[old].input["todos"]).startswith("[cleared: "), old
        assert outputs[old].startswith("[cleared: todo_write output"), old
        stored = json.loads(compaction.originals[uses[old].meta.ref])
        assert stored["todos"] == next(b for m in view for b in m.tool_uses() if b.id == old).input["todos"]
    assert isinstance(uses["t3"].input["todos"], list) and outputs["t3"].startswith("Todo list:")
    check = RecoverableCheck()
    check.observe(view, compaction)
    assert check.count(compaction.originals) == (6, 6)  # three lists and three results, all equal
    assert check.count({})[1] == 0  # an empty store gives nothing back: the check can fail


# -- T1 with the predictor ----------------------------------------------------------------------------


async def test_t1_clears_stale_and_finished_reads_and_keeps_the_file_being_worked_on():
    view = session() + [asst("Refactored a.py."), person("go on")]
    ctx = make_ctx(view, budget=100_000, last_request_at=0.0)  # cold: no rewrite to pay
    compaction = await MicroCompact().propose(view, ctx, "cache_cold")
    assert compaction is not None and compaction.bet is not None
    after = apply_compaction(view, compaction)
    text = {b.tool_use_id: b.text for m in after if m.role == "user" for b in m.tool_results()}
    assert text["a2"].startswith("     1\ta.py line 1") and "value = 60" in text["a2"]
    assert text["b1"].startswith("     1\tb.py line 1")  # read whole, not yet edited
    assert text["a1"].startswith("[cleared: read_file a.py lines 1-60,")  # stale, though recent
    edit = next(b for m in after for b in m.blocks if b.type == "tool_use" and b.id == "e1")
    assert edit.input["new_string"] == "x = 3" * 40  # the file's own changes stay too
    assert edit.input["old_string"].startswith("[cleared: ")  # an applied edit's old text is stale
    # the same T1 under a predictor that sees no future clears the file being worked on too
    blind = replace(ctx, predictor=lambda v, stats: {k: replace(g, p=0.0) for k, g in predict(v).items()})
    cleared = apply_compaction(view, await MicroCompact().propose(view, blind, "cache_cold"))
    text = {b.tool_use_id: b.text for m in cleared if m.role == "user" for b in m.tool_results()}
    assert text["a2"].startswith("[cleared: read_file a.py lines 1-60,")


async def test_t3_and_digest_leave_what_is_worth_keeping_alone():
    view = session() + [asst("a.py is refactored."), person("thanks, now b.py")]
    config = ContextConfig(tail_fraction=0.01)  # a short tail: the runs before it are candidates
    ctx = make_ctx(view, budget=20_000, used=30_000, summarizer=FakeSummarizer(), config=config)
    kept = valued(view, ctx).keep
    assert {"a2", "b1"} <= kept and "a1" not in kept
    for run in find_runs(view, ctx, {}):
        ids = {b.tool_use_id for m in view[run.start : run.end] for b in m.tool_results()}
        assert not ids & kept
    assert await Digest().propose(view, ctx, "digest") is None  # a.py's run stays whole for now
    later = [person("look at file7")] + read_pair(7) + [asst("ok"), person("next")]
    blind = replace(
        make_ctx(later), predictor=lambda v, s: {k: replace(g, p=0.0) for k, g in predict(v).items()}
    )
    assert await Digest().propose(later, blind, "digest")


async def test_a_folded_cleared_read_still_names_its_path_lines_and_ref():
    view = [person("survey")]
    for n in range(16):
        view += call(f"r{n}", "bash", command=f"cat mod{n}.py | head -60")
        view += call(f"m{n}", "read_file", path=f"mod{n}.py")
    for n in range(30):
        view += call(f"x{n}", "bash", command=f"echo {n}")
    view += [asst("Surveyed."), person("next")]
    ctx = make_ctx(view, budget=100_000, last_request_at=0.0, config=ContextConfig(micro_coarse_calls=0))
    after = apply_compaction(view, await MicroCompact().propose(view, ctx, "cache_cold"))
    digests = "\n".join(b.text for m in after for b in m.blocks if b.meta.tag == "tool-digest")
    assert "- read_file mod0.py lines 1-60 → ok (output cleared, ref r" in digests


def test_a_file_is_one_file_however_a_call_spells_its_path():
    """A model on Windows writes `C:\\repo\\a.py` in one call and `c:/repo/a.py` in the next, and
    anyone may write `./a.py`: the predictor sees one file either way, so the read of a file being
    edited is priced as that (`editing`), not as an unedited read (working_set.file_key)."""

    def spelled(read: str, reread: str, edited: str) -> list:
        view = [person("refactor it")]
        view += call("a1", "read_file", path=read)
        view += call("b1", "read_file", path="C:\\repo\\b.py")
        view += call("a2", "read_file", path=reread)
        view += call("e1", "edit_file", path=edited, old_string="line 3: value = 3", new_string="x")
        return view

    one = predict(spelled("C:\\repo\\a.py", "C:\\repo\\a.py", "C:\\repo\\a.py"))
    mixed = predict(spelled("C:\\repo\\a.py", "c:/repo/./a.py", "C:/repo//a.py"))
    assert mixed["a1"].cls == "stale" and mixed["a2"].cls == "editing" and mixed["e1"].cls == "patch"
    assert {k: (g.cls, g.p, g.path) for k, g in mixed.items()} == {
        k: (g.cls, g.p, g.path) for k, g in one.items()
    }
    assert mixed["a2"].path == "C:/repo/a.py"


_PART = st.text(alphabet="abcXYZ_-09.", min_size=1, max_size=6).filter(lambda part: part not in (".", ".."))


@given(
    drive=st.sampled_from(["", "C:", "c:"]),
    parts=st.lists(_PART, min_size=1, max_size=5),
    seps=st.lists(st.sampled_from(["/", "\\", "//", "/./", "\\.\\"]), min_size=5, max_size=5),
)
def test_every_spelling_of_a_path_has_one_key_and_the_key_is_its_own(drive, parts, seps):
    """However the separators are written (doubled, `.` between), a path has one key; the key of a
    key is itself; the case of the names is kept."""
    plain = (drive.upper() + "/" if drive else "") + "/".join(parts)
    spelled = (
        drive
        + (seps[0] if drive else "")
        + "".join(part + (seps[n + 1] if n + 1 < len(parts) else "") for n, part in enumerate(parts))
    )
    assert file_key(spelled) == file_key(plain) == file_key(file_key(plain))
    assert file_key(plain).endswith("/".join(parts))  # the names as written
