"""A server's tool as one of ours: `mcp__<server>__<tool>`, read-only from `readOnlyHint`, its schema
from the server, its result turned into text the way the built-in tools' results are, and an image
it returns sent as an image, the way read_file sends one (scaled to the API's limits by
tools/images/; a tool result carries one image, so a second is a line saying so, as is one that is
not a PNG, JPEG, GIF or WebP, or not valid base64)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.core.errors import ToolError
from agent_cli.core.images import MAX_BASE64
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.fs import HeadTail
from agent_cli.tools.images import LoadedImage, image_from_bytes

PREFIX = "mcp__"
MAX_RESULT_CHARS = 400_000  # kept head+tail; what the context keeps is T0's business (offload + ref)
MAX_IMAGE_BASE64 = 16 * MAX_BASE64  # an image's base64 beyond this is not decoded (what the API takes, x16)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ToolInfo:
    """What a server said about one tool (SDK-free, so the rest of the room never needs the SDK)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


class McpCallError(Exception):
    """A call that did not produce a result: the server is gone, timed out, or refused the request."""


class ToolCaller(Protocol):
    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """The SDK's CallToolResult, or McpCallError."""
        ...


def tool_name(server: str, tool: str) -> str:
    """Claude Code's naming; characters the API does not allow in a tool name become '_'."""
    name = f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    return name[:64]  # the API's limit


class McpTool:
    compactable = True

    def __init__(self, server: str, info: ToolInfo, caller: ToolCaller) -> None:
        self.server = server
        self.remote_name = info.name
        self.name = tool_name(server, info.name)
        self.description = info.description or f"{info.name} (MCP server {server})"
        self.input_schema = _object_schema(info.input_schema)
        self.read_only = info.read_only
        self._caller = caller

    def target(self, input: dict[str, Any]) -> str:
        text = json.dumps(input, ensure_ascii=False, default=str)
        return text if len(text) <= 80 else text[:79] + "…"

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []  # a server's arguments are its own business; permission is by name and read_only

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await self._caller.call(self.server, self.remote_name, input)
        except McpCallError as exc:
            return ToolResult(
                output=f"{self.name} failed: {exc}", is_error=True, meta={"mcp_server": self.server}
            )
        return await asyncio.to_thread(convert_result, result, self.server)  # Pillow may scale an image


def convert_result(result: Any, server: str) -> ToolResult:
    """Text joined; the first image as an image (its caption in the text), audio as a notice;
    resource links as their URI; embedded resources as their text; `isError` as an error result.
    Huge output is cut head+tail like bash's."""
    parts: list[str] = []
    image: LoadedImage | None = None
    for block in getattr(result, "content", None) or []:
        if getattr(block, "type", "") == "image":
            line, loaded = _image(block, server, wanted=image is None)
            image = image or loaded
            parts.append(line)
        else:
            parts.append(_block_text(block))
    structured = getattr(result, "structured_content", None)
    if not any(p.strip() for p in parts) and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False, indent=2, default=str)]
    text = "\n".join(p for p in parts if p) or "(no output)"
    meta: dict[str, Any] = {"mcp_server": server}
    if len(text) > MAX_RESULT_CHARS:
        cut = HeadTail(MAX_RESULT_CHARS // 2, MAX_RESULT_CHARS // 2)
        cut.feed(text)
        meta["chars"] = len(text)
        text = cut.text()
    if image is not None:
        meta |= {"image": [image.width, image.height], "tokens": image.tokens}
    is_error = bool(getattr(result, "is_error", False))
    return ToolResult(text, is_error, meta=meta, image=image.part if image is not None else None)


def _image(block: Any, server: str, *, wanted: bool) -> tuple[str, LoadedImage | None]:
    """(the line the model reads for an image block, the image when it is to be sent)."""
    shown = f"from mcp server {server!r}"
    mime = str(getattr(block, "mime_type", "") or "?")
    data = getattr(block, "data", "")
    data = data if isinstance(data, str) else ""
    if len(data) > MAX_IMAGE_BASE64:
        size = f"{len(data) * 3 // 4 / 1e6:.1f} MB"
        return f"[image {shown}: {mime}, {size}; not attached: too large to decode]", None
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return f"[image {shown}: {mime}; not attached: its data is not valid base64]", None
    if not wanted:
        return f"[image {shown}: {mime}, {len(raw):,} bytes; not attached: a result carries one image]", None
    try:
        loaded = image_from_bytes(raw, shown)
    except ToolError as exc:
        return f"[image {exc} ({mime}, {len(raw):,} bytes); not attached]", None
    return loaded.caption(shown), loaded


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "audio":
        return (
            f"[audio: {getattr(block, 'mime_type', '?')}, {_decoded_size(getattr(block, 'data', ''))} bytes]"
        )
    if kind == "resource_link":
        name = getattr(block, "name", "")
        return f"[resource: {block.uri}]" + (f" {name}" if name and name != str(block.uri) else "")
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource: {resource.uri}]\n{text}"
        size = _decoded_size(getattr(resource, "blob", ""))
        return f"[resource: {resource.uri}, {getattr(resource, 'mime_type', None) or '?'}, {size} bytes]"
    return f"[{kind or 'unknown'} content]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _object_schema(schema: Any) -> dict[str, Any]:
    """The API wants an object schema; a server that sends something else gets an open object."""
    if isinstance(schema, dict) and schema.get("type") == "object":
        return dict(schema)
    return {"type": "object", "properties": {}, "additionalProperties": True}
