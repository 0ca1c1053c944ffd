"""The policy: which tier runs when, named policies, anti-thrash, manual and emergency compaction."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_cli.context.invariants import check
from agent_cli.context.model import Compaction, ContextConfig, SpanReplacement, apply_compaction
from agent_cli.context.policy import POLICIES, Policy, default_policy, make_policy, shift_index
from agent_cli.context.tiers.micro import clear
from agent_cli.context.tiers.pricing import valued_tokens
from tests.context.test_tiers import (
    Counter,
    FakeSummarizer,
    asst,
    attached,
    forgetful,
    make_ctx,
    person,
    read_pair,
    results,
    work_session,
)


def chain(view, compactions):
    """Apply compactions in order, checking that each was computed on the view after the previous."""
    current = list(view)
    for previous, compaction in zip([None, *compactions], compactions, strict=False):
        if previous is not None:
            assert compaction.before == previous.after
        current = apply_compaction(current, compaction)
        assert check(current) == []
    return current


async def test_nothing_happens_when_there_is_room_and_the_cache_is_warm():
    view = work_session(4)
    policy = default_policy()
    assert await policy.decide(view, make_ctx(view, budget=100_000), "auto") == []
    assert not policy.warn and not policy.halted_reason


async def test_warn_flag_at_the_warn_fraction():
    view = work_session(4)
    policy = default_policy()
    used = int(0.76 * 100_000)
    assert await policy.decide(view, make_ctx(view, budget=100_000, used=used)) == []
    assert policy.warn


async def test_a_cold_cache_runs_micro_compaction_first():
    view = work_session(8)
    out = await default_policy().decide(view, forgetful(make_ctx(view, budget=100_000, last_request_at=0.0)))
    assert [(c.tier, c.trigger) for c in out] == [("T1", "cache_cold")]
    chain(view, out)


async def test_order_t1_pressure_then_the_lossy_tiers_each_on_the_previous_result():
    """T1 frees what its clears can (down to the region target when the view is over the next tier's
    threshold); what it cannot touch (the model's own long words) is left to T4, computed on T1's
    result, not on the view T1 started from."""
    view = [person("Please fix the bug in the parser.")]
    for n in range(6):
        view += read_pair(n, 3_000)
    for n in range(30):
        view += [
            asst(f"Checking step {n} of the plan.", (f"s{n}", "bash", {"command": f"make check STEP={n}"})),
            results((f"s{n}", "bash", f"step {n} ok")),
        ]
    view += [asst("Long reasoning. " * 1_500), person("go on", 2)]
    config = ContextConfig(micro_collapse=False)
    ctx = forgetful(make_ctx(view, budget=5_000, summarizer=FakeSummarizer(), config=config))
    out = await default_policy().decide(view, ctx)
    assert [(c.tier, c.trigger) for c in out] == [("T1", "pressure"), ("T4", "auto")]
    assert out[0].bet is not None and out[0].bet.forced  # over the threshold: space, not price
    final = chain(view, out)
    assert Counter().total(final) < out[0].before


async def test_at_the_threshold_a_fresh_note_means_t2_otherwise_t4():
    view = work_session(10)
    budget = 6_000
    used = int(budget * 0.9)
    fresh = make_ctx(
        view,
        budget=budget,
        used=used,
        memory_note="# note\n## Current Goal\n- parser",
        memory_covers=len(view),
    )
    fresh = forgetful(fresh)  # nothing worth keeping: the plain threshold applies
    out = await default_policy().decide(view, replace(fresh, tool_compactable=lambda name: False))
    assert [c.tier for c in out] == ["T2"]  # (T1 has nothing it may clear here)
    no_region = replace(fresh.config, region_fraction=0.95)
    stale = replace(
        fresh,
        memory_covers=2,
        summarizer=FakeSummarizer(),
        config=no_region,
        tool_compactable=lambda name: False,
    )
    out = await default_policy().decide(view, stale)
    assert [c.tier for c in out] == ["T4"]
    chain(view, out)


def six_reads_over_the_plain_threshold(**changes):
    """Six 3,000-character reads at 5,100 of a 6,000 budget: over 0.835 x 6,000, with a summarizer."""
    view = work_session(6, size=3_000)
    ctx = make_ctx(
        view,
        budget=6_000,
        used=5_100,
        summarizer=FakeSummarizer(),
        config=ContextConfig(micro_collapse=False),
        **changes,
    )
    return view, ctx


async def test_what_is_worth_keeping_raises_the_auto_threshold_like_a_fixed_cost():
    """T4 would summarize the reads the model is about to edit: counted like the system prompt,
    they move the threshold up, and the same usage does not trigger it."""
    view, ctx = six_reads_over_the_plain_threshold()
    needed, worthless = attached(ctx), forgetful(ctx)  # every read needed soon / none ever again
    policy = default_policy()
    plain = policy.auto_threshold(worthless, valued_tokens(view, worthless))
    raised = policy.auto_threshold(needed, valued_tokens(view, needed))
    assert plain == 0.835 * 6_000 <= 5_100 < raised <= 6_000
    assert [c.tier for c in await policy.decide(view, needed) if c.tier in ("T1", "T2", "T3", "T4")] == []
    assert policy.threshold == raised  # what the gauge shows as the auto-compaction mark
    assert make_policy("claude-code").auto_threshold(needed, valued_tokens(view, needed)) == plain


async def test_the_system_prompt_and_tools_count_like_what_is_worth_keeping():
    """What every request carries and no tier can take (`fixed`) raises the threshold as the reads
    the model still needs do: a context just over the threshold they leave without it, all of it
    needed, is left alone once the system prompt and tools are counted; without them T1 must clear."""
    view, ctx = six_reads_over_the_plain_threshold()
    needed = attached(ctx)
    policy = default_policy()
    bare = policy.auto_threshold(needed, valued_tokens(view, needed))
    carried = replace(needed, fixed=600, used=int(bare) + 50)
    raised = policy.auto_threshold(carried, valued_tokens(view, carried))
    assert raised == pytest.approx(bare + (1 - 0.835) * 600) and carried.used < raised
    assert await default_policy().decide(view, carried) == []
    over = replace(carried, fixed=0)
    assert [c.tier for c in await default_policy().decide(view, over)] == ["T1"]


async def test_a_read_counted_as_worth_keeping_keeps_its_place_once_used_until_a_clear_cuts_it():
    """The reads the model was about to edit raised the threshold. Once it has edited them they are
    worth less (here: nothing), but the threshold does not fall back under the same usage, so T4
    does not summarize them because the model used what it read; a policy that never counted them
    runs T4 at once. A read a clear has cut stops counting."""
    # T1 may clear nothing: only the threshold decides
    view, ctx = six_reads_over_the_plain_threshold(tool_compactable=lambda name: False)
    needed, used_up = attached(ctx), forgetful(ctx)
    policy = default_policy()
    assert await policy.decide(view, needed) == []
    raised = policy.threshold
    assert raised > 5_100
    assert await policy.decide(view, used_up) == []  # the same view, its reads now used up
    assert policy.threshold == raised
    fresh = await default_policy().decide(view, used_up)  # never counted them: 0.835 x 6,000 < 5,100
    assert [c.tier for c in fresh] == ["T4"]
    reads = frozenset((i, 0) for i, m in enumerate(view) if m.role == "user" and m.tool_results())
    cut, _, _ = clear(view, used_up, reads, {})
    after = replace(used_up, used=Counter().total(cut))
    await policy.decide(cut, after)
    assert policy.threshold == 0.835 * 6_000


async def test_auto_compact_off_keeps_only_the_lossless_tier():
    view = work_session(10, size=3_000)
    config = ContextConfig(auto_compact=False)
    ctx = make_ctx(
        view, budget=8_000, used=7_900, summarizer=FakeSummarizer(), config=config, last_request_at=0.0
    )
    out = await default_policy().decide(view, forgetful(ctx))
    assert [c.tier for c in out] == ["T1"]
    assert default_policy().emergency(view, ctx, 9_000, 8_000).tier == "T5"


async def test_anti_thrash_stops_automatic_compaction_after_two_useless_rounds():
    view = work_session(10)
    summarizer = FakeSummarizer()
    policy = Policy(replace(POLICIES["default"], micro=False))  # T1 would free the room itself
    ctx = make_ctx(view, budget=6_000, used=30_000, summarizer=summarizer)  # far more than T4 can free
    ctx = forgetful(ctx)  # and T3 may summarize every read
    assert [c.tier for c in await policy.decide(view, ctx)] == ["T3", "T4"]
    assert not policy.halted_reason
    assert [c.tier for c in await policy.decide(view, ctx)] == ["T3", "T4"]
    assert "two compactions in a row" in policy.halted_reason
    calls = len(summarizer.calls)
    assert await policy.decide(view, ctx) == []
    assert len(summarizer.calls) == calls
    # the lossless tier still runs while halted
    policy.spec = POLICIES["default"]
    cold = await policy.decide(view, forgetful(replace(ctx, last_request_at=0.0)))
    assert [c.tier for c in cold] == ["T1"]
    # a manual compaction that leaves usage above the threshold does not resume it ...
    still = await policy.manual(view, make_ctx(view, budget=6_000, used=60_000, summarizer=summarizer))
    assert still is not None and still.after >= policy.auto_threshold(ctx) and policy.halted_reason
    # ... one that gets below the threshold does
    await policy.manual(view, make_ctx(view, budget=6_000, summarizer=summarizer))
    assert not policy.halted_reason


async def test_a_successful_round_resets_the_strikes():
    view = work_session(10)
    policy = default_policy()
    high = make_ctx(view, budget=6_000, used=30_000, summarizer=FakeSummarizer())
    await policy.decide(view, high)
    await policy.decide(view, make_ctx(view, budget=6_000, used=5_900, summarizer=FakeSummarizer()))
    await policy.decide(view, high)
    assert not policy.halted_reason


async def test_manual_compaction_uses_the_focus_and_falls_back_on_failure():
    view = work_session(10)
    summarizer = FakeSummarizer(replies=["## Goal\nparser"])
    policy = default_policy()
    out = await policy.manual(
        view, make_ctx(view, budget=100_000, summarizer=summarizer, focus="only the tests")
    )
    assert out is not None and (out.tier, out.trigger) == ("T4", "manual")
    assert "only the tests" in summarizer.calls[0][1]
    failed = await policy.manual(view, make_ctx(view, budget=100_000, summarizer=FakeSummarizer(fail=True)))
    assert failed is not None and (failed.tier, failed.trigger) == ("T5", "summarizer_failed")
    short = [person("hi")]
    assert await policy.manual(short, make_ctx(short, summarizer=summarizer)) is None


async def test_emergency_frees_what_the_api_asked_for():
    view = work_session(10)
    ctx = make_ctx(view)
    out = default_policy().emergency(view, ctx, tokens=ctx.used + 1_000, maximum=ctx.used - 1_000)
    assert out.tier == "T5" and out.trigger == "overflow"
    new = chain(view, [out])
    assert Counter().total(view) - Counter().total(new) >= 2_000 + ctx.config.emergency_margin_tokens


async def test_digest_mode_digests_at_a_new_persons_message():
    view = work_session(4)
    ctx = forgetful(make_ctx(view, budget=100_000, config=ContextConfig(tool_trace="digest")))
    out = await default_policy().decide(view, ctx)
    assert [c.tier for c in out] == ["digest"]
    assert len(chain(view, out)) == 3


def test_make_policy_names_and_errors():
    names = {"default", "default+subtask", "none", "claude-code", "masking", "api-clear", "api-compact"}
    assert set(POLICIES) == names
    assert make_policy("Claude-Code").name == "claude-code"
    assert default_policy().name == "default"
    with pytest.raises(ValueError, match="default, default\\+subtask, none, claude-code, masking"):
        make_policy("aggressive")


async def test_policy_none_only_answers_an_overflow():
    view = work_session(10)
    ctx = make_ctx(view, budget=6_000, used=5_990, summarizer=FakeSummarizer(), last_request_at=0.0)
    policy = make_policy("none")
    assert await policy.decide(view, ctx) == []
    assert policy.emergency(view, ctx, 7_000, 6_000).tier == "T5"


async def test_policy_claude_code_is_t4_at_83_5_percent_and_nothing_earlier():
    view = work_session(10, size=3_000)
    policy = make_policy("claude-code")
    early = make_ctx(view, budget=10_000, used=8_300, summarizer=FakeSummarizer(), last_request_at=0.0)
    assert await policy.decide(view, early) == []
    late = replace(early, used=8_400, memory_note="# fresh note", memory_covers=len(view))
    assert [c.tier for c in await policy.decide(view, late)] == ["T4"]


async def test_policy_masking_keeps_the_last_ten_results_every_turn():
    view = [person("go")]
    for n in range(14):
        view += read_pair(n, 400)
    policy = make_policy("masking")
    out = await policy.decide(view, make_ctx(view, budget=1_000_000))
    assert [c.tier for c in out] == ["T1"]
    new = chain(view, out)
    cleared = [b.tool_use_id for m in new for b in m.tool_results() if b.text.startswith("[cleared:")]
    assert cleared == ["t0", "t1", "t2", "t3"]
    assert await policy.decide(new, make_ctx(new, budget=1_000_000)) == []


def test_shift_index_moves_boundaries_through_a_compaction():
    msg = person("x")
    compaction = Compaction("T4", "auto", (SpanReplacement(1, 6, (msg, msg)),))
    assert shift_index(compaction, 0) == 0
    assert shift_index(compaction, 6) == 3
    assert shift_index(compaction, 9) == 6
    assert shift_index(compaction, 4) == 1  # inside the span: never claims more than it covered


def test_policy_is_constructible_with_a_custom_spec():
    policy = Policy(replace(POLICIES["default"], name="custom", region=False))
    assert policy.name == "custom" and policy.halted_reason == ""
