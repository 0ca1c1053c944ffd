"""Misses and hits: the engine learns, from what the model comes back for and what its edits use, how
much items like each one are worth (context/ghosts.py, context/hits.py)."""

from __future__ import annotations

import asyncio

from agent_cli.context.engine import ContextEngine
from agent_cli.context.model import ContextConfig
from agent_cli.context.policy import make_policy
from agent_cli.context.reuse import predict
from agent_cli.context.store import MemoryStore
from agent_cli.context.tiers import MicroCompact
from agent_cli.context.tiers.markers import short_ref
from agent_cli.core.types import Message
from tests.context.test_engine import MODEL
from tests.context.test_tiers import asst, forgetful, make_ctx, person, results

SOURCE = "\n".join(f"{n:>6}\tdef f{n}(x):  # line {n} of lib.py" for n in range(1, 120))


def live_engine(**config: object) -> ContextEngine:
    clock = iter(range(10_000, 10**9, 10))
    return ContextEngine(
        config=ContextConfig(cache_ttl_seconds=1.0, **config),  # every request finds the cache cold
        model=MODEL,
        system_prompt="You are a test.",
        tools=[],
        store=MemoryStore(),
        policy=make_policy("default"),
        clock=lambda: next(clock),
    )


def replay_log(events: list[tuple[str, object]]) -> ContextEngine:
    """A fresh engine fed a live run's log: ("m", message) appended as logged, ("c", compaction) applied."""
    replayed = live_engine()
    for kind, value in events:
        if kind == "m":
            replayed.append(value, ingest=False)  # type: ignore[arg-type]
        else:
            replayed.apply(value)  # type: ignore[arg-type]
    return replayed


def reply(*calls: tuple[str, str, dict]) -> Message:
    return asst("", *calls)


async def run_until_cleared(engine: ContextEngine) -> None:
    """A read of lib.py, then a long run of commands: T1 clears the read on a cold cache."""
    engine.append(person("tidy the library"))
    engine.append(reply(("r1", "read_file", {"path": "lib.py"})))
    engine.append(results(("r1", "read_file", SOURCE)))
    for n in range(60):
        engine.append(reply((f"c{n}", "bash", {"command": f"make step{n}"})))
        engine.append(results((f"c{n}", "bash", f"step {n} ok " * 80)))
        engine.build_request()
        for compaction in await engine.maybe_compact():
            del compaction
    assert short_ref("r1") in engine.ghosts.by_ref and engine.store.get(short_ref("r1")) == SOURCE


async def test_a_recall_of_a_cleared_ref_is_a_miss_with_its_age_and_cost_and_a_second_one_is_not():
    engine = live_engine()
    await run_until_cleared(engine)
    ref = short_ref("r1")
    before = engine.ghosts.stats().factor("file")
    appended = engine.append(reply(("x1", "recall", {"ref": ref})))
    (miss,) = appended.misses
    assert (miss.ref, miss.path, miss.group, miss.how) == (ref, "lib.py", "file", "recall")
    assert miss.age > 0 and miss.cost > 1.25 * miss.tokens
    assert engine.ghosts.stats().factor("file") > before  # items like it are worth more now
    engine.append(results(("x1", "recall", SOURCE)))
    assert engine.append(reply(("x2", "recall", {"ref": ref}))).misses == []  # it came back once
    report = engine.ghosts.report()
    assert report.misses == 1 and report.clears >= 1 and "1 came back" in report.summary()


async def test_a_recall_of_something_never_cleared_is_not_a_miss():
    engine = live_engine()
    engine.append(person("look"))
    engine.append(reply(("r1", "read_file", {"path": "lib.py"})))
    engine.append(results(("r1", "read_file", SOURCE)))
    assert engine.append(reply(("x", "recall", {"ref": "r1"}))).misses == []
    assert engine.append(results(("x", "recall", "no such ref"))).misses == []
    assert engine.ghosts.report().misses == 0
    # /context on a session T1 has not touched says so in words, not in a row of zeros
    assert engine.ghosts.report().summary().startswith("T1 has cleared nothing yet (")


async def test_reading_a_cleared_file_again_is_a_miss_but_not_when_the_read_was_stale():
    engine = live_engine()
    await run_until_cleared(engine)
    (miss,) = engine.append(reply(("r2", "read_file", {"path": "lib.py"}))).misses
    assert miss.how == "reread" and miss.path == "lib.py"
    # a superseded read, cleared, then the file read again: that is no miss
    view = [person("go")]
    for tid in ("a", "b"):  # the same file read whole twice: the first is stale
        view += [asst("", (tid, "read_file", {"path": "x.py"})), results((tid, "read_file", SOURCE))]
    view += [asst("ok"), person("next")]
    stale = live_engine()
    for message in view:
        stale.append(message)
    compaction = await MicroCompact().propose(
        stale.messages, make_ctx(stale.messages, last_request_at=0.0), "cache_cold"
    )
    stale.apply(compaction)
    assert stale.append(reply(("c", "read_file", {"path": "x.py"}))).misses == []


def test_an_edit_tells_which_item_it_used_and_the_class_gets_the_credit():
    engine = live_engine()
    engine.append(person("fix f7"))
    engine.append(reply(("r1", "read_file", {"path": "lib.py"})))
    engine.append(results(("r1", "read_file", SOURCE)))
    cls = predict(engine.messages)["r1"].cls
    engine.append(
        reply(
            (
                "e1",
                "edit_file",
                {
                    "path": "lib.py",
                    "old_string": "def f7(x):  # line 7 of lib.py",
                    "new_string": "def f7(y):",
                },
            )
        )
    )
    assert engine.hits.hits == {cls: 1}
    assert engine.hits.factor(cls) > 1  # used sooner than predicted: worth more from now on
    engine.append(results(("e1", "edit_file", "ok")))
    engine.append(reply(("b", "bash", {"command": "ls"})))
    assert sum(engine.hits.hits.values()) == 1  # a command uses nothing


async def test_a_blind_edit_of_a_cleared_item_counts_for_its_class_too():
    engine = live_engine(micro_collapse=False)  # the cleared read keeps its place (and its class)
    await run_until_cleared(engine)
    edit = {"path": "lib.py", "old_string": "def f9(x):  # line 9 of lib.py", "new_string": "def f9(y):"}
    guesses = predict(engine.messages)
    engine.append(reply(("e9", "edit_file", edit)))
    assert engine.hits.hits == {guesses["r1"].cls: 1}


def test_replaying_a_log_rebuilds_the_same_misses():
    """Appends and compactions in log order give the same ghosts and misses as the live run."""
    engine = live_engine()
    events: list[tuple[str, object]] = []
    engine.append(person("tidy lib.py"))
    events.append(("m", engine.messages[-1]))
    for message in [reply(("r1", "read_file", {"path": "lib.py"})), results(("r1", "read_file", SOURCE))]:
        engine.append(message)
        events.append(("m", message))
    view = engine.messages + [asst("ok"), person("more")]
    for message in view[-2:]:
        engine.append(message)
        events.append(("m", message))
    compaction = asyncio.run(
        MicroCompact().propose(
            engine.messages, forgetful(make_ctx(engine.messages, last_request_at=0.0)), "cache_cold"
        )
    )
    assert compaction is not None
    engine.apply(compaction)
    events.append(("c", compaction))
    miss = engine.append(reply(("x", "recall", {"ref": short_ref("r1")}))).misses
    events.append(("m", engine.messages[-1]))
    replayed = replay_log(events)
    assert len(miss) == 1 and replayed.ghosts.report() == engine.ghosts.report()
    assert replayed.ghosts.stats() == engine.ghosts.stats()


def test_a_session_that_never_edits_what_it_reads_values_its_reads_below_any_fixed_floor():
    """The session's own evidence has no floor: a session that reads and reads and never edits
    ends up valuing a new read at a small fraction of the fitted prior, and sooner the lighter the
    prior (ContextConfig.hits_prior_weight)."""
    engine = live_engine()
    engine.append(person("look around the library"))
    for n in range(60):
        engine.append(reply((f"r{n}", "read_file", {"path": f"lib{n}.py"})))
        engine.append(results((f"r{n}", "read_file", SOURCE)))
        engine.append(reply((f"b{n}", "bash", {"command": f"wc -l lib{n}.py"})))
        engine.append(results((f"b{n}", "bash", "119")))
    engine.append(reply(("r-new", "read_file", {"path": "new.py"})))
    engine.append(results(("r-new", "read_file", SOURCE)))
    assert not engine.hits.hits  # no edit used any read
    fitted = predict(engine.messages)["r-new"]
    learned = predict(engine.messages, engine.ghosts.stats(engine.hits.factors()))["r-new"]
    assert learned.cls == fitted.cls
    assert learned.p < 0.2 * fitted.p  # the old clamp kept it at a quarter at least
    light = live_engine(hits_prior_weight=0.5)
    heavy = live_engine(hits_prior_weight=50.0)
    for message in engine.messages:
        light.append(message)
        heavy.append(message)
    assert light.hits.factor(fitted.cls) < engine.hits.factor(fitted.cls) < heavy.hits.factor(fitted.cls)
    assert heavy.hits.factor(fitted.cls) > 0.5
