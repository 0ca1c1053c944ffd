"""T1's third step: digest lines of old calls become one summary line per message (tiers/coarsen.py)."""

from __future__ import annotations

from agent_cli.context.model import ContextConfig
from agent_cli.context.tiers import MicroCompact
from agent_cli.context.tiers.coarsen import COARSE_TAG, coarsen
from agent_cli.context.tiers.markers import short_ref
from agent_cli.context.tiers.pricing import requests_made
from tests.context.test_tiers import all_text, applied, asst, make_ctx, person, read_pair


def turns(count: int, calls: int) -> list:
    """`count` turns of the person asking and the model reading `calls` files, then answering."""
    view = []
    for t in range(count):
        view.append(person(f"Task {t}: look at the next files.", t + 1))
        for n in range(calls):
            view += read_pair(t * calls + n, turn=t + 1)
        view.append(asst(f"Done with task {t}.", turn=t + 1))
    return view + [person("And now?", count + 1)]


def lines_of(view, tag):
    return [line for m in view for b in m.blocks if b.meta.tag == tag for line in b.text.split("\n")]


async def test_old_digest_lines_become_one_recallable_line_per_message_and_recent_ones_stay():
    view = turns(6, 10)
    config = ContextConfig(micro_coarse_calls=25)
    ctx = make_ctx(view, config=config)
    compaction, new = await applied(MicroCompact(), view, ctx, "masking")
    coarse = lines_of(new, COARSE_TAG)
    assert coarse[0].startswith(
        "- 10 earlier calls (read_file x10) on file0.py, file1.py, file2.py, file3.py +6 more"
    )
    ref = coarse[0].rsplit("recall ref ", 1)[1]
    # the summary's ref gives the replaced lines back, each naming its own output's ref
    assert "- read_file src/file0.py → ok (output cleared, ref " in compaction.originals[ref]
    assert short_ref("t0") in compaction.originals[ref]
    assert compaction.originals[short_ref("t0")] == view[2].blocks[0].text
    # the narration between those old calls goes with them, recallable under the same ref
    assert "Reading file0.py." not in all_text(new) and "Reading file0.py." in compaction.originals[ref]
    # the recent calls keep their own lines; a message's last words and the person's words stay
    # (calls are summarized at block level: file34 has 25 calls after it, file35 only 24)
    assert any("src/file35.py" in line for line in lines_of(new, "tool-digest"))
    assert "src/file34.py" not in all_text(new) and "src/file5.py" not in all_text(new)
    assert "Done with task 0." in all_text(new) and "Task 0: look at the next files." in all_text(new)
    # the session's pace still counts the calls the summary stands for
    assert requests_made(new) >= 60


async def test_coarsening_is_off_at_zero_and_leaves_a_working_file_s_lines_alone():
    view = turns(6, 10)
    off = make_ctx(view, last_request_at=0.0, config=ContextConfig(micro_coarse_calls=0))
    _, new = await applied(MicroCompact(), view, off, "cache_cold")
    assert not lines_of(new, COARSE_TAG) and "src/file5.py" in all_text(new)
    kept = coarsen(new, coarse_calls=25, working_files=("/repo/src/file5.py",))
    assert "src/file5.py" in all_text(kept.view)  # its message keeps its lines
    assert lines_of(kept.view, COARSE_TAG)  # the others are summarized


async def test_a_cold_cache_summarizes_everything_older_than_the_calls_collapse_keeps():
    view = turns(3, 10)  # 30 calls: none older than 40
    config = ContextConfig(micro_coarse_calls=40)
    warm = make_ctx(view, config=config)
    _, new = await applied(MicroCompact(), view, warm, "masking")
    assert not lines_of(new, COARSE_TAG)
    cold = make_ctx(view, last_request_at=0.0, config=config)
    _, new = await applied(MicroCompact(), view, cold, "cache_cold")
    assert lines_of(new, COARSE_TAG)[0].startswith("- 10 earlier calls (read_file x10)")


def test_a_long_path_keeps_its_file_name_in_labels_and_summaries():
    from agent_cli.context.tiers.coarsen import summary_line
    from agent_cli.context.tiers.selection import tool_target

    path = "/home/someone/projects/a-long-worktree-name/lib/app_web/controllers/hooks_controller.ex"
    assert tool_target({"file_path": path}).endswith("/controllers/hooks_controller.ex")
    assert tool_target({"command": "x" * 100}).startswith("xxx")  # a command keeps its head
    lines = [f"- Edit {tool_target({'file_path': path})} → ok (output cleared, ref r1)"] * 2
    assert "on hooks_controller.ex;" in summary_line(lines, "calls-1")


def test_a_windows_path_keeps_its_file_name_in_summaries():
    from agent_cli.context.tiers.coarsen import summary_line
    from agent_cli.context.tiers.selection import tool_target

    path = "C:\\Users\\someone\\src\\handlers\\session_state.go"
    lines = [f"- Read {tool_target({'file_path': path})} → ok (output cleared, ref r1)"] * 2
    assert "on session_state.go;" in summary_line(lines, "calls-1")
