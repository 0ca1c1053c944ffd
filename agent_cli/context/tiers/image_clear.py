"""Clearing an image a tool result carries (read_file of a PNG, an `@` mention of one): the result
keeps a one-line placeholder; the store keeps, under the ref, the result's text and then, on the
last line, the image as a data URL, and `recall(ref)` gives both back (tools/recall.py). T1 calls
this for the results it clears."""

from __future__ import annotations

from dataclasses import replace

from agent_cli.context.tiers.markers import CLEARED_PREFIX
from agent_cli.core.images import base64_size, base64_tokens, data_url
from agent_cli.core.types import Block


def clear_image(block: Block, tool: str, target: str, ref: str) -> tuple[Block, str]:
    """(the result without its image, the original to store under `ref`: its text, then the image)."""
    size = base64_size(block.data)
    shape = f"{size[0]}x{size[1]}, " if size else ""
    what = f"{tool} {target}".strip()
    text = f"{CLEARED_PREFIX}{what}: image, {shape}≈{base64_tokens(block.data):,} tokens; recall ref {ref}]"
    cleared = replace(block, text=text, media_type="", data="", meta=replace(block.meta, ref=ref))
    image = data_url(block.media_type, block.data)
    return cleared, f"{block.text}\n{image}" if block.text else image
