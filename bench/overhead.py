"""Per-turn overhead of the context engine: incremental accounting vs a naive full recount.

    /tmp/venv/bin/python bench/overhead.py [--sizes 50000 200000 1000000] [--turns 60] [--profile]

For each history size (tokens of synthetic but realistic coding-session messages: a person's asks,
assistant text with tool calls, code and command output as results), the engine's path for one turn
(append the response and its tool results, status(), build_request()) is timed against a naive
recount of the same history (every message counted again, as an engine without incremental
accounting would do each turn), in the same run. Medians in ms per turn.
Goals: < 5 ms/turn at 200k tokens; >= 50x faster than the recount at 1M.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.engine import ContextEngine  # noqa: E402
from agent_cli.context.model import ContextConfig  # noqa: E402
from agent_cli.context.policy import make_policy  # noqa: E402
from agent_cli.context.tokens import TokenCounter  # noqa: E402
from agent_cli.core.types import Block, BlockMeta, Message, Trust  # noqa: E402
from agent_cli.llm.models import model_info  # noqa: E402
from bench._args import count  # noqa: E402

MODEL = "claude-sonnet-5-5"  # 1M window, so a 1M history is a legal request
GOAL_MS_200K = 5.0
GOAL_RATIO_1M = 50.0

WORDS = (
    "parser config request handler cache token budget module session result error retry "
    "import value index buffer stream client server schema field record update delete"
).split()


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(1, lines + 1):
        a, b, c = rng.sample(WORDS, 3)
        kind = rng.random()
        if kind < 0.2:
            text = f"def {a}_{b}(self, {c}: int = {rng.randint(0, 99)}) -> dict[str, int]:"
        elif kind < 0.5:
            text = f"    {a}_{b} = self.{c}.get({a!r}, {rng.randint(0, 999)})  # {b} {c}"
        elif kind < 0.7:
            text = f"    if {a} is None or {b} > {rng.randint(1, 64)}:\n        raise ValueError(f'bad {c}: {{{a}}}')"
        else:
            text = f"    return {{'{a}': {b}, '{c}': len({a}_{c})}}"
        out.append(f"{i:>6}\t{text}")
    return "\n".join(out)


def _turn(rng: random.Random, index: int) -> list[Message]:
    """One exchange: the assistant calls a tool (read, bash or grep), the result comes back."""
    meta_a = BlockMeta(Trust.ASSISTANT, "assistant")
    tool = rng.choice(["read_file", "bash", "grep"])
    call_id = f"toolu_{index:06d}"
    if tool == "read_file":
        call = Block.tool_use(call_id, tool, {"path": f"src/{rng.choice(WORDS)}_{index}.py"})
        output = _code(rng, rng.randint(40, 160))
    elif tool == "bash":
        call = Block.tool_use(call_id, tool, {"command": f"pytest -q tests/test_{rng.choice(WORDS)}.py"})
        output = "\n".join(
            f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_{k} {'PASSED' if rng.random() > 0.1 else 'FAILED'}"
            for k in range(rng.randint(20, 80))
        )
    else:
        call = Block.tool_use(call_id, tool, {"pattern": rng.choice(WORDS), "path": "src"})
        output = "\n".join(
            f"src/{rng.choice(WORDS)}.py:{rng.randint(1, 900)}:    {rng.choice(WORDS)} = {rng.choice(WORDS)}()"
            for _ in range(rng.randint(10, 60))
        )
    said = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
    assistant = Message("assistant", (Block.text_block(f"Next I check the {said}.", meta_a), call))
    result = Block.tool_result(call_id, output, meta=BlockMeta(Trust.TOOL, "tool", tool_name=tool))
    return [assistant, Message("user", (result,))]


def history(tokens: int, counter: TokenCounter, seed: int = 7) -> tuple[list[Message], random.Random]:
    rng = random.Random(seed)
    meta_u = BlockMeta(Trust.USER, "user")
    messages = [
        Message("user", (Block.text_block("Refactor the request handler and keep the tests green.", meta_u),))
    ]
    total = counter.messages(messages)
    index = 0
    while total < tokens:
        index += 1
        if index % 25 == 0:  # now and then the person says something
            reply = Message(
                "assistant",
                (Block.text_block("Done with this part.", BlockMeta(Trust.ASSISTANT, "assistant")),),
            )
            ask = Message(
                "user", (Block.text_block(f"Good. Now the {rng.choice(WORDS)} part, please.", meta_u),)
            )
            new = [reply, ask]
        else:
            new = _turn(rng, index)
        messages += new
        total += counter.messages(new)
    return messages, rng


def _engine(messages: list[Message], tokens: int) -> ContextEngine:
    config = ContextConfig(budget_tokens=tokens * 2 + 100_000)
    engine = ContextEngine(
        config=config,
        model=model_info(MODEL),
        system_prompt="You are a careful coding agent. " * 60,
        tools=[
            {"name": n, "description": f"the {n} tool", "input_schema": {"type": "object"}}
            for n in ("bash", "grep", "read_file")
        ],
        policy=make_policy("none"),
    )
    for message in messages:
        engine.append(message, ingest=False)
    engine.build_request()
    return engine


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(tokens: int, turns: int, recounts: int) -> dict[str, float]:
    counter = TokenCounter(MODEL)
    messages, rng = history(tokens, counter)
    engine = _engine(messages, tokens)
    history_tokens = engine.status().used
    history_messages = len(engine.messages)
    start_index = 10_000_000
    new_turns = [_turn(rng, start_index + i) for i in range(turns)]

    parts: dict[str, list[float]] = {"append": [], "status": [], "build_request": [], "turn": []}
    for pair in new_turns:
        t0 = time.perf_counter()
        for message in pair:
            engine.append(message)
        t1 = time.perf_counter()
        engine.status()
        t2 = time.perf_counter()
        engine.build_request()
        t3 = time.perf_counter()
        parts["append"].append(t1 - t0)
        parts["status"].append(t2 - t1)
        parts["build_request"].append(t3 - t2)
        parts["turn"].append(t3 - t0)

    # the naive way: after each turn, count every message again (no per-block memo: a fresh counter).
    # `warm_recount` is the same recount with the text cache warm (hashing every block, no tokenizing).
    view = engine.messages
    naive: list[float] = []
    for _ in range(recounts):
        fresh = TokenCounter(MODEL)
        fresh.raw_text("warm")  # the tokenizer load is not part of a turn
        t0 = time.perf_counter()
        fresh.messages(view)
        naive.append(time.perf_counter() - t0)
    warm: list[float] = []
    for _ in range(recounts):
        t0 = time.perf_counter()
        counter.messages(view)
        warm.append(time.perf_counter() - t0)
    out = {k: _median_ms(v) for k, v in parts.items()}
    out.update(
        history_tokens=history_tokens,
        messages=history_messages,
        naive_recount=_median_ms(naive),
        warm_recount=_median_ms(warm),
    )
    out["ratio"] = out["naive_recount"] / out["turn"] if out["turn"] else float("inf")
    return out


def profile(tokens: int, turns: int) -> str:
    counter = TokenCounter(MODEL)
    messages, rng = history(tokens, counter)
    engine = _engine(messages, tokens)
    pairs = [_turn(rng, 20_000_000 + i) for i in range(turns)]

    def run() -> None:
        for pair in pairs:
            for message in pair:
                engine.append(message)
            engine.status()
            engine.build_request()

    profiler = cProfile.Profile()
    profiler.runcall(run)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=count, nargs="+", default=[50_000, 200_000, 1_000_000])
    parser.add_argument("--turns", type=count, default=60)
    parser.add_argument("--recounts", type=count, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile the incremental turn at each size")
    args = parser.parse_args(argv)
    rows = {}
    header = f"{'history':>10} {'msgs':>6} {'turn ms':>8} {'append':>7} {'status':>7} {'build':>7} {'recount ms':>11} {'warm recount':>13} {'ratio':>7}"
    print(header)
    for size in args.sizes:
        row = measure(size, args.turns, args.recounts)
        rows[size] = row
        print(
            f"{int(row['history_tokens']):>10,} {int(row['messages']):>6} {row['turn']:>8.2f} {row['append']:>7.2f} "
            f"{row['status']:>7.2f} {row['build_request']:>7.2f} {row['naive_recount']:>11.1f} {row['warm_recount']:>13.1f} "
            f"{row['ratio']:>6.0f}x"
        )
        if args.profile:
            print(profile(size, args.turns))
    _goal(
        rows, 200_000, lambda r: r["turn"] < GOAL_MS_200K, f"< {GOAL_MS_200K:g} ms/turn at 200k", "turn", "ms"
    )
    _goal(
        rows,
        1_000_000,
        lambda r: r["ratio"] >= GOAL_RATIO_1M,
        f">= {GOAL_RATIO_1M:g}x faster than recount at 1M",
        "ratio",
        "x",
    )
    return 0


def _goal(
    rows: dict[int, dict[str, float]],
    size: int,
    ok: Callable[[dict[str, float]], bool],
    name: str,
    key: str,
    unit: str,
) -> None:
    if size not in rows:
        print(f"goal {name}: not measured (add {size} to --sizes)")
        return
    row = rows[size]
    print(f"goal {name}: {'met' if ok(row) else 'MISSED'} ({row[key]:.2f} {unit})")


if __name__ == "__main__":
    raise SystemExit(main())
