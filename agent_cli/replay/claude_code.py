"""Read a Claude Code session (JSONL) into a `Transcript`: API-valid messages plus the requests.

Claude Code writes one line per content block; the lines of one API response share `message.id`
and carry the same `usage`. They are merged into one assistant `Message` (usage counted once).
Tool results may be written between two blocks of the same response (the tool ran while the
response was still streaming): they are placed in the user message that follows that response.

Skipped: subagent lines (`isSidechain`), `system` lines, Claude Code's compaction summary
(`isCompactSummary`, kept aside for the estimator), `isMeta` lines and UI bookkeeping
(`progress`, `file-history-snapshot`, `queue-operation`). A torn or corrupt line is skipped with a
warning. What the API would refuse (a result without its call, a call never answered) is repaired
and counted in `repairs`. `Transcript` and `RecordedRequest` are the replay's input for both
readers (this one and `our_log`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.types import Block, BlockMeta, Message, Trust, Usage, content_to_text

NO_RESULT = "[no result recorded]"

TOOL_NAMES: dict[str, str] = {
    "Read": "read_file",
    "Bash": "bash",
    "Grep": "grep",
    "Glob": "glob",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Write": "write_file",
    "LS": "ls",
    "TodoWrite": "todo_write",
}
NOT_COMPACTABLE = frozenset({"Task", "Agent", "todo_write", "todo", "recall"})


def our_tool_name(name: str) -> str:
    """Claude Code's tool name mapped to ours (unknown tools keep their name)."""
    return TOOL_NAMES.get(name, name)


def tool_compactable(name: str) -> bool:
    """Whether old results of `name` (ours or Claude Code's) may be cleared by compaction."""
    return our_tool_name(name) not in NOT_COMPACTABLE


@dataclass(frozen=True)
class RecordedRequest:
    """One API request: the response at `messages[position]`, its recorded usage and time."""

    index: int
    position: int  # index of the response in Transcript.messages
    message_id: str
    model: str
    timestamp: float  # seconds since the epoch (the response's first line)
    usage: Usage | None  # recorded usage (None when the log has none)


@dataclass(frozen=True)
class Boundary:
    """A compaction made by the recorded agent: from `position` on, it sent `summary` + the rest."""

    position: int  # index in Transcript.messages of the first message after the compaction
    summary: str
    trigger: str = ""
    timestamp: float = 0.0


@dataclass(frozen=True)
class Transcript:
    path: str
    source: Literal["claude_code", "agent"]
    messages: tuple[Message, ...]  # API-valid: user first, roles alternate, tool pairs intact
    requests: tuple[RecordedRequest, ...]
    boundaries: tuple[Boundary, ...] = ()
    warnings: tuple[str, ...] = ()
    torn_lines: int = 0
    repairs: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    recorded_views: tuple[tuple[Message, ...], ...] = ()  # per request, when the log holds them

    @property
    def model(self) -> str:
        """The model of most recorded requests ("" when unknown)."""
        models = [r.model for r in self.requests if r.model]
        return max(sorted(set(models)), key=models.count) if models else ""

    def recorded_context(self, request: RecordedRequest) -> list[Message]:
        """The messages the recorded agent really sent for `request` (its own compactions applied)."""
        if self.recorded_views:
            return list(self.recorded_views[request.index])
        start, summary = 0, ""
        for boundary in self.boundaries:
            if boundary.position <= request.position:
                start, summary = boundary.position, boundary.summary
        context = list(self.messages[start : request.position])
        if not summary:
            return context
        head = Block.text_block(summary, BlockMeta(trust=Trust.USER, source="compactor"))
        if context and context[0].role == "user":  # results whose calls were compacted away are not sent
            kept = tuple(b for b in context[0].blocks if b.type != "tool_result")
            return [Message("user", (head, *kept), context[0].turn), *context[1:]]
        return [Message("user", (head,)), *context]


# -- reading ----------------------------------------------------------------------------------


@dataclass
class Entry:
    """A message being gathered from log lines (mutable until `normalize`)."""

    role: Literal["user", "assistant"]
    blocks: list[Block]
    first_line: int
    message_id: str = ""
    model: str = ""
    timestamp: float = 0.0
    usage: Usage | None = None
    request: bool = True  # an assistant message that a model call produced (not a stand-in)


@dataclass
class _State:
    items: list[Entry] = field(default_factory=list)
    by_id: dict[str, Entry] = field(default_factory=dict)
    use_owner: dict[str, Entry] = field(default_factory=dict)  # tool_use id -> assistant item
    use_names: dict[str, str] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    seen_uuids: set[str] = field(default_factory=set)
    boundary_lines: list[tuple[int, str, float]] = field(default_factory=list)
    summaries: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    torn: int = 0
    repairs: int = 0
    own_sidechain: bool = False  # the file is a sub-agent's own transcript: its sidechain is the session

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def parse_timestamp(value: Any) -> float:
    """ISO 8601 (or epoch seconds) -> epoch seconds; 0.0 when missing or unreadable."""
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value:
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def read_jsonl(path: Path, warnings: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each readable line; torn / corrupt lines become warnings."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                warnings.append(f"{path.name}:{number}: torn or corrupt line skipped")
                continue
            if not isinstance(obj, dict):
                warnings.append(f"{path.name}:{number}: not a JSON object, skipped")
                continue
            yield number, obj


def load_claude_code(path: str | Path) -> Transcript:
    """Parse a Claude Code session file. Raises FileNotFoundError / IsADirectoryError only."""
    path = Path(path)
    state = _State()
    lines = list(read_jsonl(path, state.warnings))
    turns = [obj for _, obj in lines if obj.get("type") in ("user", "assistant")]
    state.own_sidechain = bool(turns) and all(obj.get("isSidechain") for obj in turns)
    if state.own_sidechain:
        state.warnings.append(
            "every message is a sub-agent's (isSidechain): replayed as the sub-agent's own session"
        )
    for number, obj in lines:
        _take_line(state, number, obj)
    state.torn = sum(1 for w in state.warnings if "torn or corrupt" in w or "not a JSON object" in w)
    messages, positions, repairs = normalize(state.items)
    state.repairs += repairs
    requests = recorded_requests(positions)
    boundaries = _boundaries(state, messages)
    if state.repairs:
        state.warnings.append(f"{state.repairs} repair(s) to make the recorded messages API-valid")
    return Transcript(
        path=str(path),
        source="claude_code",
        messages=tuple(m for m, _ in messages),
        requests=requests,
        boundaries=boundaries,
        warnings=tuple(state.warnings),
        torn_lines=state.torn,
        repairs=state.repairs,
        skipped=dict(state.skipped),
    )


def _take_line(state: _State, number: int, obj: dict[str, Any]) -> None:
    kind = obj.get("type")
    if kind == "system":
        if obj.get("subtype") == "compact_boundary":
            trigger = str((obj.get("compactMetadata") or {}).get("trigger", ""))
            state.boundary_lines.append((number, trigger, parse_timestamp(obj.get("timestamp"))))
        state.skip(f"system:{obj.get('subtype') or 'other'}")
        return
    if kind not in ("user", "assistant"):
        state.skip(str(kind or "untyped"))
        return
    if obj.get("isSidechain") and not state.own_sidechain:
        state.skip("sidechain")
        return
    message = obj.get("message")
    if not isinstance(message, dict):
        state.warnings.append(f"line {number}: {kind} line without a message, skipped")
        return
    if obj.get("isCompactSummary"):
        state.summaries.append((number, content_to_text(message.get("content"))))
        state.skip("compact_summary")
        return
    if obj.get("isMeta"):
        state.skip("meta")
        return
    if kind == "assistant" and message.get("model") == "<synthetic>":
        state.skip("synthetic")  # Claude Code's own stand-ins (API errors, "no response"): never sent
        return
    uuid = str(obj.get("uuid") or "")
    if uuid and uuid in state.seen_uuids:
        state.skip("duplicate")
        return
    if uuid:
        state.seen_uuids.add(uuid)
    ts = parse_timestamp(obj.get("timestamp"))
    try:
        blocks = _blocks(message.get("content"), kind, ts)
    except (ValueError, TypeError, AttributeError) as exc:
        state.warnings.append(f"line {number}: unreadable content ({exc}), skipped")
        return
    if kind == "assistant":
        _take_assistant(state, number, message, blocks, ts)
    else:
        _take_user(state, number, blocks, ts)


def _blocks(content: Any, role: str, ts: float) -> list[Block]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    out: list[Block] = []
    for raw in content:
        if not isinstance(raw, dict):
            continue
        kind = raw.get("type")
        if kind not in ("text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"):
            continue  # server tool blocks and the like: not replayable
        block = Block.from_json({k: v for k, v in raw.items() if k != "meta"})
        if block.type == "text" and not block.text.strip():
            continue  # the API refuses whitespace-only text blocks
        if role == "assistant":
            name = our_tool_name(block.name) if block.type == "tool_use" else ""
            meta = BlockMeta(trust=Trust.ASSISTANT, source="assistant", created_at=ts, tool_name=name)
        elif block.type == "tool_result":
            meta = BlockMeta(trust=Trust.TOOL, source="tool", created_at=ts)
        else:
            meta = BlockMeta(trust=Trust.USER, source="user", created_at=ts)
        out.append(replace(block, meta=meta))
    return out


def _take_assistant(
    state: _State, number: int, message: dict[str, Any], blocks: list[Block], ts: float
) -> None:
    message_id = str(message.get("id") or f"line-{number}")
    item = state.by_id.get(message_id)
    if item is None:
        item = Entry("assistant", [], number, message_id, str(message.get("model") or ""), ts)
        state.by_id[message_id] = item
        state.items.append(item)
    if "usage" in message:
        usage = Usage.from_json(message.get("usage"))
        if item.usage is None or usage.output_tokens >= item.usage.output_tokens:
            item.usage = usage  # the same input counts on every line; the last has the final output
    for block in blocks:
        if block.type == "tool_use":
            if block.id in state.use_owner:
                continue
            state.use_owner[block.id] = item
            state.use_names[block.id] = block.name
        item.blocks.append(block)


def _take_user(state: _State, number: int, blocks: list[Block], ts: float) -> None:
    for block in blocks:
        if block.type == "tool_result":
            owner = state.use_owner.get(block.tool_use_id)
            if owner is None:
                state.repairs += 1
                state.warnings.append(f"line {number}: result for unknown call {block.tool_use_id} dropped")
                continue
            if block.tool_use_id in state.answered:
                state.skip("duplicate_result")
                continue
            state.answered.add(block.tool_use_id)
            name = our_tool_name(state.use_names.get(block.tool_use_id, ""))
            block = block.with_meta(tool_name=name, compactable=tool_compactable(name))
            _user_after(state, owner, number, ts).blocks.append(block)
        else:
            last = state.items[-1] if state.items else None
            if last is None or last.role != "user":
                last = Entry("user", [], number, timestamp=ts)
                state.items.append(last)
            last.blocks.append(block)


def _user_after(state: _State, owner: Entry, number: int, ts: float) -> Entry:
    """The user item right after `owner` (created when the next item is a response or nothing)."""
    index = len(state.items) - 1
    while index >= 0 and state.items[index] is not owner:
        index -= 1
    following = state.items[index + 1] if index + 1 < len(state.items) else None
    if following is not None and following.role == "user":
        return following
    item = Entry("user", [], number, timestamp=ts)
    state.items.insert(index + 1, item)
    return item


def recorded_requests(positions: Iterable[tuple[int, Entry]]) -> tuple[RecordedRequest, ...]:
    return tuple(
        RecordedRequest(i, pos, item.message_id, item.model, item.timestamp, item.usage)
        for i, (pos, item) in enumerate(positions)
    )


# -- making the sequence API-valid --------------------------------------------------------------


def normalize(items: Iterable[Entry]) -> tuple[list[tuple[Message, int]], list[tuple[int, Entry]], int]:
    """Merge, order and repair. Returns ([(message, first_line)], [(position, response item)], repairs)."""
    repairs = 0
    merged: list[Entry] = []
    for item in items:
        if not item.blocks and item.role == "user":
            continue
        if merged and merged[-1].role == item.role == "user":
            merged[-1].blocks.extend(item.blocks)
            continue
        if merged and merged[-1].role == item.role == "assistant":
            # two responses in a row (a user line between them was skipped): keep both requests
            merged.append(
                Entry("user", [Block.text_block("[continue]")], item.first_line, timestamp=item.timestamp)
            )
            repairs += 1
        merged.append(item)
    if merged and merged[0].role == "assistant":
        merged.insert(0, Entry("user", [Block.text_block("[session start]")], merged[0].first_line))
        repairs += 1

    out: list[tuple[Message, int]] = []
    positions: list[tuple[int, Entry]] = []
    turn = 0
    for index, item in enumerate(merged):
        if item.role == "assistant":
            blocks = item.blocks or [
                Block.text_block("(empty response)", BlockMeta(trust=Trust.ASSISTANT, source="assistant"))
            ]
            following = merged[index + 1] if index + 1 < len(merged) else None
            if following is not None:
                answered = {b.tool_use_id for b in following.blocks if b.type == "tool_result"}
                for use in (b for b in blocks if b.type == "tool_use"):
                    if use.id not in answered:
                        meta = BlockMeta(trust=Trust.TOOL, source="tool", tool_name=use.meta.tool_name)
                        following.blocks.insert(0, Block.tool_result(use.id, NO_RESULT, meta=meta))
                        repairs += 1
            if item.request:
                positions.append((len(out), item))
            out.append((Message("assistant", tuple(blocks), turn), item.first_line))
            continue
        previous = merged[index - 1] if index else None
        calls = {b.id for b in previous.blocks if b.type == "tool_use"} if previous else set()
        results = [b for b in item.blocks if b.type == "tool_result"]
        kept = [b for b in results if b.tool_use_id in calls]
        repairs += len(results) - len(kept)
        others = [b for b in item.blocks if b.type != "tool_result"]
        if any(b.type == "text" and b.meta.source == "user" for b in others):
            turn += 1
        blocks = kept + others
        if not blocks:
            blocks = [Block.text_block("[no content recorded]")]
            repairs += 1
        out.append((Message("user", tuple(blocks), turn), item.first_line))
    return out, positions, repairs


def _boundaries(state: _State, messages: list[tuple[Message, int]]) -> tuple[Boundary, ...]:
    out: list[Boundary] = []
    for line, trigger, ts in state.boundary_lines:
        summary = next((text for n, text in state.summaries if n > line), "")
        position = next((i for i, (_, first) in enumerate(messages) if first > line), len(messages))
        out.append(Boundary(position=position, summary=summary, trigger=trigger, timestamp=ts))
    return tuple(out)
