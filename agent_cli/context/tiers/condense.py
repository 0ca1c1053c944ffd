"""Condensing material larger than the summarizer takes: in chunks, each one updating the running
summary, so a summary is written from the whole text and never from a head and a tail.

The material is a list of pieces (one rendered message each, say). Pieces are packed into chunks of at
most the summarizer's input (`summarizer_input_tokens`, less the prompt and the running summary); a
piece larger than a chunk is split at line ends (inside a line only when one line alone is larger), so
nothing is cut out. The first chunk goes with the `fresh` template (or `update` when a previous summary
is given); every later chunk with `update`, whose `{previous_summary}` is the summary so far.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from agent_cli.context.model import Summarizer, TokenCount
from agent_cli.context.tiers.rendering import fill, redact, split_prompt

MIN_CHUNK_TOKENS = 1_000
NO_PREVIOUS = "(none)"


@dataclass(frozen=True)
class Templates:
    """Prompt templates (prompts/*.md: 'system', '---', 'request'); `{transcript}` receives the chunk."""

    fresh: str
    update: str


async def condense(
    pieces: Sequence[str],
    *,
    templates: Templates,
    summarizer: Summarizer,
    counter: TokenCount,
    limit: int,
    values: dict[str, str] | None = None,
    previous: str = "",
) -> str:
    """The summary of all of `pieces` (an update of `previous` when given). Raises when the summarizer
    fails or returns nothing (the caller falls back)."""
    if not templates.fresh.strip() or not templates.update.strip():
        raise ValueError("a summarizer prompt template is missing or empty")
    queue = deque(p for p in pieces if p)
    running = previous
    if not queue:
        if running:
            return running
        raise ValueError("nothing to summarize")
    while queue:
        template = templates.update if running else templates.fresh
        fixed = dict(values or {}, previous_summary=running or NO_PREVIOUS)
        room = max(MIN_CHUNK_TOKENS, limit - counter.text(fill(template, **fixed)))
        chunk = take_chunk(queue, room, counter)
        system, request = split_prompt(template)
        if "{transcript}" not in request:
            request += "\n\n{transcript}"
        text = (await summarizer(fill(system, **fixed), fill(request, transcript=chunk, **fixed))).strip()
        if not text:
            raise ValueError("the summarizer returned an empty summary")
        running = redact(text)
    return running


def take_chunk(queue: deque[str], room: int, counter: TokenCount) -> str:
    """Pieces from the front of `queue` joined while they fit in `room` tokens; a first piece that
    alone is too large is split and its rest put back in front."""
    taken: list[str] = []
    used = 0
    while queue:
        size = counter.text(queue[0])
        if size <= room - used:
            taken.append(queue.popleft())
            used += size + 1
            continue
        if taken:
            break
        parts = split_text(queue.popleft(), room, counter)
        queue.extendleft(reversed(parts[1:]))
        taken.append(parts[0])
        break
    return "\n\n".join(taken)


def split_text(text: str, room: int, counter: TokenCount) -> list[str]:
    """`text` in consecutive parts of at most about `room` tokens each, cut at line ends where possible;
    joined back they are exactly `text`."""
    tokens = max(1, counter.text(text))
    budget = max(1, int(len(text) * room / tokens * 0.9))  # chars per part, with a margin
    parts: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + budget)
        if end < len(text):
            cut = text.rfind("\n", start, end)
            if cut > start + budget // 4:
                end = cut + 1
        parts.append(text[start:end])
        start = end
    return parts
