"""recall: page through an original that left the context (offloaded, cleared or compacted), or
find the lines of it that match a regular expression."""

from __future__ import annotations

from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.images import base64_size, parse_data_url
from agent_cli.tools.base import ImagePart, ToolContext, ToolResult
from agent_cli.tools.fs import int_arg, reports_tool_errors, str_arg
from agent_cli.tools.patterns import Matcher

DEFAULT_LIMIT = 20_000
MAX_LIMIT = 25_000  # below the 30k offload threshold, so a recalled page is never offloaded again
SHOWN_REFS = 10
MATCH_LINE_CHARS = 500


class RecallTool:
    name = "recall"
    description = (
        "Get back, in full, something that left the context: a large tool output shown as a "
        "`<persisted-output>` preview, a tool result replaced by a 'cleared' placeholder, or a span of "
        "earlier turns that was compacted into a summary. Each of those carries a `ref`; pass it here. "
        f"Returns up to `limit` characters (default {DEFAULT_LIMIT}, max {MAX_LIMIT}) from `offset` "
        "(default 0) and says which offset to pass next when there is more. With `pattern` (a regular "
        "expression) it returns only the matching lines, each with its line number, searching from "
        "`offset`. A cleared image comes back as the image."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "ref": {"type": "string", "description": "The ref named in the preview, placeholder or summary."},
            "offset": {"type": "integer", "minimum": 0, "description": "Character offset to start at."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": f"Characters to return (default {DEFAULT_LIMIT}).",
            },
            "pattern": {
                "type": "string",
                "description": "A regular expression (Python syntax): return the matching lines with numbers.",
            },
        },
        "required": ["ref"],
    }
    read_only = True
    compactable = False

    def target(self, input: dict[str, Any]) -> str:
        ref = str(input.get("ref", ""))
        offset = input.get("offset")
        label = f"{ref} @{offset}" if offset else ref
        pattern = input.get("pattern")
        return f"{label} /{pattern}/" if isinstance(pattern, str) and pattern else label

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ref = str_arg(input, "ref").strip()
        if not ref:
            raise ToolError("ref is empty")
        offset = int_arg(input, "offset", 0, 0)
        limit = int_arg(input, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        pattern = input.get("pattern")
        if ctx.store is None:
            raise ToolError("nothing can be recalled in this session (no recall store)")
        text = ctx.store.get(ref)
        if text is None:
            known = ctx.store.refs()
            gone = f"unknown ref {ref!r}: nothing is stored under it (it is gone, or it never existed)"
            if not known:
                raise ToolError(f"{gone}; nothing has been stored for recall yet")
            listed = ", ".join(known[-SHOWN_REFS:])
            more = f" (and {len(known) - SHOWN_REFS} older)" if len(known) > SHOWN_REFS else ""
            raise ToolError(f"{gone}. Known refs: {listed}{more}")
        said, _, last = text.rpartition("\n")
        if (image := parse_data_url(last)) is not None:  # a cleared image: its text, the image again
            size = base64_size(image[1])
            shown = f", {size[0]}x{size[1]}" if size else ""
            output = f"[{ref}: image{shown}]" + (f"\n{said}" if said else "")
            return ToolResult(output, meta={"ref": ref}, image=ImagePart(*image))
        if isinstance(pattern, str) and pattern:
            return find_lines(ref, text, pattern, offset, limit)
        total = len(text)
        if total == 0:
            return ToolResult(output=f"[{ref}: empty]", meta={"ref": ref, "chars": [0, 0], "total_chars": 0})
        if offset >= total:
            raise ToolError(f"offset {offset} is past the end of {ref!r}, which has {total} chars")
        end = _within_bytes(text, offset, min(total, offset + limit), MAX_LIMIT)
        header = f"[{ref}: chars {offset}–{end} of {total}]"
        body = text[offset:end]
        footer = ""
        if end < total:
            footer = f"\n[… {total - end} more chars; call again with offset={end}]"
        meta = {"ref": ref, "chars": [offset, end], "total_chars": total}
        return ToolResult(output=f"{header}\n{body}{footer}", meta=meta)


def _within_bytes(text: str, start: int, end: int, cap: int) -> int:
    """Where a page from `start` ends so that it is at most `cap` bytes of UTF-8 (and one char at
    least): a page of dense text (CJK, 3 bytes and up to 3 tokens a char) is no bigger in tokens than
    an ASCII one, which T0 never offloads again (context/offload.py `fits_in`)."""
    encoded = text[start:end].encode("utf-8", "surrogatepass")
    if len(encoded) <= cap:
        return end
    return start + max(1, len(encoded[:cap].decode("utf-8", "ignore")))


def find_lines(ref: str, text: str, pattern: str, offset: int, limit: int) -> ToolResult:
    """The lines of `text` (from char `offset`) matching `pattern`, numbered, within `limit` chars."""
    regex = Matcher(pattern)
    if offset > len(text):
        raise ToolError(f"offset {offset} is past the end of {ref!r}, which has {len(text)} chars")
    lines = text.splitlines(keepends=True)
    shown: list[str] = []
    used = 0
    found = 0
    position = 0
    next_offset: int | None = None
    for number, line in enumerate(lines, 1):
        start, position = position, position + len(line)
        if position <= offset or not regex.search(line):
            continue
        found += 1
        body = line.rstrip("\r\n")
        if len(body) > MATCH_LINE_CHARS:
            body = body[:MATCH_LINE_CHARS] + f"… [{len(body) - MATCH_LINE_CHARS} more chars]"
        entry = f"{number}: {body}"
        size = len(entry.encode("utf-8", "surrogatepass")) + 1  # bytes: a page is within `limit` of both
        if next_offset is None and shown and used + size > limit:
            next_offset = start
        if next_offset is None:
            shown.append(entry)
            used += size
    meta = {"ref": ref, "pattern": pattern, "matches": found, "lines": len(lines)}
    if not found:
        where = f" after char {offset}" if offset else ""
        return ToolResult(output=f"no match in {ref} ({len(lines)} lines){where}", meta=meta)
    header = f"[{ref}: {found} matching line{'s' if found != 1 else ''} of {len(lines)} for /{pattern}/]"
    footer = ""
    if next_offset is not None:
        footer = f"\n[… {found - len(shown)} more matching lines; call again with offset={next_offset}]"
    return ToolResult(output=header + "\n" + "\n".join(shown) + footer, meta=meta)
