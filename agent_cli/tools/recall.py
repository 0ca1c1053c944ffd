"""recall: page through an original that left the context (offloaded, cleared or compacted)."""

from __future__ import annotations

from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.fs import int_arg, reports_tool_errors, str_arg

DEFAULT_LIMIT = 20_000
MAX_LIMIT = 25_000  # below the 30k offload threshold, so a recalled page is never offloaded again
SHOWN_REFS = 10


class RecallTool:
    name = "recall"
    description = (
        "Get back, in full, something that left the context: a large tool output shown as a "
        "`<persisted-output>` preview, a tool result replaced by a 'cleared' placeholder, or a span of "
        "earlier turns that was compacted into a summary. Each of those carries a `ref`; pass it here. "
        f"Returns up to `limit` characters (default {DEFAULT_LIMIT}, max {MAX_LIMIT}) from `offset` "
        "(default 0) and says which offset to pass next when there is more."
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
        },
        "required": ["ref"],
    }
    read_only = True
    compactable = False

    def target(self, input: dict[str, Any]) -> str:
        ref = str(input.get("ref", ""))
        offset = input.get("offset")
        return f"{ref} @{offset}" if offset else ref

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ref = str_arg(input, "ref").strip()
        if not ref:
            raise ToolError("ref is empty")
        offset = int_arg(input, "offset", 0, 0)
        limit = int_arg(input, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        if ctx.store is None:
            raise ToolError("nothing can be recalled in this session (no recall store)")
        text = ctx.store.get(ref)
        if text is None:
            known = ctx.store.refs()
            if not known:
                raise ToolError(f"unknown ref {ref!r}; nothing has been stored for recall yet")
            listed = ", ".join(known[-SHOWN_REFS:])
            more = f" (and {len(known) - SHOWN_REFS} older)" if len(known) > SHOWN_REFS else ""
            raise ToolError(f"unknown ref {ref!r}. Known refs: {listed}{more}")
        total = len(text)
        if total == 0:
            return ToolResult(output=f"[{ref}: empty]", meta={"ref": ref, "chars": [0, 0], "total_chars": 0})
        if offset >= total:
            raise ToolError(f"offset {offset} is past the end of {ref!r}, which has {total} chars")
        end = min(total, offset + limit)
        header = f"[{ref}: chars {offset}–{end} of {total}]"
        body = text[offset:end]
        footer = ""
        if end < total:
            footer = f"\n[… {total - end} more chars; call again with offset={end}]"
        meta = {"ref": ref, "chars": [offset, end], "total_chars": total}
        return ToolResult(output=f"{header}\n{body}{footer}", meta=meta)
