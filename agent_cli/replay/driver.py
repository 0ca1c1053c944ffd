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
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from agent_cli.context.model import Compaction, ContextConfig, Summarizer
from agent_cli.context.store import MemoryStore
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.errors import AgentError, ContextOverflowError
from agent_cli.core.types import Message, ModelInfo, Request, Usage
from agent_cli.llm.models import model_info
from agent_cli.replay.cache_sim import CacheSimulator, SegmentMemo, request_segments
from agent_cli.replay.claude_code import Transcript, load_claude_code, tool_compactable
from agent_cli.replay.fidelity import EditCheck, FidelityProbe, fidelity
from agent_cli.replay.our_log import load_our_log, looks_like_our_log
from agent_cli.replay.recoverable import RecoverableCheck
from agent_cli.replay.report import (
    CompactionRecord,
    Integrity,
    ReplayResult,
    TokenTotals,
    percentile,
    reference,
)

POLICIES = ("default", "default+subtask", "none", "claude-code", "masking")
MIN_FIT_TOKENS = 5_000  # growth needed (our raw tokens) before the factor is fitted to the recording
STAND_IN_HEADER = (
    "[The recorded agent's {part} are not in its log. This stands in for {tokens} tokens of them, "
    "so that budgets and the prompt cache see them.]\n"
)


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


# -- calibration and estimator --------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """Token scale of a recorded session, fitted to its recorded usage."""

    factor: float  # calibration factor of our counter for this session's tokenizer
    overhead: int  # tokens of the recorded agent's system prompt + tools (not in the log)
    errors: tuple[float, ...] = ()  # the live estimator's |error| in % per request (see estimator_errors)
    per_model: dict[str, float] = field(default_factory=dict)  # the factor of each recorded model

    def scale_for(self, model: str) -> float:
        """A request recorded with `model` is counted in that model's tokens: its factor over the
        session's. A session that switched models (Opus and Haiku tokenize differently) is then
        compared with what it really cost, request by request."""
        return self.per_model.get(model, self.factor) / self.factor if self.factor else 1.0


def calibrate(transcript: Transcript, model: str) -> Calibration:
    """Fit our counter to the recorded usage, so replayed tokens are in the recorded model's tokens.

    The factor is the ratio of billed to estimated tokens over the growth between consecutive
    requests (same model, no compaction between): the unrecorded system prompt and tools cancel
    out. Fewer than MIN_FIT_TOKENS of growth: the model's default factor. The overhead is the first
    request's recorded input minus our estimate of its messages.
    """
    counter = TokenCounter(model)
    raw_of = _RawMessages(counter)
    billed = estimated = 0
    by_model: dict[str, list[int]] = {}
    previous: tuple[int, int, str, int] | None = None
    cuts = [b.position for b in transcript.boundaries]
    for request in transcript.requests:
        if request.usage is None:
            previous = None
            continue
        raw = raw_of(transcript.recorded_context(request))
        total = request.usage.total_input
        if previous is not None and previous[2] == request.model:
            if not any(previous[3] < cut <= request.position for cut in cuts) and raw > previous[1]:
                billed += total - previous[0]
                estimated += raw - previous[1]
                fit = by_model.setdefault(request.model, [0, 0])
                fit[0] += total - previous[0]
                fit[1] += raw - previous[1]
        previous = (total, raw, request.model, request.position)
    if estimated >= MIN_FIT_TOKENS and billed > 0:
        counter = TokenCounter(model, factor=billed / estimated)
    overhead = overhead_tokens(transcript, counter)
    per_model = {name: b / e for name, (b, e) in by_model.items() if e >= MIN_FIT_TOKENS and b > 0}
    if len(per_model) < 2:
        per_model = {}  # one model: the session factor is its factor
    return Calibration(counter.factor, overhead, tuple(estimator_errors(transcript, model)), per_model)


class _RawMessages:
    """Raw token counts of messages, each message object counted once (contexts share them)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._known: dict[int, tuple[Message, int]] = {}

    def __call__(self, messages: Sequence[Message]) -> int:
        total = 0
        for message in messages:
            found = self._known.get(id(message))
            if found is None:
                found = (message, self.counter.raw_message(message))
                self._known[id(message)] = found
            total += found[1]
        return total


def overhead_tokens(transcript: Transcript, counter: TokenCounter) -> int:
    """Tokens of the recorded agent's system prompt + tools: first request's input minus its messages."""
    for request in transcript.requests:
        if request.usage is not None and request.usage.total_input > 0:
            context = transcript.recorded_context(request)
            return max(0, request.usage.total_input - counter.messages(context))
    return 0


def estimator_errors(transcript: Transcript, model: str) -> list[float]:
    """|estimate - recorded| / recorded in %, per request with usage, as the live engine estimates.

    The estimate of a request is made before its usage is known: our count of the context the
    recorded agent really sent (its own compactions applied) plus the unrecorded overhead (from
    the first request), times the factor calibrated on the earlier responses (TokenCounter.calibrate).
    """
    counter = TokenCounter(model)
    raw_of = _RawMessages(counter)
    errors: list[float] = []
    overhead_raw: int | None = None
    for request in transcript.requests:
        if request.usage is None or request.usage.total_input <= 0:
            continue
        recorded = request.usage.total_input
        messages_raw = raw_of(transcript.recorded_context(request))
        if overhead_raw is None:
            overhead_raw = max(0, round(recorded / counter.factor) - messages_raw)
        raw = overhead_raw + messages_raw
        errors.append(abs(counter.scale(raw) - recorded) / recorded * 100)
        counter.calibrate(raw, recorded)
    return errors


def stand_in_system_prompt(tokens: int, counter: TokenCounter) -> str:
    """A system prompt that counts `tokens` with `counter` (a header plus neutral filler)."""
    header = STAND_IN_HEADER.format(tokens=tokens, part="system prompt")
    return _fill(header, tokens, lambda text: counter.scale(counter.raw_system(text)), counter.factor)


def stand_in_tool(tokens: int, counter: TokenCounter) -> dict[str, Any]:
    """A tool definition that counts `tokens` (the recorded agent's tools, which are not in its log)."""
    header = STAND_IN_HEADER.format(tokens=tokens, part="tool definitions")

    def tool(description: str) -> dict[str, Any]:
        return {"name": "recorded_tools", "description": description, "input_schema": {"type": "object"}}

    description = _fill(
        header, tokens, lambda text: counter.scale(counter.raw_tools([tool(text)])), counter.factor
    )
    return tool(description)


def _fill(header: str, tokens: int, count: Callable[[str], int], factor: float) -> str:
    """`header` plus neutral filler words until `count` gives `tokens` (or the closest above)."""
    words = max(0, round((tokens - count(header)) / factor))
    text = header + " the" * words
    for _ in range(12):  # converge: the factor rounds
        gap = tokens - count(text)
        if gap == 0 or (gap < 0 and words == 0):
            break
        step = round(gap / factor) or (1 if gap > 0 else -1)
        words = max(0, words + step)
        text = header + " the" * words
    return text


# -- integrity ----------------------------------------------------------------------------------


def api_orphans(messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(tool_uses never answered in the next user message, tool_results without their tool_use)."""
    orphan_uses = orphan_results = 0
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "assistant":
            uses = {b.get("id") for b in content if b.get("type") == "tool_use"}
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered: set[Any] = set()
            if following is not None and isinstance(following.get("content"), list):
                answered = {
                    b.get("tool_use_id") for b in following["content"] if b.get("type") == "tool_result"
                }
            if following is not None:  # a trailing call is answered by the response being requested
                orphan_uses += len(uses - answered)
        else:
            previous = messages[index - 1] if index else None
            calls: set[Any] = set()
            if (
                previous is not None
                and previous.get("role") == "assistant"
                and isinstance(previous.get("content"), list)
            ):
                calls = {b.get("id") for b in previous["content"] if b.get("type") == "tool_use"}
            orphan_results += sum(
                1 for b in content if b.get("type") == "tool_result" and b.get("tool_use_id") not in calls
            )
    return orphan_uses, orphan_results


# -- the replay -----------------------------------------------------------------------------------


def replay(
    path: str | Path,
    *,
    policy: str = "default",
    budget_tokens: int | None = None,
    config: ContextConfig | None = None,
    summarizer: Summarizer | None = None,
    dump_requests: Path | None = None,
) -> ReplayResult:
    """Replay a recorded session under `policy`. Raises ReplayError for files or options it cannot use."""
    return asyncio.run(
        replay_async(
            path,
            policy=policy,
            budget_tokens=budget_tokens,
            config=config,
            summarizer=summarizer,
            dump_requests=dump_requests,
        )
    )


async def replay_async(
    path: str | Path,
    *,
    policy: str = "default",
    budget_tokens: int | None = None,
    config: ContextConfig | None = None,
    summarizer: Summarizer | None = None,
    dump_requests: Path | None = None,
) -> ReplayResult:
    """The replay under `policy`, with its fidelity measured against the same edits under `none`
    (a second, unmanaged pass) and, with `dump_requests`, every simulated request written there."""
    if policy not in POLICIES:
        raise ReplayError(f"unknown policy {policy!r}", f"choose one of: {', '.join(POLICIES)}")
    if budget_tokens is not None and budget_tokens <= 0:
        raise ReplayError(f"--budget-tokens must be positive, not {budget_tokens}")
    transcript = load_transcript(path)
    if not transcript.requests:
        raise ReplayError(
            f"{path}: no recorded model responses, nothing to replay",
            "pass a Claude Code session (~/.claude/projects/*/*.jsonl) or a session's events.jsonl",
        )
    config = config or ContextConfig()
    if budget_tokens is not None:
        config = replace(config, budget_tokens=budget_tokens)
    model = model_info(transcript.model or "claude-opus-4-6")
    dump = _open_dump(dump_requests)
    try:
        result, checks = await _run(
            transcript, policy, replace(config, policy=policy), model, summarizer, dump
        )
    finally:
        if dump is not None:
            dump.close()
    unmanaged = checks
    if policy != "none" and checks:
        _, unmanaged = await _run(transcript, "none", replace(config, policy="none"), model, None, None)
    return replace(result, fidelity=fidelity(checks, unmanaged, result.weighted_input))


def _open_dump(path: Path | None) -> TextIO | None:
    if path is None:
        return None
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
) -> tuple[ReplayResult, list[EditCheck]]:
    from agent_cli.context.engine import ContextEngine
    from agent_cli.context.policy import make_policy

    calibration = calibrate(transcript, model.name)
    counter = TokenCounter(model.name, factor=calibration.factor)
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
        policy=make_policy(policy_name),
        clock=clock,
        tool_compactable=tool_compactable,
        counter=counter,
        on_compaction=recoverable.observe,
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
    cursor = 0
    for recorded in transcript.requests:
        for message in transcript.messages[cursor : recorded.position]:
            clock.now = max(clock.now, _time_of(message, recorded.timestamp))
            compactions += engine.append(message, ingest=True).compactions
        clock.now = max(clock.now, recorded.timestamp)
        compactions += await engine.maybe_compact()
        request = engine.build_request()
        segments = request_segments(request, counter, memo)
        tokens = sum(s.tokens for s in segments)
        tries = 0
        while tokens > model.context_window and tries < config.emergency_retries:
            tries += 1  # the API would answer "prompt is too long": the engine's T5 runs
            overflow = ContextOverflowError(
                kind="context_overflow",
                message=f"prompt is too long: {tokens} tokens > {model.context_window} maximum",
                tokens=tokens,
                maximum=model.context_window,
            )
            compactions.append(engine.emergency(overflow))
            request = engine.build_request()
            segments = request_segments(request, counter, memo)
            tokens = sum(s.tokens for s in segments)
        if tools and recorded.index == 0:
            sim.warm(segments, len(tools) - 1, clock.now)
        cached = sim.request(segments, clock.now)
        scale = calibration.scale_for(recorded.model)
        sizes.append(round(cached.total * scale))
        output = recorded.usage.output_tokens if recorded.usage else 0
        usage = _scaled(cached.usage(output), scale)
        totals = _add(totals, usage)
        probe.observe(recorded.index, request.messages, sizes[-1], _scaled_count(counter, scale))
        if dump is not None:
            write_request(dump, recorded.index, request, sizes[-1], usage)
        uses, results = api_orphans(request.messages)
        orphan_uses += uses
        orphan_results += results
        over_budget += int(cached.total > budget)
        for warning in engine.observe(request, cached.usage(output)):
            if warning not in warnings:
                warnings.append(warning)
        engine.append(transcript.messages[recorded.position], ingest=True)
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
    )
    return result, probe.checks


def write_request(out: TextIO, index: int, request: Request, tokens: int, usage: Usage) -> None:
    """One simulated request as one JSON line: what would be sent, its size and its cache effect."""
    line = {"request": index, "context_tokens": tokens, "usage": usage.to_json(), **request.to_api()}
    out.write(json.dumps(line, ensure_ascii=False) + "\n")


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
    )


def _add(totals: TokenTotals, usage: Usage) -> TokenTotals:
    return TokenTotals(
        uncached_input=totals.uncached_input + usage.input_tokens,
        cache_write=totals.cache_write + usage.cache_creation_input_tokens,
        cache_read=totals.cache_read + usage.cache_read_input_tokens,
        output=totals.output + usage.output_tokens,
    )
