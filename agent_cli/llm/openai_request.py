"""A `Request` (Messages-API shape) as chat-completions parameters.

System blocks become one system message, tool_use blocks become an assistant's `tool_calls`,
tool_result blocks become `tool` messages (sent before the user's words of the same turn), tools
become functions; thinking blocks are dropped. `cache_control` is dropped too, unless `keep_cache`:
gateways in front of the Messages API (LiteLLM, OpenRouter) read it on system and user content parts,
on tool messages and on tools, and pass it on, so prompt caching works through them.
"""

from __future__ import annotations

import json
from typing import Any

from agent_cli.core.types import content_to_text
from agent_cli.llm.base import Request


def to_chat_params(request: Request, *, keep_cache: bool = False) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    system = [b for b in request.system if b.get("text")]
    if keep_cache and any("cache_control" in b for b in system):
        messages.append({"role": "system", "content": [_text_part(b, keep_cache) for b in system]})
    elif system:
        messages.append({"role": "system", "content": "\n\n".join(b["text"] for b in system)})
    for message in request.messages:
        messages.extend(_translate_message(message, keep_cache))
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [_tool(tool, keep_cache) for tool in request.tools]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    return params


def _tool(tool: dict[str, Any], keep_cache: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        },
    }
    if keep_cache and tool.get("cache_control"):
        out["cache_control"] = tool["cache_control"]
    return out


def _text_part(block: dict[str, Any], keep_cache: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": block["text"]}
    if keep_cache and block.get("cache_control"):
        part["cache_control"] = block["cache_control"]
    return part


def _translate_message(message: dict[str, Any], keep_cache: bool = False) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    if message.get("role") == "assistant":
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [
            {
                "id": b["id"],
                "type": "function",
                "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
            }
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    results = [_tool_message(b, keep_cache) for b in blocks if b.get("type") == "tool_result"]
    # a tool message holds text only: an image a result carries (read_file of a PNG) follows in the
    # user message after the tool messages, before the person's words
    parts: list[dict[str, Any]] = [
        _image_part(c, False) for b in blocks if b.get("type") == "tool_result" for c in _images(b)
    ]
    for b in blocks:
        if b.get("type") == "text" and b.get("text"):
            parts.append(_text_part(b, keep_cache))
        elif b.get("type") == "image":
            parts.append(_image_part(b, keep_cache))
    if not parts:
        return results
    if all(p["type"] == "text" and "cache_control" not in p for p in parts):
        return [*results, {"role": "user", "content": "\n\n".join(p["text"] for p in parts)}]
    return [*results, {"role": "user", "content": parts}]


def _images(block: dict[str, Any]) -> list[dict[str, Any]]:
    content = block.get("content")
    return (
        [c for c in content if isinstance(c, dict) and c.get("type") == "image"]
        if isinstance(content, list)
        else []
    )


def _image_part(block: dict[str, Any], keep_cache: bool) -> dict[str, Any]:
    source = block.get("source") or {}
    url = f"data:{source.get('media_type', '')};base64,{source.get('data', '')}"
    part: dict[str, Any] = {"type": "image_url", "image_url": {"url": url}}
    if keep_cache and block.get("cache_control"):
        part["cache_control"] = block["cache_control"]
    return part


def _tool_message(block: dict[str, Any], keep_cache: bool) -> dict[str, Any]:
    content = block.get("content")
    if _images(block):
        content = [c for c in content if c not in _images(block)] + [
            {"type": "text", "text": "[the image is in the user message that follows]"}
        ]
    out: dict[str, Any] = {
        "role": "tool",
        "tool_call_id": block["tool_use_id"],
        "content": ("ERROR: " if block.get("is_error") else "") + content_to_text(content),
    }
    inner = block.get("content") if isinstance(block.get("content"), list) else []
    control = block.get("cache_control") or next(
        (b["cache_control"] for b in inner if isinstance(b, dict) and b.get("cache_control")), None
    )
    if keep_cache and control:
        out["cache_control"] = control
    return out
