"""What every tier shares: grouping, the tail, transcripts for a summarizer, redaction, refs, splicing.

Conventions the tiers rely on (all visible in the log, so a replayed view behaves the same):
- The person's words are user text blocks with `meta.source == "user"` and no `meta.tag`.
- Blocks the engine itself writes carry a `meta.tag`: the summary (`summary`), the ledger (`ledger`),
  the session-memory note (`session-memory`), the truncation marker (`truncated`) and the short
  assistant acknowledgement that keeps roles alternating (`compaction-ack`). Those with
  `meta.source == "compactor"` or `"memory"` are never fed to a summarizer as raw material.
- After T2/T4/T5 the view reads `[head, ack (assistant), bridge (user), tail...]`: the head (first user
  message) is untouched, so its cached bytes stay valid.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent_cli.context.model import ContextConfig, SpanReplacement, TierContext, TokenCount
from agent_cli.core.types import Block, BlockMeta, Message, Source, Trust

TAG_SUMMARY = "summary"
TAG_LEDGER = "ledger"
TAG_MEMORY = "session-memory"
TAG_MARKER = "truncated"
TAG_ACK = "compaction-ack"
NOT_MATERIAL_TAGS = frozenset({TAG_SUMMARY, TAG_LEDGER, TAG_MEMORY, TAG_MARKER, TAG_ACK})

ACK_TEXT = "(Earlier turns were compacted; the reference material that follows stands in for them.)"
CLEARED_PREFIX = "[cleared: "
REGION_PREFIX = "[region summary"
POINTER_PREFIX = "[summarized in the region summary"
COMPACTED_PREFIXES = (CLEARED_PREFIX, REGION_PREFIX, POINTER_PREFIX)
TARGET_KEYS = ("path", "file_path", "command", "pattern", "url", "query", "ref")
PATH_KEYS = frozenset({"path", "file_path"})


# -- refs and secrets --------------------------------------------------------------------------------


def make_ref(prefix: str, content: str) -> str:
    """A stable short id: the same content always gets the same ref (safe as a file name)."""
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{prefix}-{digest}"


def short_ref(tool_use_id: str) -> str:
    """A short, stable ref for a tool call's output: it is repeated in every later request, and a
    provider's id (`toolu_01LX8KZFM6Z7TecXCsyGYKow`) costs ~15 tokens where this costs ~4."""
    digest = base64.b32encode(hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).digest())
    return "r" + digest[:9].decode("ascii").lower()


_ASSIGN = r"\s*[=:]\s*)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;]+)"  # `NAME=value` / `name: "value"`
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(sk-(?:ant-)?[A-Za-z0-9_\-]{16,})"), "[REDACTED:api-key]"),
    (re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,})"), "[REDACTED:github-token]"),
    (re.compile(r"\b(github_pat_[A-Za-z0-9_]{20,})"), "[REDACTED:github-token]"),
    (re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b"), "[REDACTED:aws-key]"),
    (re.compile(r"\b(xox[abprs]-[A-Za-z0-9\-]{10,})"), "[REDACTED:slack-token]"),
    (re.compile(r"\b(AIza[0-9A-Za-z_\-]{35})"), "[REDACTED:google-key]"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*"), r"\1[REDACTED]"),
    (
        re.compile(
            rf"\b([A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN(?!S)|API_?KEY|ACCESS_KEY)[A-Z0-9_]*{_ASSIGN}"
        ),
        r"\1[REDACTED]",
    ),
    (
        re.compile(rf"(?i)\b(\w*?(?:password|passwd|secret|api_?key|access_?token|auth_?token){_ASSIGN}"),
        r"\1[REDACTED]",
    ),
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        "[REDACTED:private-key]",
    ),
)


def redact(text: str) -> str:
    """`text` with anything that looks like a secret replaced by a [REDACTED…] marker."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# -- classifying blocks and messages -----------------------------------------------------------------


def is_person_block(block: Block) -> bool:
    return block.type == "text" and block.meta.source == "user" and not block.meta.tag


def is_person_message(message: Message) -> bool:
    """A user message carrying the person's own words (not only tool results or injections)."""
    return message.role == "user" and any(is_person_block(b) for b in message.blocks)


def is_summary_block(block: Block) -> bool:
    """A block that is itself a summary or engine scaffolding: never raw material for a summarizer."""
    return block.meta.source in ("compactor", "memory") or block.meta.tag in NOT_MATERIAL_TAGS


def is_compacted_result(block: Block) -> bool:
    return block.type == "tool_result" and block.text.startswith(COMPACTED_PREFIXES)


def last_person_index(view: Sequence[Message]) -> int | None:
    for i in range(len(view) - 1, -1, -1):
        if is_person_message(view[i]):
            return i
    return None


def tool_uses_by_id(view: Sequence[Message]) -> dict[str, Block]:
    return {b.id: b for m in view if m.role == "assistant" for b in m.blocks if b.type == "tool_use"}


def tool_target(tool_input: dict) -> str:
    """A short label of what a call acted on: its path, command or pattern."""
    for key in TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            if len(line) <= 80:
                return line
            return "..." + line[-77:] if key in PATH_KEYS else line[:77] + "..."  # a path: keep its file name
    return ""


_NUMBERED = re.compile(r"^ *(\d+)(?:\t|→)", re.MULTILINE)


def read_range(text: str) -> tuple[int, int] | None:
    """(first, last) line number a file read's output shows (`    12\t…` or `    12→…`), None if none."""
    first = _NUMBERED.search(text)
    if first is None:
        return None
    *_, last = _NUMBERED.finditer(text, first.start())
    return int(first.group(1)), int(last.group(1))


def result_tool_name(block: Block, uses: dict[str, Block]) -> str:
    if block.meta.tool_name:
        return block.meta.tool_name
    use = uses.get(block.tool_use_id)
    return use.name if use else "tool"


# -- grouping and the tail ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """view[start:end]: one message, or an assistant message with tool_use plus the user message
    answering it — a unit that lives and dies together."""

    start: int
    end: int


def group_view(view: Sequence[Message]) -> list[Group]:
    groups: list[Group] = []
    i = 0
    while i < len(view):
        message = view[i]
        if (
            message.role == "assistant"
            and message.tool_uses()
            and i + 1 < len(view)
            and view[i + 1].role == "user"
        ):
            groups.append(Group(i, i + 2))
            i += 2
        else:
            groups.append(Group(i, i + 1))
            i += 1
    return groups


def is_valid_tail_start(view: Sequence[Message], index: int) -> bool:
    """Can the kept tail begin at `index` after a bridge message without splitting a pair?"""
    if index >= len(view):
        return True
    message = view[index]
    return message.role == "assistant" or not message.tool_results()


def find_tail_start(
    view: Sequence[Message], counter: TokenCount, tail_tokens: int, *, keep_last_person: bool = True
) -> int:
    """Where the kept tail begins: the latest valid start whose tail holds >= `tail_tokens` (or the
    earliest valid start after the head when the view is smaller). Never splits a tool pair, never
    returns 0 (the head is kept separately). With `keep_last_person` the tail always holds the last
    person's message."""
    if len(view) <= 1:
        return len(view)
    starts = [i for i in range(1, len(view)) if is_valid_tail_start(view, i)]
    if not starts:
        return len(view)
    chosen = starts[0]
    acc = 0
    position = len(view)
    for start in reversed(starts):
        acc += sum(counter.message(view[j]) for j in range(start, position))
        position = start
        chosen = start
        if acc >= tail_tokens:
            break
    if keep_last_person:
        person = last_person_index(view)
        if person is not None and person >= 1 and person < chosen:
            chosen = max((s for s in starts if s <= person), default=chosen)
    return chosen


def plan_tail(view: Sequence[Message], counter: TokenCount, tail_tokens: int) -> tuple[int, Message | None]:
    """(tail start, lifted person's message) for T2/T4/T5.

    The tail holds about `tail_tokens` and never splits a pair. When the last person's message lies
    before it (a long autonomous run), it is not allowed to drag the whole run into the tail: its
    words are lifted verbatim to the end of the bridge message instead, so the person's latest request
    is still read right before the recent turns — and the tail then begins with an assistant message."""
    start = find_tail_start(view, counter, tail_tokens, keep_last_person=False)
    person = last_person_index(view)
    if person is None or person < 1 or person >= start:
        return start, None
    if start < len(view) and view[start].role == "user":
        earlier = [i for i in range(person + 1, start) if view[i].role == "assistant"]
        if not earlier:
            return find_tail_start(view, counter, tail_tokens), None
        start = earlier[-1]
    return start, view[person]


def tail_tokens_for(config: ContextConfig, budget: int, used: int | None = None) -> int:
    """The kept tail's budget: tail_fraction of the auto threshold — or of the usage when it is lower
    (a manual /compact early in a session still has a middle to summarize)."""
    threshold = config.auto_fraction * budget
    if used is not None:
        threshold = min(threshold, used)
    return int(config.tail_fraction * threshold)


# -- transcripts -------------------------------------------------------------------------------------


def cut_middle(text: str, limit: int) -> str:
    """`text` cut to about `limit` chars: head and tail kept, the middle replaced by a note."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[len(text) - limit // 3 :]
    return f"{head}\n… [{len(text) - len(head) - len(tail)} chars omitted] …\n{tail}"


def render_block(block: Block, uses: dict[str, Block], prune_chars: int | None) -> str:
    if block.type == "text":
        label = f"<{block.meta.tag}>" if block.meta.tag else ""
        return f"{label}{block.text}"
    if block.type == "thinking":
        return ""
    if block.type == "tool_use":
        target = tool_target(block.input)
        return f"[tool call {block.id}] {block.name} {target}".rstrip()
    if block.type == "tool_result":
        name = result_tool_name(block, uses)
        status = "error" if block.is_error else "ok"
        body = block.text if prune_chars is None else cut_middle(block.text, prune_chars)
        ref = f", ref {block.meta.ref}" if block.meta.ref else ""
        return f"[tool result {block.tool_use_id}: {name} → {status}, {len(block.text)} chars{ref}]\n{body}"
    if block.type == "image":
        return "[image]"
    return ""


def render_transcript(
    messages: Sequence[Message],
    *,
    prune_chars: int | None = None,
    redact_secrets: bool = False,
    skip_summaries: bool = False,
    uses: dict[str, Block] | None = None,
) -> str:
    """A plain transcript. For a summarizer: tool outputs pruned, summaries skipped, secrets redacted.
    For recall (the original): everything verbatim."""
    uses = uses if uses is not None else tool_uses_by_id(messages)
    parts: list[str] = []
    for message in messages:
        lines: list[str] = []
        for block in message.blocks:
            if skip_summaries and is_summary_block(block):
                continue
            rendered = render_block(block, uses, prune_chars)
            if rendered:
                lines.append(rendered)
        if not lines:
            continue
        who = "Assistant" if message.role == "assistant" else "User"
        if message.role == "user" and not is_person_message(message):
            who = "User (tool results and attachments)"
        parts.append(f"## {who}\n" + "\n".join(lines))
    text = "\n\n".join(parts)
    return redact(text) if redact_secrets else text


def render_for_summary(
    messages: Sequence[Message], prune_chars: int | None, uses: dict[str, Block] | None = None
) -> str:
    """What a summarizer sees: no earlier summaries, no secrets; tool outputs whole (`prune_chars`
    None: T3/T4 condense in chunks instead of cutting) or cut to head+tail."""
    return render_transcript(
        messages, prune_chars=prune_chars, redact_secrets=True, skip_summaries=True, uses=uses
    )


def fill(template: str, **values: str) -> str:
    """Substitute `{name}` placeholders in one pass (no str.format: braces in code and in values are
    left alone, and a value is never scanned for placeholders again)."""
    if not values:
        return template
    pattern = re.compile(r"\{(" + "|".join(re.escape(k) for k in values) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def split_prompt(template: str) -> tuple[str, str]:
    """A prompt file is 'system part', a line '---', then 'request part'. No separator: all request."""
    lines = template.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == "---" and i > 0:
            return "".join(lines[:i]).strip(), "".join(lines[i + 1 :]).strip()
    return "", template.strip()


# -- building replacement blocks and messages --------------------------------------------------------


def compactor_block(
    text: str, tag: str, now: float = 0.0, *, source: Source = "compactor", ref: str = ""
) -> Block:
    """Engine-written reference material: pinned, tagged, trusted as the assistant's own notes."""
    meta = BlockMeta(trust=Trust.ASSISTANT, source=source, created_at=now, pinned=True, ref=ref, tag=tag)
    return Block.text_block(text, meta)


def ledger_block(ledger_text: str, now: float = 0.0) -> Block | None:
    text = ledger_text.strip()
    if not text:
        return None
    if not text.startswith("<"):
        text = f"<ledger>\n{text}\n</ledger>"
    return compactor_block(text, TAG_LEDGER, now)


def ack_message(turn: int = 0, now: float = 0.0) -> Message:
    meta = BlockMeta(Trust.ASSISTANT, "compactor", now, tag=TAG_ACK)
    return Message("assistant", (Block.text_block(ACK_TEXT, meta),), turn)


def order_user_blocks(blocks: Iterable[Block]) -> tuple[Block, ...]:
    """Rule 2 of the invariants: tool results first, tagged injections next, the person's words last."""
    blocks = list(blocks)
    results = [b for b in blocks if b.type == "tool_result"]
    tagged = [b for b in blocks if b.type != "tool_result" and b.meta.tag]
    rest = [b for b in blocks if b.type != "tool_result" and not b.meta.tag]
    return tuple(results + tagged + rest)


def carried_pinned(messages: Sequence[Message], keep_tags: frozenset[str] = frozenset()) -> list[Block]:
    """Pinned text blocks of a replaced span that must survive it (the latest one per tag or text).
    Summary, ledger and memory blocks are carried only when their tag is in `keep_tags` (T5 keeps
    them; T2/T4 write fresh ones)."""
    latest: dict[str, Block] = {}
    for message in messages:
        for block in message.blocks:
            if block.type != "text" or not block.meta.pinned or block.meta.tag in (TAG_ACK, TAG_MARKER):
                continue
            if is_summary_block(block) and block.meta.tag not in keep_tags:
                continue
            key = block.meta.tag or block.text
            latest.pop(key, None)
            latest[key] = block
    return list(latest.values())


TAG_REATTACH = "reattach"


def reattached(carried: list[Block], ctx: TierContext) -> list[Block]:
    """After T2/T4: the carried pinned blocks, with earlier re-attachments replaced by fresh ones (the
    todo list and the recently touched files as they are now)."""
    return [b for b in carried if b.meta.tag != TAG_REATTACH] + list(ctx.reattach())


def lifted_blocks(message: Message) -> list[Block]:
    """The person's message re-placed after a bridge: its words and unpinned injections — not its tool
    results (their pairs are replaced), nor summaries or pinned blocks (written fresh or carried)."""
    return [
        b for b in message.blocks if b.type != "tool_result" and not is_summary_block(b) and not b.meta.pinned
    ]


def splice(
    view: Sequence[Message], tail_start: int, blocks: Sequence[Block], now: float = 0.0
) -> SpanReplacement:
    """Replace view[1:tail_start] by [ack, bridge]: the bridge is a user message holding `blocks`; when
    the tail begins with a user message (no tool results) it is merged into the bridge."""
    if not view or view[0].role != "user":
        raise ValueError("the view must begin with a user message")
    if not is_valid_tail_start(view, tail_start):
        raise ValueError(f"the tail cannot start at {tail_start}: it would split a tool pair")
    end = tail_start
    merged = list(blocks)
    turn = view[tail_start - 1].turn if tail_start - 1 < len(view) else view[-1].turn
    if tail_start < len(view) and view[tail_start].role == "user":
        merged += list(view[tail_start].blocks)
        turn = view[tail_start].turn
        end = tail_start + 1
    bridge = Message("user", order_user_blocks(merged), turn)
    return SpanReplacement(1, end, (ack_message(view[0].turn, now), bridge))


def tokens_of(messages: Iterable[Message], counter: TokenCount) -> int:
    return sum(counter.message(m) for m in messages)


def span_delta(view: Sequence[Message], replacements: Iterable[SpanReplacement], counter: TokenCount) -> int:
    """Tokens removed by `replacements` (old spans minus new messages), counted with `counter`."""
    delta = 0
    for span in replacements:
        delta += tokens_of(view[span.start : span.end], counter) - tokens_of(span.messages, counter)
    return delta
