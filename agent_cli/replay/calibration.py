"""Fit the replay to a recorded session: our counter's scale (per model), the unrecorded overhead
(system prompt and tools), the live estimator's error, and stand-ins of the right token count."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_cli.context.tokens import TokenCounter
from agent_cli.core.types import Message
from agent_cli.replay.claude_code import Transcript
from agent_cli.replay.thinking_turns import first_kept, turns_kept, without_thinking

MIN_FIT_TOKENS = 5_000  # growth needed (our raw tokens) before the factor is fitted to the recording
STAND_IN_HEADER = (
    "[The recorded agent's {part} are not in its log. This stands in for {tokens} tokens of them, "
    "so that budgets and the prompt cache see them.]\n"
)


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
    out. Fewer than MIN_FIT_TOKENS of growth: the model's default factor. Contexts are counted as
    the API reads them (thinking_turns.py). The overhead: `overhead_tokens`.
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
        raw = raw_of(transcript.recorded_context(request), turns_kept(request.model))
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
    per_model = {name: b / e for name, (b, e) in by_model.items() if e >= MIN_FIT_TOKENS and b > 0}
    if len(per_model) < 2:
        per_model = {}  # one model: the session factor is its factor
    fitted = Calibration(counter.factor, 0, (), per_model)
    overhead = overhead_tokens(transcript, counter, fitted.scale_for)
    return replace(fitted, overhead=overhead, errors=tuple(estimator_errors(transcript, model)))


class _RawMessages:
    """Raw token counts of a context as the API reads it (`turns`: replay/thinking_turns.py), each
    message object counted once either way (contexts share them)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._known: dict[tuple[int, bool], tuple[Message, int]] = {}

    def __call__(self, messages: Sequence[Message], turns: int = 0) -> int:
        total = 0
        first = first_kept(messages, turns)
        for index, message in enumerate(messages):
            key = (id(message), index < first)
            found = self._known.get(key)
            if found is None:
                found = (message, self.counter.raw_message(without_thinking(message) if key[1] else message))
                self._known[key] = found
            total += found[1]
        return total


def overhead_tokens(
    transcript: Transcript, counter: TokenCounter, scale_for: Callable[[str], float] = lambda _: 1.0
) -> int:
    """Tokens of the recorded agent's system prompt + tools (not in its log): the median, over its
    requests, of the recorded input (in this session's tokens) less our count of the context it
    sent. One request is a poor sample: what the recorded agent sends beyond its log changes within
    a session (bench/residuals.py, bench/RESULTS.md, stop 34)."""
    raw_of = _RawMessages(counter)
    rest: list[float] = []
    for request in transcript.requests:
        if request.usage is None or request.usage.total_input <= 0:
            continue
        sent = raw_of(transcript.recorded_context(request), turns_kept(request.model))
        rest.append(request.usage.total_input / scale_for(request.model) - counter.scale(sent))
    return max(0, round(statistics.median(rest))) if rest else 0


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
        messages_raw = raw_of(transcript.recorded_context(request), turns_kept(request.model))
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
