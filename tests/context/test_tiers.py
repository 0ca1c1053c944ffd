"""The compaction tiers on hand-made views: each tier's trigger and its effect."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from agent_cli.context.eviction import forecast
from agent_cli.context.invariants import check
from agent_cli.context.model import ContextConfig, TierContext, apply_compaction
from agent_cli.context.prompts import load_prompt
from agent_cli.context.tiers import Digest, Emergency, FullCompact, MemoryCompact, MicroCompact, RegionCompact
from agent_cli.context.tiers.emergency import static_summary
from agent_cli.context.tiers.markers import make_ref, short_ref
from agent_cli.context.tiers.pricing import market_for, requests_made
from agent_cli.context.tiers.rendering import redact, render_for_summary
from agent_cli.context.tiers.selection import find_tail_start, group_view, is_person_message
from agent_cli.core.types import Block, BlockMeta, Message, Trust

# -- builders ------------------------------------------------------------------------------------


class Counter:
    """A tiny deterministic counter: about 4 chars a token, a few tokens per message."""

    def text(self, text: str) -> int:
        return len(text) // 4 + 1

    def block(self, block: Block) -> int:
        if block.type == "tool_use":
            return self.text(block.name + json.dumps(block.input))
        return self.text(block.text)

    def message(self, message: Message) -> int:
        return 4 + sum(self.block(b) for b in message.blocks)

    def total(self, view: Sequence[Message]) -> int:
        return sum(self.message(m) for m in view)


def person(text: str, turn: int = 1, *injections: str) -> Message:
    blocks = [
        Block.text_block(
            f"<system-reminder>{t}</system-reminder>",
            BlockMeta(Trust.SYSTEM, "reminder", tag="system-reminder"),
        )
        for t in injections
    ]
    blocks.append(Block.text_block(text, BlockMeta(Trust.USER, "user")))
    return Message("user", tuple(blocks), turn)


def asst(text: str = "", *calls: tuple[str, str, dict], turn: int = 1) -> Message:
    blocks = [Block.text_block(text, BlockMeta(Trust.ASSISTANT, "assistant"))] if text else []
    blocks += [Block.tool_use(i, name, inp) for i, name, inp in calls]
    return Message("assistant", tuple(blocks), turn)


def results(*items: tuple[str, str, str], turn: int = 1, error: bool = False) -> Message:
    blocks = [
        Block.tool_result(i, text, error, BlockMeta(Trust.TOOL, "tool", tool_name=name))
        for i, name, text in items
    ]
    return Message("user", tuple(blocks), turn)


def read_pair(n: int, size: int = 2_000, turn: int = 1) -> list[Message]:
    """One read_file call of file n and its (large) result."""
    tid = f"t{n}"
    body = "\n".join(f"line {k} of file{n}.py: x = {k}" for k in range(size // 20 + 1))[:size]
    return [
        asst(f"Reading file{n}.py.", (tid, "read_file", {"path": f"src/file{n}.py"}), turn=turn),
        results((tid, "read_file", body), turn=turn),
    ]


def work_session(
    pairs: int = 8, size: int = 2_000, *, final: bool = True, new_person: bool = True
) -> list[Message]:
    """person -> `pairs` read calls -> final answer -> (a new person's message)."""
    view = [person("Please fix the bug in the parser; keep the public API unchanged.", 1)]
    for n in range(pairs):
        view += read_pair(n, size)
    if final:
        view.append(asst("The bug is in file3.py: an off-by-one in the tokenizer loop."))
        if new_person:
            view.append(person("Good. Now add a regression test.", 2))
    return view


@dataclass
class FakeSummarizer:
    replies: list[str] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    fail: bool = False

    async def __call__(self, system: str, content: str) -> str:
        self.calls.append((system, content))
        if self.fail:
            raise RuntimeError("model unavailable")
        if self.replies:
            return self.replies.pop(0)
        return f"## Goal\nsummary number {len(self.calls)}"


def make_ctx(
    view: Sequence[Message], *, budget: int = 10_000, used: int | None = None, **changes
) -> TierContext:
    counter = Counter()
    config = changes.pop("config", ContextConfig())
    ctx = TierContext(
        config=config,
        counter=counter,
        used=counter.total(view) if used is None else used,
        budget=budget,
        now=1_000.0,
        last_request_at=990.0,
        prompts=load_prompt,
        ledger_text="## Ledger\n- person: Please fix the bug in the parser\n- read src/file3.py",
    )
    return replace(ctx, **changes)


def forgetful(ctx: TierContext) -> TierContext:
    """`ctx` with a predictor that expects nothing to be needed again (every clear pays on its own)."""
    from agent_cli.context.reuse import predict

    return replace(
        ctx, predictor=lambda view, stats: {k: replace(g, p=0.0) for k, g in predict(view).items()}
    )


def attached(ctx: TierContext) -> TierContext:
    """`ctx` with a predictor that expects everything to be needed soon (T1 clears only what space
    forces out)."""
    from agent_cli.context.reuse import predict

    return replace(
        ctx, predictor=lambda view, stats: {k: replace(g, p=1.0, decay=0.5) for k, g in predict(view).items()}
    )


def valid(view: Sequence[Message]) -> None:
    assert check(view) == [], check(view)


async def applied(tier, view, ctx, trigger="auto"):
    compaction = await tier.propose(view, ctx, trigger)
    assert compaction is not None
    new = apply_compaction(view, compaction)
    valid(new)
    assert compaction.after == compaction.before - (Counter().total(view) - Counter().total(new))
    return compaction, new


def all_text(view: Sequence[Message]) -> str:
    return "\n".join(b.text for m in view for b in m.blocks)


# -- common ----------------------------------------------------------------------------------------


def test_redact_hides_keys_tokens_and_env_secrets_but_not_prose():
    text = (
        "key sk-ant-api03-abcdefghijklmnopqrstuvwx and ghp_abcdefghijklmnopqrstuvwxyz0123 "
        "aws AKIAABCDEFGHIJKLMNOP\nAuthorization: Bearer abc.def-ghi_jkl123456\n"
        "export DB_PASSWORD=hunter2\nGITHUB_TOKEN: 'tok en'\nThe password policy is strict.\n"
        "MAX_TOKENS=8000 max_tokens: 8000"
    )
    out = redact(text)
    for secret in ("sk-ant-api03", "ghp_abcdef", "AKIAABCDEF", "abc.def-ghi", "hunter2", "tok en"):
        assert secret not in out
    assert "The password policy is strict." in out and "MAX_TOKENS=8000 max_tokens: 8000" in out
    assert out.count("[REDACTED") == 6


def test_make_ref_is_stable_and_content_addressed():
    assert make_ref("span", "abc") == make_ref("span", "abc")
    assert make_ref("span", "abc") != make_ref("span", "abd")
    assert make_ref("span", "abc").startswith("span-")


def test_groups_and_tail_keep_pairs_and_the_last_persons_message():
    view = work_session(6)
    groups = group_view(view)
    assert [(g.start, g.end) for g in groups][:3] == [(0, 1), (1, 3), (3, 5)]
    counter = Counter()
    start = find_tail_start(view, counter, 10)
    assert start == len(view) - 1 and is_person_message(view[start])  # the person's message alone
    start = find_tail_start(view, counter, 1_200)
    assert view[start].role == "assistant" or not view[start].tool_results()
    assert counter.total(view[start:]) >= 1_200
    # a long run after the person's message: the tail still reaches back to it
    run = [person("hi"), asst("hello"), person("fix it", 2)] + work_session(6, final=False)[1:]
    assert find_tail_start(run, counter, 10) == 2
    assert find_tail_start(run, counter, 10, keep_last_person=False) == len(run) - 2


def test_render_for_summary_prunes_skips_summaries_and_redacts():
    summary = Block.text_block("OLD SUMMARY TEXT", BlockMeta(Trust.ASSISTANT, "compactor", tag="summary"))
    view = [
        Message("user", (summary, Block.text_block("my key is sk-ant-1234567890abcdefghijkl", BlockMeta()))),
        asst("", ("t1", "bash", {"command": "pytest -q"})),
        results(("t1", "bash", "HEAD" + "x" * 10_000 + "TAIL")),
    ]
    text = render_for_summary(view, 1_000)
    assert "OLD SUMMARY TEXT" not in text
    assert "sk-ant-1234567890" not in text
    assert "HEAD" in text and "TAIL" in text and "chars omitted" in text
    assert len(text) < 2_000
    assert "bash pytest -q" in text


# -- T1 ---------------------------------------------------------------------------------------------


def command_session(commands: int = 6, size: int = 3_000, *, reads: int = 0) -> list[Message]:
    """person -> `commands` bash calls with large outputs -> `reads` whole-file reads -> an answer
    -> the person's next message (everything before it has been seen by the model)."""
    view = [person("Find out why the build is slow; do not change the CI config.", 1)]
    for n in range(commands):
        tid = f"c{n}"
        view += [
            asst(f"Running step {n}.", (tid, "bash", {"command": f"make step{n}"})),
            results((tid, "bash", f"step {n} log line\n" * (size // 16))),
        ]
    for n in range(reads):
        view += read_pair(100 + n, 2_000)
    return view + [asst("The slow part is step 3."), person("Go on.", 2)]


async def test_t1_cache_cold_clears_what_is_worth_nothing_and_keeps_a_file_just_read():
    view = command_session(6, size=8_000, reads=1)
    view[4] = results(("c1", "bash", "tiny"))  # small results are never worth a placeholder
    # idle far longer than the TTL, in a session expected to go on about as long again
    config = ContextConfig(forecast_ratio=1.0)
    ctx = make_ctx(view, budget=100_000, last_request_at=0.0, config=config)
    compaction, new = await applied(MicroCompact(), view, ctx, "cache_cold")
    cleared = [b.tool_use_id for m in new for b in m.tool_results() if b.text.startswith("[cleared:")]
    assert cleared == ["c0", "c2", "c3", "c4", "c5"]  # every seen command output but the tiny one
    assert new[-4].blocks[0].text == view[-4].blocks[0].text  # the whole read: the edit may come
    old = view[2].blocks[0].text
    assert new[2].blocks[0].text == f"[cleared: bash output, {len(old)} chars; recall ref {short_ref('c0')}]"
    assert compaction.originals[short_ref("c0")] == old
    assert len([b for m in new for b in m.tool_uses()]) == 7  # every tool_use stays, pairs intact
    assert compaction.bet is not None and compaction.bet.rewrite == 0  # the cache is gone anyway


async def test_t1_does_nothing_when_warm_and_nothing_is_worth_clearing():
    view = command_session(6, reads=3)
    assert await MicroCompact().propose(view, make_ctx(view), "cache_cold") is None  # idle 10 s
    keep_all = attached(make_ctx(view, budget=1_000_000))
    assert await MicroCompact().propose(view, keep_all, "pressure") is None  # everything is needed soon
    # and with nothing needed, the same view is cleared under pressure: the gate is the value, not luck
    assert await MicroCompact().propose(view, forgetful(make_ctx(view, budget=1_000_000)), "pressure")


async def test_t1_makes_no_clear_whose_saving_cannot_pay_its_cache_rewrite_within_the_forecast():
    # one old output, then a long history that would all have to be written to the cache again
    view = [person("go")]
    view += [asst("Looking.", ("c0", "bash", {"command": "make"})), results(("c0", "bash", "z" * 8_000))]
    view += [asst("x" * 80_000), person("go on", 2)]
    for n in range(3):
        view += read_pair(50 + n, 100, 2)
    ctx = forgetful(make_ctx(view, budget=400_000))
    requests = forecast(requests_made(view), ctx.config.forecast_ratio, ctx.config.forecast_cap)
    saving = 0.1 * Counter().text("z" * 8_000) * requests
    assert saving < 1.15 * 20_000  # a few requests cannot earn back rewriting 20k tokens ...
    assert await MicroCompact().propose(view, ctx, "pressure") is None
    # ... but the same clear on a cold cache costs no rewrite and is made
    cold = await MicroCompact().propose(view, replace(ctx, last_request_at=0.0), "cache_cold")
    assert cold is not None and cold.bet is not None and cold.bet.rewrite == 0
    # ... and a forecast long enough to earn it back makes it under pressure too
    long = replace(ctx, config=replace(ctx.config, forecast_ratio=40.0))
    made = await MicroCompact().propose(view, long, "pressure")
    assert made is not None and made.bet.saving > made.bet.rewrite and made.bet.forecast > requests


async def test_t1_clears_right_behind_the_cache_cheaply_and_logs_its_bet_with_the_forecast():
    """Whole reads worth keeping, then a command's large output the model has just seen: clearing it
    costs only rewriting what follows the last cached request end before it."""
    view = [person("go")]
    for n in range(10):
        view += read_pair(n, 2_000)
    view += [asst("Running.", ("c0", "bash", {"command": "make"})), results(("c0", "bash", "log\n" * 2_000))]
    view += [asst("Built."), person("next", 2)]
    ends = tuple(
        i for i in range(len(view) - 1) if view[i].role == "user" and view[i + 1].role == "assistant"
    )
    config = ContextConfig(forecast_ratio=1.0)  # a session that will go on about as long again
    warm = make_ctx(view, budget=100_000, cached=ends, config=config)  # every request's end is cached
    compaction = await MicroCompact().propose(view, warm, "pressure")
    assert compaction is not None and compaction.bet is not None
    new = apply_compaction(view, compaction)
    assert new[-3].blocks[0].text.startswith("[cleared: bash output")
    assert all(
        b.text == o.text
        for m, n in zip(view[:-3], new[:-3], strict=True)
        for b, o in zip(m.blocks, n.blocks, strict=True)
    )
    data = compaction.to_json()["bet"]
    requests = forecast(requests_made(view), warm.config.forecast_ratio, warm.config.forecast_cap)
    assert data["forecast"] == requests and data["saving"] > data["rewrite"] + data["risk"]
    assert data["rewrite"] < 0.1 * Counter().total(view)  # only the tail is written again
    # with nothing cached but the system prompt, the same clear would rewrite every message: not made
    far = make_ctx(view, budget=100_000, cached=(), config=config)
    assert await MicroCompact().propose(view, far, "pressure") is None


async def test_t1_clears_a_stale_read_even_among_the_most_recent_calls():
    text = "\n".join(f"{n:>6}\tline {n} of a.py: x = {n}" for n in range(1, 80))
    view = [person("check a.py")]
    for tid in ("t1", "t9"):  # the same file read whole twice: the second supersedes the first
        view += [
            asst("Reading.", (tid, "read_file", {"path": "src/file1.py"})),
            results((tid, "read_file", text)),
        ]
    view += [asst("Same."), person("ok", 2)]
    ctx = make_ctx(view, budget=100_000, last_request_at=0.0)
    compaction, new = await applied(MicroCompact(), view, ctx, "cache_cold")
    texts = {b.tool_use_id: b.text for m in new for b in m.tool_results()}
    assert texts["t1"].startswith("[cleared: read_file src/file1.py lines 1-")  # superseded
    assert not texts["t9"].startswith("[cleared")  # the read that shows the file now stays


async def test_t1_above_the_next_tier_s_threshold_clears_the_least_valuable_first():
    """Over the threshold space decides, not price: even what is worth keeping goes, in ascending
    value per token (command outputs first, the newest whole read last)."""
    view = command_session(3, size=2_000, reads=4)
    ctx = attached(make_ctx(view, budget=int(Counter().total(view) / 0.835 * 0.6)))  # all looks needed
    compaction = await MicroCompact().propose(view, ctx, "pressure")
    assert compaction is not None and compaction.bet is not None and compaction.bet.forced
    new = apply_compaction(view, compaction)
    assert Counter().total(new) <= ctx.budget
    # with the real predictor, and no cache to favour the tail (every clear rewrites it all), the
    # command outputs (worth nothing) go before any read (at a session's scale: a miss is priced as
    # a share of the budget, and at a 3k budget re-reading a file is cheap)
    view = command_session(3, size=20_000, reads=4)
    real = make_ctx(view, budget=int(Counter().total(view) * 0.9), cached=())
    compaction = await MicroCompact().propose(view, real, "pressure")
    texts = {b.tool_use_id: b.text for m in apply_compaction(view, compaction) for b in m.tool_results()}
    cleared = {k for k, t in texts.items() if t.startswith("[cleared")}
    assert cleared and cleared <= {"c0", "c1", "c2"}  # only what is worth nothing, oldest first
    assert compaction.after <= MicroCompact().capacity(view, real)  # (here it pays on its own too)


def test_a_miss_is_priced_as_a_share_of_the_budget():
    """What acting without a cleared text costs beyond re-reading it scales with the context a
    session works in: 1/3 of the usable budget (60k of the default 180k), or as configured."""
    view = command_session(3, size=2_000, reads=4)
    tokens = [Counter().message(m) for m in view]

    def penalty(ctx: TierContext) -> float:
        return market_for(view, ctx, tokens, cold=False).penalty

    assert penalty(make_ctx(view, budget=180_000)) == pytest.approx(60_000)
    assert penalty(make_ctx(view, budget=48_000)) == pytest.approx(16_000)
    configured = make_ctx(view, budget=48_000, config=ContextConfig(miss_penalty_fraction=1.0))
    assert penalty(configured) == pytest.approx(48_000)


async def test_t1_keeps_the_view_under_a_configured_cap_far_below_the_next_tier_s_threshold():
    """`micro_cap_tokens` (off by default): past it T1 makes room as it does past the auto-compaction
    threshold, least valuable first and down to the cap; below it, or with no cap, nothing is forced."""
    view = command_session(3, size=2_000, reads=4)
    total = Counter().total(view)
    budget = total * 4  # the auto threshold is far away
    plain = attached(make_ctx(view, budget=budget))  # everything looks needed: nothing pays on its own
    assert await MicroCompact().propose(view, plain, "pressure") is None
    cap = int(total * 0.8)
    capped = replace(plain, config=ContextConfig(micro_cap_tokens=cap))
    compaction, new = await applied(MicroCompact(), view, capped, "pressure")
    assert compaction.bet is not None and compaction.bet.forced
    assert Counter().total(new) <= cap
    # with the real predictor, and no cache to favour the tail, the command outputs go first
    real = make_ctx(view, budget=budget, cached=(), config=ContextConfig(micro_cap_tokens=cap))
    compaction, new = await applied(MicroCompact(), view, real, "pressure")
    cleared = {b.tool_use_id for m in new for b in m.tool_results() if b.text.startswith("[cleared")}
    assert cleared and cleared <= {"c0", "c1", "c2"} and Counter().total(new) <= cap
    loose = replace(plain, config=ContextConfig(micro_cap_tokens=total + 1))
    assert await MicroCompact().propose(view, loose, "pressure") is None


async def test_t1_clears_large_inputs_of_finished_calls_and_keeps_them_recallable():
    body = "def f():\n    return 1\n" * 40
    view = [person("rewrite it")]
    for n in range(5):
        view += [
            asst("", (f"w{n}", "write_file", {"path": f"f{n}.py", "content": body})),
            results((f"w{n}", "write_file", "ok")),
        ]
    view += [asst("done"), person("thanks", 2)]
    ctx = forgetful(make_ctx(view, last_request_at=0.0))
    compaction, new = await applied(MicroCompact(), view, ctx, "cache_cold")
    inputs = [b.input for m in new for b in m.tool_uses()]
    assert all(i["content"].startswith("[cleared: ") for i in inputs)
    assert inputs[0]["path"] == "f0.py"  # short values stay: the call still says what it did
    assert json.loads(compaction.originals[short_ref("w0") + "-in"])["content"] == body
    # what the model just wrote is its own picture of each file: the real predictor keeps it all
    assert await MicroCompact().propose(view, make_ctx(view, last_request_at=0.0), "cache_cold") is None


async def test_t1_folds_old_cleared_pairs_into_digest_lines_and_keeps_recent_calls_whole():
    view = command_session(16)
    no_coarse = ContextConfig(micro_coarse_calls=0)  # tiers/coarsen.py: own tests
    ctx = make_ctx(view, last_request_at=0.0, config=no_coarse)
    compaction, new = await applied(MicroCompact(), view, ctx, "cache_cold")
    digests = [b for m in new for b in m.blocks if b.meta.tag == "tool-digest"]
    assert digests and "- bash make step0 → ok (output cleared, ref " in digests[0].text
    kept_ids = [b.id for m in new for b in m.tool_uses()]
    assert kept_ids[-10:] == [f"c{n}" for n in range(6, 16)]  # the last 10 calls keep their structure
    assert len(kept_ids) <= 11  # (the run's last folded message keeps its own call)
    assert "Running step 0." in all_text(new)  # the assistant's words stay verbatim
    assert new[0] == view[0] and new[-1] == view[-1]  # the person's words are untouched
    assert (
        short_ref("c0") in compaction.refs and compaction.originals[short_ref("c0")] == view[2].blocks[0].text
    )
    off = make_ctx(view, last_request_at=0.0, config=ContextConfig(micro_collapse=False))
    _, kept = await applied(MicroCompact(), view, off, "cache_cold")
    assert len([b for m in kept for b in m.tool_uses()]) == 16


async def test_t1_leaves_pinned_non_compactable_and_offloaded_originals_alone():
    view = work_session(6)
    offloaded = view[2].blocks[0].with_meta(ref="t0-offloaded")
    view[2] = replace(view[2], blocks=(offloaded,))
    view[4] = replace(view[4], blocks=(view[4].blocks[0].with_meta(pinned=True),))
    ctx = make_ctx(view, tool_compactable=lambda name: name != "bash")
    view[6] = results(("t2", "bash", "z" * 3_000))
    view[5] = asst("run", ("t2", "bash", {"command": "make"}))
    compaction, new = await applied(MicroCompact(), view, ctx, "masking")
    assert "ref t0-offloaded" in new[2].blocks[0].text
    assert "t0-offloaded" not in compaction.originals  # the store already has the full output
    assert new[4] == view[4] and new[6] == view[6]
    assert compaction.refs == ("t0-offloaded",)


# -- T2 ---------------------------------------------------------------------------------------------


async def test_t2_replaces_the_middle_with_a_fresh_note():
    view = work_session(10)
    note = "# Session memory\n## Current Goal\n- fix the parser bug (token AKIAABCDEFGHIJKLMNOP)"
    ctx = make_ctx(view, budget=6_000, memory_note=note, memory_covers=len(view) - 1)
    compaction, new = await applied(MemoryCompact(), view, ctx)
    assert new[0] == view[0]
    assert new[-1] == view[-1]  # the person's latest message is in the tail
    memory = [b for m in new for b in m.blocks if b.meta.source == "memory"]
    assert len(memory) == 1 and memory[0].meta.pinned and memory[0].text.startswith("<session-memory")
    assert "fix the parser bug" in memory[0].text and "AKIAABCDEF" not in memory[0].text
    assert "## Ledger" in all_text(new)
    assert compaction.tier == "T2" and compaction.after < compaction.before
    assert (
        compaction.refs[0] in compaction.originals and "file0.py" in compaction.originals[compaction.refs[0]]
    )


async def test_t2_needs_a_note_that_reaches_the_tail():
    view = work_session(10)
    assert await MemoryCompact().propose(view, make_ctx(view, budget=6_000), "auto") is None
    stale = make_ctx(view, budget=6_000, memory_note="# note", memory_covers=4)
    assert await MemoryCompact().propose(view, stale, "auto") is None


# -- T3 ---------------------------------------------------------------------------------------------


async def test_t3_summarizes_runs_of_tool_traffic_and_keeps_words_and_pairs():
    view = work_session(8, size=3_000)
    summarizer = FakeSummarizer(replies=["file0..file7 read; off-by-one in file3.py loop"])
    ctx = forgetful(make_ctx(view, budget=8_000, summarizer=summarizer))  # no read is needed again
    ctx = replace(ctx, config=replace(ctx.config, forecast_ratio=20.0))  # a long session: it pays
    compaction, new = await applied(RegionCompact(), view, ctx)
    assert compaction.tier == "T3" and len(summarizer.calls) == 1
    system, content = summarizer.calls[0]
    assert "tool activity" in system.lower() and "src/file0.py" in content
    results_ = [b for m in new for b in m.tool_results()]
    assert results_[0].text.startswith("[region summary ref region-")
    assert "off-by-one in file3.py" in results_[0].text
    assert all(b.text.startswith("[summarized in the region summary") for b in results_[1:-2])
    assert [b.id for m in new for b in m.tool_uses()] == [b.id for m in view for b in m.tool_uses()]
    assert [m.text for m in new if m.role == "assistant"] == [m.text for m in view if m.role == "assistant"]
    assert [m.text for m in new if is_person_message(m)] == [m.text for m in view if is_person_message(m)]
    assert "line 5 of file0.py" in compaction.originals[compaction.refs[0]]


async def test_t3_largest_run_first_and_stops_at_target():
    view = [person("go", 1)] + read_pair(0, 800) + read_pair(1, 800) + read_pair(2, 800)
    view += [asst("small ones done"), person("now the big ones", 2)]
    view += read_pair(10, 6_000, 2) + read_pair(11, 6_000, 2) + [asst("done", turn=2), person("thanks", 3)]
    summarizer = FakeSummarizer()
    config = ContextConfig(tail_fraction=0.001, forecast_ratio=20.0)  # the last message verbatim; it pays
    total = Counter().total(view)
    target_ctx = forgetful(make_ctx(view, budget=int(total * 1.2), summarizer=summarizer, config=config))
    compaction, new = await applied(RegionCompact(), view, target_ctx)
    assert len(summarizer.calls) == 1  # the big run alone reached the target ...
    assert "src/file10.py" in summarizer.calls[0][1]
    assert new[2] == view[2]  # ... so the small run was left alone
    # a target the big run alone cannot reach: the small run is summarized too, after it
    more = FakeSummarizer()
    low = forgetful(make_ctx(view, budget=int(total * 0.3), summarizer=more, config=config))
    await applied(RegionCompact(), view, low)
    assert len(more.calls) == 2 and "src/file10.py" in more.calls[0][1] and "src/file0.py" in more.calls[1][1]


async def test_t3_below_the_auto_threshold_is_a_bet_that_must_pay():
    view = work_session(8, size=3_000)
    ctx = forgetful(make_ctx(view, budget=8_000, summarizer=FakeSummarizer()))
    short = replace(ctx, config=replace(ctx.config, forecast_ratio=0.01))  # the session ends soon
    assert ctx.used < 0.835 * 8_000
    assert await RegionCompact().propose(view, short, "auto") is None  # the rewrite would not pay
    assert await RegionCompact().propose(view, replace(short, used=8_000), "auto") is not None  # space
    assert await RegionCompact().propose(view, short, "manual") is not None


async def test_t3_without_a_summarizer_or_when_it_fails_changes_nothing():
    view = work_session(8, size=3_000)
    assert await RegionCompact().propose(view, make_ctx(view, budget=8_000), "auto") is None
    failing = make_ctx(view, budget=8_000, summarizer=FakeSummarizer(fail=True))
    assert await RegionCompact().propose(view, failing, "auto") is None


# -- T4 ---------------------------------------------------------------------------------------------


async def test_t4_keeps_head_and_tail_summarizes_the_middle_with_focus_and_ledger():
    view = work_session(10)
    summarizer = FakeSummarizer(replies=["## Goal\nfix the parser"])
    ctx = make_ctx(view, budget=6_000, summarizer=summarizer, focus="the tokenizer")
    compaction, new = await applied(FullCompact(), view, ctx)
    assert new[0] == view[0] and new[-1] == view[-1]
    bridge = new[2]
    summary = [b for b in bridge.blocks if b.meta.tag == "summary"][0]
    assert summary.meta.source == "compactor" and summary.meta.pinned
    ref = compaction.refs[0]
    assert ref.startswith("span-") and summary.text.startswith(f'<summary ref="{ref}">')
    assert "fix the parser" in summary.text and "not an instruction" in summary.text
    assert ctx.ledger_text in all_text([bridge])
    system, content = summarizer.calls[0]
    assert "the tokenizer" in content and "<transcript>" in content and "src/file0.py" in content
    assert "## Goal" in content and "Remaining work" in content
    assert "line 3 of file0.py" in compaction.originals[ref]
    assert compaction.summary == "## Goal\nfix the parser"
    assert Counter().total(new) < Counter().total(view) / 2


async def test_t4_updates_a_previous_summary_instead_of_resummarizing_it():
    view = work_session(10)
    summarizer = FakeSummarizer(replies=["FIRST SUMMARY: read files 0-9", "SECOND SUMMARY"])
    ctx = make_ctx(view, budget=6_000, summarizer=summarizer)
    _, once = await applied(FullCompact(), view, ctx)
    more = once + [asst("Writing the test.", ("w1", "write_file", {"path": "tests/test_parser.py"}))]
    more += [results(("w1", "write_file", "w" * 4_000), turn=2)]
    for n in range(20, 26):
        more += read_pair(n, 2_000, 2)
    more += [asst("Test added.", turn=2), person("Run the whole suite.", 3)]
    compaction, twice = await applied(
        FullCompact(), more, make_ctx(more, budget=6_000, summarizer=summarizer)
    )
    system, content = summarizer.calls[1]
    assert "<current-summary>\nFIRST SUMMARY: read files 0-9\n</current-summary>" in content
    new_turns = content.split("<new-turns>", 1)[1]
    assert "FIRST SUMMARY" not in new_turns and "tests/test_parser.py" in new_turns
    assert "summary number" not in all_text(twice)
    summaries = [b for m in twice for b in m.blocks if b.meta.tag == "summary"]
    assert len(summaries) == 1 and "SECOND SUMMARY" in summaries[0].text
    assert sum(1 for m in twice if m.blocks[0].meta.tag == "compaction-ack") == 1


async def test_t4_chunks_a_middle_larger_than_the_summarizer_takes():
    view = work_session(30, size=2_000)
    config = ContextConfig(summarizer_input_tokens=4_000, prune_output_chars=1_500)
    summarizer = FakeSummarizer()
    ctx = make_ctx(view, budget=8_000, summarizer=summarizer, config=config)
    compaction, new = await applied(FullCompact(), view, ctx)
    assert len(summarizer.calls) >= 3
    assert all(Counter().text(s + c) <= 4_500 for s, c in summarizer.calls)
    assert "<current-summary>\n## Goal\nsummary number 1\n</current-summary>" in summarizer.calls[1][1]
    assert compaction.summary == f"## Goal\nsummary number {len(summarizer.calls)}"
    transcript = "".join(c for _, c in summarizer.calls)
    summarized = {b.input["path"] for m in view for b in m.tool_uses()} - {
        b.input["path"] for m in new for b in m.tool_uses()
    }
    assert len(summarized) > 20 and all(path in transcript for path in summarized)


async def test_t4_falls_back_to_the_static_ledger_summary_when_the_summarizer_fails():
    view = work_session(10)
    ctx = make_ctx(view, budget=6_000, summarizer=FakeSummarizer(fail=True))
    compaction, new = await applied(FullCompact(), view, ctx)
    assert (compaction.tier, compaction.trigger) == ("T5", "summarizer_failed")
    assert ctx.ledger_text in compaction.summary and compaction.summary == static_summary(ctx)
    assert ctx.ledger_text in all_text(new)
    none = await FullCompact().propose(view, make_ctx(view, budget=6_000), "manual")
    assert none is not None and none.trigger == "no_summarizer"


async def test_t4_lifts_the_persons_words_out_of_a_long_autonomous_run():
    view = work_session(14, final=False)  # the person spoke once, then 14 tool calls
    ctx = make_ctx(view, budget=6_000, summarizer=FakeSummarizer())
    compaction, new = await applied(FullCompact(), view, ctx)
    assert not is_person_message(new[2])  # the head is the person's message: nothing to lift
    assert new[3].role == "assistant" and new[-1] == view[-1]
    assert Counter().total(new) < Counter().total(view) / 2

    second = [person("first", 1), asst("ok"), person("Please refactor utils; no new deps.", 2)]
    second += [m for n in range(14) for m in read_pair(n, 2_000, 2)]
    compaction, new = await applied(
        FullCompact(), second, make_ctx(second, budget=6_000, summarizer=FakeSummarizer())
    )
    bridge = new[2]
    assert bridge.blocks[-1].text == "Please refactor utils; no new deps."
    assert [b.meta.tag for b in bridge.blocks[:2]] == ["summary", "ledger"]


async def test_t4_merges_a_tail_that_starts_with_the_persons_message():
    view = work_session(10)
    config = ContextConfig(tail_fraction=0.001)
    ctx = make_ctx(view, budget=6_000, summarizer=FakeSummarizer(), config=config)  # tail: the last message
    compaction, new = await applied(FullCompact(), view, ctx)
    assert len(new) == 3
    assert [b.meta.tag for b in new[2].blocks] == ["summary", "ledger", ""]
    assert new[2].blocks[-1].text == "Good. Now add a regression test."


async def test_t4_has_nothing_to_do_on_a_short_view():
    view = [person("hi"), asst("hello"), person("bye", 2)]
    assert await FullCompact().propose(view, make_ctx(view, summarizer=FakeSummarizer()), "manual") is None


# -- T5 ---------------------------------------------------------------------------------------------


async def test_t5_drops_oldest_groups_down_to_the_target_in_one_step():
    view = work_session(10)
    ctx = make_ctx(view, budget=6_000)
    used = ctx.used
    maximum = used - 500
    compaction = Emergency().truncate(view, ctx, tokens=used, maximum=maximum)
    new = apply_compaction(view, compaction)
    valid(new)
    freed = Counter().total(view) - Counter().total(new)
    target = int(ctx.config.emergency_target_fraction * maximum)
    assert Counter().total(new) <= target  # not just the 500-token gap plus a margin
    assert freed < used - target + 1_200  # the oldest groups only
    assert compaction.before - compaction.after == freed
    assert new[0] == view[0] and new[-1] == view[-1] and new[-2] == view[-2]
    marker = [b for b in new[2].blocks if b.meta.tag == "truncated"][0]
    ref = compaction.refs[0]
    assert marker.text == f"[earlier turns truncated — ref {ref}; use recall to see them]"
    assert "src/file0.py" in compaction.originals[ref]


async def test_t5_keeps_summaries_and_cuts_a_huge_last_result():
    view = [
        person("go"),
        asst("", ("t1", "bash", {"command": "cat big.log"})),
        results(("t1", "bash", "L" * 80_000)),
    ]
    ctx = make_ctx(view, budget=6_000)
    compaction = Emergency().truncate(view, ctx, tokens=ctx.used, maximum=5_000)
    new = apply_compaction(view, compaction)
    valid(new)
    assert Counter().total(new) <= 5_000
    cut = new[-1].blocks[0]
    assert "chars omitted" in cut.text and cut.meta.ref in compaction.originals
    assert compaction.originals[cut.meta.ref] == "L" * 80_000

    summary = Block.text_block(
        "<summary>S</summary>", BlockMeta(Trust.ASSISTANT, "compactor", pinned=True, tag="summary")
    )
    view = work_session(10)
    view[0] = Message("user", (summary,) + view[0].blocks)
    ctx = make_ctx(view, budget=6_000)
    compaction = Emergency().truncate(view, ctx, tokens=ctx.used, maximum=ctx.used - 3_000)
    assert apply_compaction(view, compaction)[0].blocks[0] == summary


def test_static_summary_is_the_ledger():
    ctx = make_ctx([person("x")])
    assert ctx.ledger_text in static_summary(ctx)
    assert "ledger is empty" in static_summary(replace(ctx, ledger_text=""))


# -- digest -------------------------------------------------------------------------------------------


async def test_digest_turns_finished_runs_into_one_line_per_call():
    view = work_session(3)
    view[4] = results(("t1", "read_file", "no such file"), error=True)
    view += [asst("Writing it.", ("t9", "write_file", {"path": "tests/test_x.py"}), turn=2)]
    view += [results(("t9", "write_file", "ok"), turn=2)]  # a run still going: untouched
    ctx = forgetful(make_ctx(view))  # the finished run's reads are not needed again
    compaction, new = await applied(Digest(), view, ctx, "digest")
    assert len(new) == 5 and new[-2:] == view[-2:]
    digest = new[1]
    assert digest.role == "assistant" and not digest.tool_uses()
    assert "Reading file0.py." in digest.text and digest.text.endswith("off-by-one in the tokenizer loop.")
    lines = [b.text for b in digest.blocks if b.meta.tag == "tool-digest"]
    assert lines[0] == "- read_file src/file0.py → ok (2000 chars, ref t0)"
    assert lines[1] == "- read_file src/file1.py → error (12 chars, ref t1)"
    assert compaction.originals["t1"] == "no such file"
    assert await Digest().propose(new, forgetful(make_ctx(new)), "digest") is None


@pytest.mark.parametrize("tier", [MicroCompact(), MemoryCompact(), RegionCompact(), FullCompact(), Digest()])
async def test_tiers_never_mutate_their_input(tier):
    view = work_session(10) + [
        asst("Writing.", ("w", "write_file", {"path": "new.py", "content": "x = 1\n" * 200})),
        results(("w", "write_file", "ok")),
        asst("Done."),
        person("next", 3),
    ]
    snapshot = copy.deepcopy(view)  # blocks hold dicts: a tier must not change them in place either
    ctx = forgetful(
        make_ctx(
            view,
            budget=6_000,
            summarizer=FakeSummarizer(),
            memory_note="# n",
            memory_covers=len(view),
            last_request_at=0.0,
            config=ContextConfig(tool_trace="digest"),
        )
    )
    compaction = await tier.propose(view, ctx, "cache_cold")
    assert compaction is not None  # each tier did change something ...
    assert view == snapshot  # ... on copies


async def test_an_item_larger_than_the_whole_budget_goes_however_valuable():
    view = [person("read it")] + read_pair(1, 40_000) + [asst("Read."), person("now edit it", 2)]
    ctx = attached(make_ctx(view, budget=6_000))  # the read looks needed soon, and is 10k tokens
    compaction = await MicroCompact().propose(view, ctx, "pressure")
    assert compaction is not None and compaction.bet.forced
    new = apply_compaction(view, compaction)
    assert new[2].blocks[0].text.startswith("[cleared: read_file") and Counter().total(new) < 6_000
