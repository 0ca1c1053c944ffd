"""A small MCP server for tests, on the SDK's MCPServer: an error, a 5 MB result, an image and a
resource link (the image a real PNG, a large one, an SVG, bad base64, or two), a tool that kills the
server mid-call, one that never answers, one that writes.

    python -m tests.mcp_servers.toolbox                    # stdio
    python -m tests.mcp_servers.toolbox --http PORT        # streamable HTTP on 127.0.0.1:PORT/mcp
    TOOLBOX_EXTRA_TOOLS=N ...                              # N more tools with long schemas
    TOOLBOX_DYNAMIC=1 ...                                  # `add_tool` registers a tool, sends list_changed
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, ResourceLink, TextContent, ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)

server = MCPServer("toolbox")


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool(annotations=READ_ONLY)
def fail(reason: str = "it broke") -> str:
    """Always fails."""
    raise ToolError(reason)


@server.tool(annotations=READ_ONLY)
def big(megabytes: int = 5) -> str:
    """A very large result."""
    line = "0123456789" * 9 + "abcdefghi\n"  # 100 chars
    return "BIG-START\n" + line * (megabytes * 10_000) + "BIG-END"


def png(width: int, height: int) -> str:
    """A PNG of that size, base64: red, with a blue square in the top left corner."""
    from PIL import Image

    image = Image.new("RGB", (width, height), "red")
    image.paste((0, 0, 255), (0, 0, width // 4, height // 4))
    out = io.BytesIO()
    image.save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


@server.tool(annotations=READ_ONLY)
def picture(kind: str = "png") -> list[TextContent | ImageContent | ResourceLink]:
    """A caption, an image and a link. kind: png (40x30), large (3200x2400), svg, broken (bad base64),
    two (two PNGs)."""
    images = {
        "png": [ImageContent(data=png(40, 30), mime_type="image/png")],
        "large": [ImageContent(data=png(3200, 2400), mime_type="image/png")],
        "svg": [ImageContent(data=base64.b64encode(b"<svg/>").decode(), mime_type="image/svg+xml")],
        "broken": [ImageContent(data="not base64!", mime_type="image/png")],
        "two": [ImageContent(data=png(40, 30), mime_type="image/png")] * 2,
    }[kind]
    return [
        TextContent(text="a caption"),
        *images,
        ResourceLink(uri="file:///tmp/report.pdf", name="report"),
    ]


@server.tool(annotations=READ_ONLY)
def crash() -> str:
    """The server exits while answering."""
    print("toolbox: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=READ_ONLY)
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "late"


@server.tool()
def write_note(path: str, text: str) -> str:
    """Write a note to a file (not read-only)."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} chars to {path}"


def _add_extra_tools(count: int) -> None:
    words = " ".join(f"word{i}" for i in range(120))

    def make(index: int):
        def extra(query: str, limit: int = 10) -> str:
            return f"extra {index}: {query} (limit {limit})"

        return extra

    for index in range(count):
        server.add_tool(
            make(index), name=f"extra_{index:03d}", description=f"Extra tool {index} for {words}."
        )


async def add_tool(name: str, ctx: Context) -> str:
    """Register a tool `name` that answers with its name, and tell the client the list changed."""

    def added() -> str:
        return f"{name} was added"

    server.add_tool(added, name=name, description=f"Added at run time: {name}.")
    await ctx.request_context.session.send_tool_list_changed()
    return f"added {name}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, help="serve streamable HTTP on this port")
    args = parser.parse_args()
    _add_extra_tools(int(os.environ.get("TOOLBOX_EXTRA_TOOLS", "0")))
    if os.environ.get("TOOLBOX_DYNAMIC"):
        server.add_tool(add_tool)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
