"""Drive the context engine open-loop over a recorded session and account for what it would cost.

For each recorded response: the recorded user message before it is appended (ingest, so T0
offloads), the policy may compact (the engine's clock reads the recorded time), the request is
assembled as it would be sent, its tokens and prompt-cache effect are simulated, its integrity
checked, and the recorded response is appended. The recorded agent's own system prompt and tools
are not in the log: a stand-in system block of the same token count (from the first request's
recorded usage) takes their place, so budgets, thresholds and the cache see them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from agent_cli.context.model import MIN_BUDGET_TOKENS, Compaction, ContextConfig, Summarizer
from agent_cli.context.store import MemoryStore
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.errors import AgentError, ContextOverflowError
from agent_cli.core.types import Message, ModelInfo, Request, Usage
from agent_cli.llm.models import model_info
from agent_cli.replay.cache_sim import CacheSimulator, SegmentMemo, request_segments
from agent_cli.replay.calibration import (  # noqa: F401 - calibrate is part of this module's API
    calibrate,
    stand_in_system_prompt,
    stand_in_tool,
)
from agent_cli.replay.claude_code import Transcript, load_claude_code, tool_compactable
from agent_cli.replay.fidelity import Baseline, EditCheck, FidelityProbe, fidelity
from agent_cli.replay.oracle import Oracle
from agent_cli.replay.our_log import load_our_log, looks_like_our_log
from agent_cli.replay.recoverable import RecoverableCheck
from agent_cli.replay.report import (
    CompactionRecord,
    Integrity,
    Misses,
    ReplayResult,
    TokenTotals,
    api_orphans,
    percentile,
    reference,
)
from agent_cli.replay.thinking_turns import Wire, turns_kept

POLICIES = (
    "default",
    "oracle",
    "api-clear",
    "api-compact",
    "default+subtask",
    "none",
    "claude-code",
    "masking",
    "recorded",
)
# replay policies that run a context policy with something more (or instead: `recorded` sends the
# contexts the recorded agent really sent, its own compactions applied, through the same simulator:
# how far the replay's count and cache are from what the recorded agent was billed)
CONTEXT_POLICY = {"oracle": "default", "recorded": "none"}


class ReplayError(AgentError):
    """A file that cannot be replayed, or a bad option."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


@dataclass
class ReplayClock:
    """The engine's clock in a replay: it reads the recorded time."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


# -- input ------------------------------------------------------------------------------------


def load_transcript(path: str | Path) -> Transcript:
    """A Claude Code session file or our own `events.jsonl` (or its session directory)."""
    path = Path(path)
    if path.is_dir():
        if (path / "events.jsonl").is_file():
            return load_our_log(path)
        raise ReplayError(f"{path} is a directory without an events.jsonl", "pass a session file")
    if not path.is_file():
        raise ReplayError(f"no such file: {path}", "pass a Claude Code .jsonl or a session's events.jsonl")
    if looks_like_our_log(path):
        return load_our_log(path)
    return load_claude_code(path)


def sessions_in(folder: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The `*.jsonl` files of `folder` that hold a session to replay, and why each other one does not
    (empty, unreadable, no model response): a folder of sessions replays whatever else it holds."""
    sessions: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            transcript = load_transcript(path)
        except ReplayError as exc:
            skipped.append((path, str(exc)))
            continue
        except OSError as exc:
            skipped.append((path, exc.strerror or str(exc)))
            continue
        if transcript.requests:
            sessions.append(path)
        else:
            torn = f" ({transcript.torn_lines} unreadable line(s))" if transcript.torn_lines else ""
            skipped.append((path, f"no recorded model responses{torn}"))
    return sessions, skipped


# -- the replay -----------------------------------------------------------------------------------


def replay(
    path: str | Path,
    *,
    policy: str = "default",
    budget_tokens: int | None = None,
    config: ContextConfig | None = None,
    summarizer: Summarizer | None = None,
    dump_requests: Path | None = None,
    oracle_classes: frozenset[str] | None = None,
    baseline: Baseline | None = None,
) -> ReplayResult:
    """Replay a recorded session under `policy` (`oracle_classes`: replay/oracle.py; `baseline`: the
    session's unmanaged pass made before, see `baseline`). Raises ReplayError for files or options
    it cannot use."""
    return asyncio.run(
        replay_async(
            path,
            policy=policy,
            budget_tokens=budget_tokens,
            config=config,
            summarizer=summarizer,
            dump_requests=dump_requests,
            oracle_classes=oracle_classes,
            baseline=baseline,
        )
    )


def baseline(path: str | Path, *, budget_tokens: int | None = None) -> Baseline:
    """The session's unmanaged pass alone (fidelity.Baseline), to pass to many replays of it."""
    transcript, config, model = _prepare(path, "none", budget_tokens, None)
    _, checks = asyncio.run(_run(transcript, "none", replace(config, policy="none"), model, None, None))
    return Baseline(transcript.path, config.budget_tokens, tuple(checks))


async def replay_async(
    path: str | Path,
    *,
    policy: str = "default",
    budget_tokens: int | None = None,
    config: ContextConfig | None = None,
    summarizer: Summarizer | None = None,
    dump_requests: Path | None = None,
    oracle_classes: frozenset[str] | None = None,
    baseline: Baseline | None = None,
) -> ReplayResult:
    """The replay under `policy`, with its fidelity measured against the same edits under `none`
    (a second, unmanaged pass, or `baseline`) and, with `dump_requests`, every simulated request
    written there."""
    transcript, config, model = _prepare(path, policy, budget_tokens, config)
    if baseline is not None and (baseline.file, baseline.budget_tokens) != (
        transcript.path,
        config.budget_tokens,
    ):
        raise ReplayError(
            f"the baseline is {baseline.file} at a budget of {baseline.budget_tokens}, "
            f"not {transcript.path} at {config.budget_tokens}",
            "make it with driver.baseline(path, budget_tokens=...) for the session and budget replayed",
        )
    dump = _open_dump(dump_requests, transcript.path)
    try:
        result, checks = await _run(
            transcript,
            policy,
            replace(config, policy=CONTEXT_POLICY.get(policy, policy)),
            model,
            summarizer,
            dump,
            oracle_classes,
        )
        if dump is not None:
            dump.close()  # flushes: a full disk shows here
    except OSError as exc:  # only the dump is written to: a full disk, /dev/full, /proc/version
        raise ReplayError(f"cannot write --dump-requests {dump_requests}: {exc.strerror or exc}") from exc
    finally:
        if dump is not None and not dump.closed:
            with contextlib.suppress(OSError):
                dump.close()
    unmanaged: Sequence[EditCheck] = checks
    if baseline is not None:
        unmanaged = baseline.checks
    elif policy != "none" and checks:
        _, unmanaged = await _run(transcript, "none", replace(config, policy="none"), model, None, None)
    return replace(result, fidelity=fidelity(checks, unmanaged, result.weighted_input))


def _prepare(
    path: str | Path, policy: str, budget_tokens: int | None, config: ContextConfig | None
) -> tuple[Transcript, ContextConfig, ModelInfo]:
    """The session, the config with the budget applied, and the recorded model; a ReplayError for
    an option or a file replay cannot use."""
    if policy not in POLICIES:
        raise ReplayError(f"unknown policy {policy!r}", f"choose one of: {', '.join(POLICIES)}")
    if budget_tokens is not None and budget_tokens < MIN_BUDGET_TOKENS:
        raise ReplayError(f"--budget-tokens must be at least {MIN_BUDGET_TOKENS}, not {budget_tokens}")
    transcript = load_transcript(path)
    if not transcript.requests:
        torn = f" ({transcript.torn_lines} unreadable line(s) skipped)" if transcript.torn_lines else ""
        raise ReplayError(
            f"{path}: no recorded model responses{torn}, nothing to replay",
            "pass a Claude Code session (~/.claude/projects/*/*.jsonl) or a session's events.jsonl",
        )
    config = config or ContextConfig()
    if budget_tokens is not None:
        config = replace(config, budget_tokens=budget_tokens)
    return transcript, config, model_info(transcript.model or "claude-opus-4-6")


def _open_dump(path: Path | None, source: str) -> TextIO | None:
    if path is None:
        return None
    if Path(path).exists() and Path(path).samefile(source):
        raise ReplayError(f"--dump-requests {path} is the session being replayed; name another file")
    try:
        return Path(path).open("w", encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot write --dump-requests {path}: {exc.strerror or exc}") from exc


async def _run(
    transcript: Transcript,
    policy_name: str,
    config: ContextConfig,
    model: ModelInfo,
    summarizer: Summarizer | None,
    dump: TextIO | None,
    oracle_classes: frozenset[str] | None = None,
) -> tuple[ReplayResult, list[EditCheck]]:
    from agent_cli.context.engine import ContextEngine
    from agent_cli.context.policy import make_policy

    as_sent = policy_name == "recorded"  # the recorded contexts, not the engine's view (see POLICIES)
    if as_sent and any(r.usage and r.usage.cache_creation_1h_input_tokens for r in transcript.requests):
        config = replace(config, cache_ttl="1h")  # the recorded agent kept its cache an hour
    calibration = calibrate(transcript, model.name)
    counter = TokenCounter(model.name, factor=calibration.factor)
    billing = TokenCounter(model.name, factor=calibration.factor)  # the simulated API's: never calibrated
    overhead, errors = calibration.overhead, calibration.errors
    clock = ReplayClock(transcript.requests[0].timestamp)
    store = MemoryStore()
    # the part of the overhead the recorded first request read from the cache (tools and the static
    # start of the system prompt, cached by earlier sessions) is a tool stand-in, warm in the cache
    first = transcript.requests[0].usage
    warm = min(first.cache_read_input_tokens, overhead) if first is not None else 0
    tools = [stand_in_tool(warm, counter)] if warm >= model.cache_min_tokens else []
    warm = counter.scale(counter.raw_tools(tools)) if tools else 0
    recoverable = RecoverableCheck()
    engine = ContextEngine(
        config=config,
        model=model,
        system_prompt=stand_in_system_prompt(max(0, overhead - warm), counter),
        tools=tools,
        store=store,
        summarizer=summarizer,
        policy=make_policy(CONTEXT_POLICY.get(policy_name, policy_name)),
        clock=clock,
        tool_compactable=tool_compactable,
        counter=counter,
        on_compaction=recoverable.observe,
        predictor=Oracle(transcript, oracle_classes) if policy_name == "oracle" else None,
    )
    budget, _reserved = config.budget(model.context_window, model.max_output_tokens)
    sim = CacheSimulator(min_tokens=model.cache_min_tokens)
    memo = SegmentMemo()
    compactions: list[Compaction] = []
    sizes: list[int] = []
    totals = TokenTotals()
    orphan_uses = orphan_results = over_budget = 0
    warnings: list[str] = list(transcript.warnings)
    probe = FidelityProbe(transcript)
    wire = Wire()  # what our provider leaves out of each request, and what the API reads of it
    cursor = 0
    for recorded in transcript.requests:
        for message in transcript.messages[cursor : recorded.position]:
            clock.now = max(clock.now, _time_of(message, recorded.timestamp))
            compactions += engine.append(message, ingest=not as_sent).compactions
        clock.now = max(clock.now, recorded.timestamp)
        compactions += await engine.maybe_compact()
        turns = turns_kept(recorded.model)  # what the API reads of the thinking sent back
        if as_sent:
            request = engine.requests.of(transcript.recorded_context(recorded), model, _reserved)
        else:
            request = engine.build_request()
        built, (sent, request) = request, wire.read(request, recorded.model, turns)
        segments = request_segments(request, billing, memo, thinking_keyed=not turns)
        tokens = sum(s.tokens for s in segments)
        tries = 0
        while not as_sent and tokens > model.context_window and tries < config.emergency_retries:
            tries += 1  # the API would answer "prompt is too long": the engine's T5 runs
            overflow = ContextOverflowError(
                kind="context_overflow",
                message=f"prompt is too long: {tokens} tokens > {model.context_window} maximum",
                tokens=tokens,
                maximum=model.context_window,
            )
            compactions.append(engine.emergency(overflow))
            built = engine.build_request()
            sent, request = wire.read(built, recorded.model, turns)
            segments = request_segments(request, billing, memo, thinking_keyed=not turns)
            tokens = sum(s.tokens for s in segments)
        if tools and recorded.index == 0:
            sim.warm(segments, len(tools) - 1, clock.now)
        cached = sim.request(segments, clock.now)
        scale = calibration.scale_for(recorded.model)
        sizes.append(round(cached.total * scale))
        output = recorded.usage.output_tokens if recorded.usage else 0
        usage = _scaled(cached.usage(output), scale)
        totals = totals.plus(usage)
        probe.observe(recorded.index, request.messages, sizes[-1], _scaled_count(billing, scale))
        if dump is not None:
            write_request(dump, recorded.index, request, sizes[-1], usage)
        uses, results = api_orphans(request.messages)
        orphan_uses += uses
        orphan_results += results
        over_budget += int(cached.total > budget)
        for warning in engine.observe(built, _as_built(cached.usage(output), sent, request, billing)):
            if warning not in warnings:
                warnings.append(warning)
        wire.answered(sent, transcript.messages[recorded.position])
        engine.append(transcript.messages[recorded.position], ingest=not as_sent)  # T0 leaves what was sent
        cursor = recorded.position + 1
    if sim.too_many_breakpoints:
        warnings.append(f"{sim.too_many_breakpoints} request(s) carried more than 4 cache breakpoints")
    compacted, identical = recoverable.count(store)
    result = ReplayResult(
        file=transcript.path,
        policy=policy_name,
        requests=len(sizes),
        peak_context_tokens=max(sizes),
        mean_context_tokens=round(sum(sizes) / len(sizes)),
        compactions=tuple(CompactionRecord(c.tier, c.trigger, c.before, c.after) for c in compactions),
        tokens=totals,
        integrity=Integrity(orphan_uses, orphan_results, over_budget),
        compacted_items=compacted,
        recoverable_items=identical,
        median_abs_error_pct=round(statistics.median(errors), 2) if errors else None,
        p95_abs_error_pct=round(percentile(errors, 0.95), 2) if errors else None,
        reference=reference(transcript),
        warnings=tuple(warnings),
        context_tokens=tuple(sizes),
        calibration_factor=calibration.factor,
        misses=Misses(
            len(engine.ghosts.misses),
            round(engine.ghosts.miss_cost),
            sum(engine.ghosts.clears.values()),
            engine.ghosts.restored,
        ),
    )
    return result, probe.checks


def write_request(out: TextIO, index: int, request: Request, tokens: int, usage: Usage) -> None:
    """One simulated request as one JSON line: what would be sent, its size and its cache effect."""
    line = {"request": index, "context_tokens": tokens, "usage": usage.to_json(), **request.to_api()}
    out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _as_built(usage: Usage, built: Request, read: Request, counter: TokenCounter) -> Usage:
    """`usage` with what the API left out of the request as built counted as read: the engine does
    not model older turns' thinking being left out (thinking_turns.py), so its counter is not
    taught a factor that would shrink everything else."""
    if read is built:
        return usage
    left_out = counter.request(built) - counter.request(read)
    return replace(usage, cache_read_input_tokens=usage.cache_read_input_tokens + left_out)


def _scaled_count(counter: TokenCounter, scale: float) -> Callable[[str], int]:
    return lambda text: round(counter.text(text) * scale)


def _time_of(message: Message, default: float) -> float:
    stamps = [b.meta.created_at for b in message.blocks if b.meta.created_at]
    return max(stamps) if stamps else default


def _scaled(usage: Usage, scale: float) -> Usage:
    if scale == 1.0:
        return usage
    return Usage(
        round(usage.input_tokens * scale),
        usage.output_tokens,
        round(usage.cache_read_input_tokens * scale),
        round(usage.cache_creation_input_tokens * scale),
        round(usage.cache_creation_1h_input_tokens * scale),
    )
