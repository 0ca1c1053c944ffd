"""What a summarizer reads: transcripts of a span (tool outputs cut, summaries skipped, secrets
redacted) and the prompt files filled for it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from agent_cli.context.tiers.selection import (
    is_person_message,
    is_summary_block,
    result_tool_name,
    tool_target,
    tool_uses_by_id,
)
from agent_cli.core.types import Block, Message

# -- secrets -----------------------------------------------------------------------------------------


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


# -- transcripts -------------------------------------------------------------------------------------


def cut_middle(text: str, limit: int) -> str:
    """`text` cut to about `limit` chars: head and tail kept, the middle replaced by a note."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[len(text) - limit // 3 :]
    return f"{head}\n… [{len(text) - len(head) - len(tail)} chars omitted] …\n{tail}"


def render_block(
    block: Block, uses: dict[str, Block], prune_chars: int | None, verbatim: bool = False
) -> str:
    """One block as transcript text; `verbatim` (an original kept for recall): a tool call with its
    whole input, each string byte for byte on lines of its own, so recall gives it back."""
    if block.type == "text":
        label = f"<{block.meta.tag}>" if block.meta.tag else ""
        return f"{label}{block.text}"
    if block.type == "thinking":
        return ""
    if block.type == "tool_use":
        target = tool_target(block.input)
        head = f"[tool call {block.id}] {block.name} {target}".rstrip()
        return head + "".join(_input_line(k, v) for k, v in block.input.items()) if verbatim else head
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
    verbatim = prune_chars is None and not redact_secrets  # the original, for recall
    parts: list[str] = []
    for message in messages:
        lines: list[str] = []
        for block in message.blocks:
            if skip_summaries and is_summary_block(block):
                continue
            rendered = render_block(block, uses, prune_chars, verbatim)
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


def _input_line(key: str, value: object) -> str:
    if isinstance(value, str):
        return f"\n  {key}:\n{value}" if "\n" in value or len(value) > 80 else f"\n  {key}: {value}"
    return f"\n  {key}: {json.dumps(value, ensure_ascii=False)}"


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
