"""Preserved thinking, as the real API does it for the models that bind their thinking (fake).

Each thinking block the server sends is signed with a digest of its prefix: the tools, the system
prompt and every message and block before it (`cache_control` is not content). A request that sends a
block back whose prefix is no longer the same (something before it changed, or a thinking block before
it was left out) is refused with the API's 400 — or, when the request's `thinking.block_binding.
prefix_mismatch_behavior` is "drop_block", the block is dropped and counted in `dropped`.

Written apart from the agent's guard (agent_cli/llm/thinking_binding.py) on purpose: it sees only what
crosses the wire.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tests.fakeapi.cache import without_cache_control

SIGNED = "bound:"


class PreservedThinking:
    def __init__(self) -> None:
        self.dropped: list[tuple[int, int, int]] = []  # (request number, message, block)
        self.checked = 0  # requests checked

    def check(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The body the model sees (invalid blocks dropped when asked), or the 400's message."""
        behavior = ((body.get("thinking") or {}).get("block_binding") or {}).get("prefix_mismatch_behavior")
        seen: list[dict[str, Any]] = []
        self.checked += 1
        for i, message in enumerate(body.get("messages", [])):
            kept: list[dict[str, Any]] = []
            for j, block in enumerate(_blocks(message)):
                signature = str(block.get("signature", "")) if isinstance(block, dict) else ""
                if block.get("type") == "thinking" and signature.startswith(SIGNED):
                    prefix = [*seen, {"role": message.get("role"), "content": kept}]
                    if signature[len(SIGNED) :] != _digest(body, prefix):
                        if behavior != "drop_block":
                            return body, (
                                f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The "
                                "block is bound to a different conversation. Remove the block, or set "
                                '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
                            )
                        self.dropped.append((self.checked, i, j))
                        continue
                kept.append(block)
            seen.append({"role": message.get("role"), "content": kept})
        return {**body, "messages": seen}, None

    def sign(self, body: dict[str, Any], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The reply's blocks, each thinking block signed with the digest of what precedes it."""
        out: list[dict[str, Any]] = []
        for block in content:
            if block.get("type") == "thinking":
                prefix = [*body.get("messages", []), {"role": "assistant", "content": out}]
                block = {**block, "signature": SIGNED + _digest(body, prefix)}
            out.append(block)
        return out


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _digest(body: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    prefix = {
        "tools": body.get("tools") or [],
        "system": body.get("system") or [],
        "messages": [{"role": m.get("role"), "content": _blocks(m)} for m in messages],
    }
    return hashlib.sha256(json.dumps(without_cache_control(prefix), sort_keys=True).encode()).hexdigest()
