"""Compaction at a sub-task boundary: when a todo item is marked completed, the tool traffic of that
item — the tool pairs between the todo_write that put it in progress and the one that completed it —
becomes one T3 region, right then, when nothing in it is still needed for the item.

The region is summarized by the cheap model (prompts/region.md), as T3 does; without a summarizer (or
when it fails) the summary is one line per call (tool, target, outcome, ref), so the work stays
findable. Only pure tool-result messages are rewritten: the person's words, the assistant's text and
every tool_use stay verbatim, and the originals are recallable by the region's ref.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.context.eviction import CACHE_READ, REWRITE, forecast
from agent_cli.context.model import Compaction, TierContext, TierName
from agent_cli.context.tiers.digest import digest_line
from agent_cli.context.tiers.markers import make_ref
from agent_cli.context.tiers.micro import is_cache_cold
from agent_cli.context.tiers.pricing import requests_made
from agent_cli.context.tiers.region import (
    MIN_RUN_TOKENS,
    Run,
    _pure_results,
    _replaceable,
    rewrite_results,
    summarize_run,
)
from agent_cli.context.tiers.rendering import render_transcript
from agent_cli.context.tiers.selection import tool_uses_by_id
from agent_cli.context.tiers.splice import tokens_of
from agent_cli.core.types import Block, Message

log = logging.getLogger(__name__)

TODO_TOOL = "todo_write"


@dataclass(frozen=True)
class Boundary:
    start: int  # the work of the finished item(s) is in view[start:end]
    end: int
    items: tuple[str, ...]  # what was completed


def transitions(use: Block) -> dict[str, str] | None:
    """The item statuses a call sets: a todo_write's whole list, or a task tracker's shell command
    (`bd update ID --status in_progress`, `bd close ID...`: beads, as real sessions use it). None when
    the call is not about sub-tasks."""
    if use.name in (TODO_TOOL, "TodoWrite"):  # ours, or Claude Code's in a replayed session
        items = use.input.get("todos") if isinstance(use.input, dict) else None
        out: dict[str, str] = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("content"), str):
                out[item["content"].strip()] = str(item.get("status", ""))
        return out
    command = use.input.get("command") if use.name.lower() == "bash" and isinstance(use.input, dict) else None
    return tracker_commands(command) if isinstance(command, str) else None


def message_transitions(message: Message) -> list[dict[str, str]]:
    """Every status change a message records: its calls, and the digest lines of calls that T1 or
    digest folded into it (`- bash bd close X → ok …`), so a compacted history still has its items."""
    if message.role != "assistant":
        return []
    out = [t for u in message.tool_uses() if (t := transitions(u)) is not None]
    for block in message.blocks:
        if block.type == "text" and block.meta.tag == "tool-digest":
            out += [t for line in block.text.splitlines() if (t := tracker_commands(line))]
    return out


def tracker_commands(command: str) -> dict[str, str] | None:
    if "bd " not in command:
        return None
    found: dict[str, str] = {}
    for match in _BD_START.finditer(command):
        found[match.group(1)] = "in_progress"
    for match in _BD_CLOSE.finditer(command):
        for item in match.group(1).split():
            found[item] = "completed"
    return found or None


_BD_START = re.compile(r"\bbd\s+update\s+([\w.-]+)\s+--status[= ]in_progress\b")
_BD_CLOSE = re.compile(r"\bbd\s+close\s+((?:[\w.-]+\s*)+?)(?=\s--|\s*(?:&&|;|\||→|$))")


def finished_item(view: Sequence[Message]) -> Boundary | None:
    """The span of the item(s) the latest response marked completed, or None when it completed none."""
    if len(view) < 3 or view[-1].role != "user" or view[-2].role != "assistant":
        return None
    answered = {b.tool_use_id for b in view[-1].tool_results()}
    latest = [t for u in view[-2].tool_uses() if u.id in answered and (t := transitions(u))]
    if not any(s == "completed" for t in latest for s in t.values()):
        return None
    state: dict[str, tuple[str, int]] = {}  # item -> (status, index of the message that set it)
    last_update = 0  # the message of the latest tracker call before this response
    for index in range(1, len(view) - 2):
        for changes in message_transitions(view[index]):
            last_update = index
            for item, status in changes.items():
                if state.get(item, ("", 0))[0] != status:
                    state[item] = (status, index)
    done = [
        i for t in latest for i, s in t.items() if s == "completed" and state.get(i, ("",))[0] != "completed"
    ]
    if not done or not last_update:
        return None
    began = [state[i][1] if state.get(i, ("",))[0] == "in_progress" else last_update for i in done]
    start, end = min(began) + 2, len(view) - 2  # after the pair that began it, up to the one that ends it
    return Boundary(start, end, tuple(done)) if start < end else None


class SubtaskCompact:
    name: TierName = "T3"

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        boundary = finished_item(view)
        if boundary is None:
            return None
        uses = tool_uses_by_id(view)
        keep = ctx.config.micro_keep_chars
        pairs = [
            index
            for index in range(boundary.start + 1, boundary.end)
            if view[index - 1].role == "assistant"
            and view[index - 1].tool_uses()
            and _pure_results(view[index])
            and all(ctx.tool_compactable(b.name) for b in view[index - 1].tool_uses())
        ]
        worth = sum(ctx.counter.text(b.text) for i in pairs for b in view[i].blocks if _replaceable(b, keep))
        if worth < MIN_RUN_TOKENS or not pays_off(view, pairs[0], worth, ctx):
            return None
        messages = [m for i in pairs for m in (view[i - 1], view[i])]
        summary = await self._summary(messages, Run(boundary.start, boundary.end, worth), ctx, uses)
        original = render_transcript(messages, uses=uses)
        ref = make_ref("subtask", original)
        label = "finished: " + "; ".join(item[:80] for item in boundary.items)
        spans = rewrite_results(view, pairs, summary, ref, uses, keep, label)
        saved = sum(ctx.counter.message(view[s.start]) - ctx.counter.message(s.messages[0]) for s in spans)
        if saved <= 0:
            return None
        return Compaction(
            tier="T3",
            trigger=trigger,
            replacements=tuple(spans),
            before=ctx.used,
            after=ctx.used - saved,
            refs=(ref,),
            summary=summary,
            originals={ref: original},
        )

    async def _summary(
        self, messages: list[Message], run: Run, ctx: TierContext, uses: dict[str, Block]
    ) -> str:
        if ctx.summarizer is not None:
            try:
                template = ctx.prompts("region")
                if template.strip():
                    return await summarize_run(messages, run, ctx, ctx.summarizer, template, uses)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the digest below loses nothing (refs)
                log.warning("sub-task summary failed (%s); one line per call instead", exc)
        return digest_lines(messages)


def pays_off(view: Sequence[Message], first: int, worth: int, ctx: TierContext) -> bool:
    """T1's economics (tiers/micro.py): the tokens saved, read at 0.1x by every expected later request,
    must outweigh rewriting the cache from the first changed message (free when the cache is cold)."""
    if is_cache_cold(ctx):
        return True
    saved = worth * (1 - ctx.config.region_ratio)
    rewrite = tokens_of(view[first:], ctx.counter) - saved
    requests = forecast(requests_made(view), ctx.config.forecast_ratio, ctx.config.forecast_cap)
    return saved * CACHE_READ * requests > rewrite * REWRITE


def digest_lines(messages: Sequence[Message]) -> str:
    results: dict[str, Any] = {b.tool_use_id: b for m in messages for b in m.tool_results()}
    lines = [digest_line(u, results.get(u.id)) for m in messages for u in m.tool_uses()]
    return "Calls made for this item (outputs recallable by ref):\n" + "\n".join(lines)
