"""Request assembly: five layers, deterministic, cache-aware (DESIGN §4).

1 system (static, no clock) · 2 tools (fixed order) · 3 user context and 4 messages (the view; the
engine placed the user context and environment in the first user message at ingest) · 5 attachments
(merged into user messages at ingest). `build` is pure: the same view gives byte-identical requests,
so the prompt cache can read what the previous request wrote.
"""

from __future__ import annotations

import copy
import platform
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli.context.cache import (
    REUSE_LAST,
    REUSE_PREVIOUS,
    REUSE_STAIR,
    REUSE_SUMMARY,
    REUSE_SYSTEM,
    Candidate,
    cache_control,
    can_anchor,
    choose_breakpoints,
    request_ends,
    stair_index,
)
from agent_cli.context.invariants import is_summary
from agent_cli.context.tokens import REQUEST_OVERHEAD, TokenCounter
from agent_cli.core.tags import escape_tags
from agent_cli.core.types import Block, Message, Request

HEAD_CHARS = 200  # of .git/HEAD, which the repository wrote: a branch name, not a paragraph
EMPTY_MESSAGE_TEXT = "(no content)"


class Assembler:
    """Builds requests from the view. Holds the static layers: system prompt, tools, user context."""

    def __init__(
        self,
        system_prompt: str,
        tools: list[dict[str, Any]],
        user_context: str = "",
        *,
        counter: TokenCounter | None = None,
        skills: str = "",
    ) -> None:
        self.system_prompt = system_prompt
        self.skills = skills  # the skill listing: names and descriptions, a system block of its own
        self.set_tools(tools)
        self.user_context = user_context  # placed by the engine in the first user message
        self.counter = counter or TokenCounter()
        self._api_cache: dict[int, tuple[Message, dict[str, Any], list[int]]] = {}

    def set_tools(self, tools: list[dict[str, Any]]) -> None:
        self.tools = sorted((_own_copy(t) for t in tools), key=lambda t: str(t.get("name", "")))

    def system_blocks(self) -> list[dict[str, Any]]:
        texts = (self.system_prompt, self.skills)
        return [{"type": "text", "text": text} for text in texts if text.strip()]

    def raw_skills(self) -> int:
        """Raw tokens of the skill listing's system block (0 without one)."""
        return self.counter.raw_system(self.skills) if self.skills.strip() else 0

    def raw_base(self) -> int:
        """Raw tokens of everything before the messages: request overhead, tools, system."""
        return (
            REQUEST_OVERHEAD
            + self.counter.raw_tools(self.tools)
            + self.counter.raw_system(self.system_blocks())
        )

    def _api_messages(self, messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[list[int]]]:
        """API-shaped messages. Messages are immutable, so each is converted once and reused by later
        requests (keyed by identity; the cache keeps only the current view's messages)."""
        known = self._api_cache
        fresh: dict[int, tuple[Message, dict[str, Any], list[int]]] = {}
        api: list[dict[str, Any]] = []
        placed: list[list[int]] = []
        for message in messages:
            hit = known.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, *_api_message(message))
            fresh[id(message)] = hit
            api.append(hit[1])
            placed.append(hit[2])
        self._api_cache = fresh
        return api, placed

    def build(
        self,
        messages: Sequence[Message],
        *,
        model: str,
        max_tokens: int,
        ttl: str = "5m",
        previous_last_index: int | None = None,
        cache_min_tokens: int = 1024,
        message_tokens: Sequence[int] | None = None,
    ) -> Request:
        """The request for `messages`; `message_tokens` (one count per message) spares a recount."""
        system = self.system_blocks()
        tools = copy.deepcopy(self.tools)
        api, placed = self._api_messages(messages)
        counts = (
            list(message_tokens)
            if message_tokens is not None
            else [self.counter.message(m) for m in messages]
        )
        if len(counts) != len(messages):
            raise ValueError(f"{len(counts)} token counts for {len(messages)} messages")
        base = self.counter.scale(self.raw_base())
        cumulative: list[int] = []
        running = base
        for count in counts:
            running += count
            cumulative.append(running)

        candidates: list[Candidate] = []
        if system:
            candidates.append(Candidate(-1, len(system) - 1, base, REUSE_SYSTEM, "system"))
        elif tools:
            candidates.append(Candidate(-2, len(tools) - 1, base, REUSE_SYSTEM, "system"))
        summary = _latest_summary(messages, placed, api)
        if summary is not None:
            candidates.append(
                Candidate(summary[0], summary[1], cumulative[summary[0]], REUSE_SUMMARY, "summary")
            )
        stair = None
        if summary is None:
            ends = request_ends([str(m.get("role")) for m in api])
            stair = stair_index([_blocks(m) for m in api], previous_last_index, ends)
        if stair is not None and _last_anchor(api[stair]) >= 0:
            candidates.append(
                Candidate(stair, _last_anchor(api[stair]), cumulative[stair], REUSE_STAIR, "stair")
            )
        if previous_last_index is not None and 0 <= previous_last_index < len(api):
            block = _last_anchor(api[previous_last_index])
            candidates.append(
                Candidate(
                    previous_last_index, block, cumulative[previous_last_index], REUSE_PREVIOUS, "previous"
                )
            )
        if api:
            candidates.append(
                Candidate(len(api) - 1, _last_anchor(api[-1]), cumulative[-1], REUSE_LAST, "last")
            )

        chosen = choose_breakpoints(candidates, cache_min_tokens=cache_min_tokens)
        marker = cache_control(ttl)
        for point in chosen:
            if point.message == -2:
                tools[point.block]["cache_control"] = dict(marker)
            elif point.message == -1:
                system[point.block]["cache_control"] = dict(marker)
            else:  # the cached dicts are shared between requests: mark a copy
                message = api[point.message] = dict(api[point.message])
                content = message["content"] = list(message["content"])
                content[point.block] = {**content[point.block], "cache_control": dict(marker)}
        metadata = {
            "last_index": len(api) - 1,
            "breakpoints": [f"{p.reason}@{p.message}.{p.block}" for p in chosen],
        }
        return Request(
            model=model, system=system, messages=api, tools=tools, max_tokens=max_tokens, metadata=metadata
        )


def _own_copy(tool: dict[str, Any]) -> dict[str, Any]:
    """A copy of a tool's schema; an MCP server's (`mcp__…`) with its descriptions escaped: a
    server's words cannot forge one of our tags either (core/tags.py)."""
    copied = copy.deepcopy(tool)
    return _escaped(copied) if str(tool.get("name", "")).startswith("mcp__") else copied


def _escaped(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: escape_tags(v) if k in ("description", "title") and isinstance(v, str) else _escaped(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return value


def _api_message(message: Message) -> tuple[dict[str, Any], list[int]]:
    """The API shape of one message, and where each of its blocks landed (-1: left out).

    Left out: thinking blocks without a signature (the API refuses them) and empty text blocks.
    """
    content: list[dict[str, Any]] = []
    where: list[int] = []
    for block in message.blocks:
        if _sendable(block):
            where.append(len(content))
            content.append(block.to_api())
        else:
            where.append(-1)
    if not content:
        content.append({"type": "text", "text": EMPTY_MESSAGE_TEXT})
    return {"role": message.role, "content": content}, where


def _sendable(block: Block) -> bool:
    if block.type == "thinking":
        return bool(block.signature)
    if block.type == "text":
        return bool(block.text.strip())
    return True


def _blocks(message: dict[str, Any]) -> int:
    content = message["content"]
    return len(content) if isinstance(content, list) else 1


def _last_anchor(message: dict[str, Any]) -> int:
    content = message["content"]
    for index in range(len(content) - 1, -1, -1):
        if can_anchor(content[index]):
            return index
    return -1


def _latest_summary(
    messages: Sequence[Message], placed: list[list[int]], api: list[dict[str, Any]]
) -> tuple[int, int] | None:
    for i in range(len(messages) - 1, -1, -1):
        for j in range(len(messages[i].blocks) - 1, -1, -1):
            at = placed[i][j]
            block = messages[i].blocks[j]
            stands_in = is_summary(block) or block.meta.source == "memory"  # T4/T5 summary, T2 note
            if at >= 0 and stands_in and can_anchor(api[i]["content"][at]):
                return i, at
    return None


# -- the environment (the user context is read by settings/memory_files.py) ----------------------


def environment_text(workspace: Path, now: float | datetime) -> str:
    """cwd, git branch, platform and date: volatile facts kept out of the static system prompt."""
    when = now if isinstance(now, datetime) else datetime.fromtimestamp(now)
    workspace = Path(workspace).resolve()
    lines = [f"Working directory: {workspace}"]
    branch = git_branch(workspace)
    lines.append(f"Git: {branch}" if branch else "Git: not a git repository")
    lines.append(f"Platform: {sys.platform} ({platform.system()} {platform.release()})".rstrip())
    lines.append(f"Date: {when.date().isoformat()}")
    return "\n".join(lines)


def git_branch(workspace: Path) -> str:
    """`branch main`, `detached HEAD at 1a2b3c4d5e6f`, or "" outside a repository (reads .git/HEAD)."""
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                pointer = dot_git.read_text(encoding="utf-8", errors="replace").strip()
                if not pointer.startswith("gitdir:"):
                    return ""
                git_dir = Path(pointer.split(":", 1)[1].strip())
                dot_git = git_dir if git_dir.is_absolute() else directory / git_dir
            elif not dot_git.is_dir():
                continue
            head = (dot_git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""
        head = head.splitlines()[0][:HEAD_CHARS] if head else ""  # the repository wrote it: one short line
        if head.startswith("ref:"):
            ref = head.split(":", 1)[1].strip()
            return f"branch {ref.removeprefix('refs/heads/')}"
        return f"detached HEAD at {head[:12]}" if head else ""
    return ""
