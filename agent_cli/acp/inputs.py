"""What an ACP client sends, read into ours: a prompt's content blocks into a `core.prompt.Prompt`,
the client's MCP servers into `.mcp.json`'s shape (`api.Options.mcp_servers`).

The person's text blocks are their words (a `/command` in them is run as typed). An image block is
saved as a file and named in the words as a pasted image path, so it is attached as the TUI attaches
one (scaled, counted, logged as the person's read). A link to a file becomes an `@` mention (read
through the same tools, the editor's buffer included); an embedded text resource is pasted data,
escaped like any text from outside (core/tags.py).
"""

from __future__ import annotations

import base64
import binascii
import itertools
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agent_cli.core.images import MEDIA_TYPES, sniff_media_type
from agent_cli.core.prompt import Prompt, PromptPart
from agent_cli.core.tags import escape_tags

SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


class Attachments:
    """Where this process keeps the images clients send (a private temporary folder)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._numbers = itertools.count(1)

    def save(self, data: str, mime_type: str) -> tuple[Path | None, str]:
        """The image written to a file, or None and the line that says why it is not attached."""
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None, "an image the client sent is not valid base64; not attached"
        kind = sniff_media_type(raw[:64])
        if kind is None or kind not in MEDIA_TYPES:
            return None, f"an image the client sent ({mime_type}) is not PNG, JPEG, GIF or WebP; not attached"
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / f"image-{next(self._numbers)}{SUFFIXES[kind]}"
        path.write_bytes(raw)
        return path, ""


def to_prompt(blocks: list[Any], attachments: Attachments) -> tuple[Prompt, list[str]]:
    """The prompt the blocks make, and a line for each block that could not be used."""
    parts: list[PromptPart] = []
    problems: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(PromptPart(block.text))
        elif kind == "image":
            path, problem = attachments.save(block.data, block.mime_type)
            if path is None:
                problems.append(problem)
            else:
                parts.append(PromptPart(f' "{path}" '))
        elif kind == "resource_link":
            parts.append(PromptPart(_link(block.uri, block.name)))
        elif kind == "resource":
            part, problem = _embedded(block.resource, attachments)
            if part is None:
                problems.append(problem)
            else:
                parts.append(part)
        else:
            problems.append(f"a {kind or 'content'} block is not supported here; not attached")
    return Prompt(parts), problems


def _link(uri: str, name: str) -> str:
    """A link to a file: an `@` mention of its path; any other link stays words."""
    path = file_path(uri)
    if path is None:
        return f" {uri} "
    return f' @"{path}" ' if " " in path else f" @{path} "


def _embedded(resource: Any, attachments: Attachments) -> tuple[PromptPart | None, str]:
    """An embedded resource: its text as pasted data under its name, or an image it carries."""
    uri = str(getattr(resource, "uri", "") or "")
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        name = file_path(uri) or uri
        return PromptPart(f"\n\n{name}:\n{escape_tags(text)}\n", pasted=True), ""
    mime = str(getattr(resource, "mime_type", "") or "")
    blob = getattr(resource, "blob", None)
    if isinstance(blob, str) and mime.startswith("image/"):
        path, problem = attachments.save(blob, mime)
        return (PromptPart(f' "{path}" '), "") if path is not None else (None, problem)
    return None, f"{uri or 'a resource'}: a binary resource ({mime or 'unknown type'}) is not attached"


def file_path(uri: str) -> str | None:
    """The local path of a `file://` URI (or of a plain absolute path); None for anything else."""
    if uri.startswith("/"):
        return uri
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


def mcp_servers(servers: list[Any] | None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The client's MCP servers in `.mcp.json`'s shape, by name, and a line for each left out."""
    out: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for server in servers or []:
        name = str(getattr(server, "name", "") or "")
        url = getattr(server, "url", None)
        kind = getattr(server, "type", None)
        if isinstance(url, str):
            headers = {h.name: h.value for h in getattr(server, "headers", None) or []}
            out[name] = {"type": "sse" if kind == "sse" else "http", "url": url, "headers": headers}
        elif isinstance(getattr(server, "command", None), str):
            env = {v.name: v.value for v in getattr(server, "env", None) or []}
            out[name] = {"command": server.command, "args": list(server.args or []), "env": env}
        else:
            problems.append(
                f"mcp server {name!r} from the client: only stdio, http and sse servers are supported"
            )
    return out, problems
