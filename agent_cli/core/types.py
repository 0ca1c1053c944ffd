"""The data model shared by every layer: blocks, messages, tool calls, usage.

Everything here is a frozen dataclass: a transformation builds new values, it never mutates a
message in place, so a view can be compared with another and replayed from the log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Literal

from agent_cli.core.surrogates import scrub_json
from agent_cli.core.usage import Totals, Usage  # noqa: F401 - re-exported: where every layer finds them

BlockType = Literal["text", "tool_use", "tool_result", "thinking", "image"]
Role = Literal["user", "assistant"]
Source = Literal["system", "user", "assistant", "tool", "hook", "reminder", "compactor", "memory"]


class Trust(IntEnum):
    """How far a block's words are to be believed. Tool output is data, never instructions."""

    SYSTEM = 0
    USER = 1
    ASSISTANT = 2
    TOOL = 3


@dataclass(frozen=True)
class BlockMeta:
    trust: Trust = Trust.USER
    source: Source = "user"
    created_at: float = 0.0
    tool_name: str = ""  # for tool_use / tool_result: the tool that produced it
    pinned: bool = False
    compactable: bool = False
    ref: str = ""  # stable id under which the original can be recalled
    tag: str = ""  # for injections: the XML tag they are wrapped in (system-reminder, env, ...)
    file: str = ""  # for tool_use: the file it names, as the workspace names it (context/working_set.py)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        default = _DEFAULT_META
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value != getattr(default, name):
                out[name] = int(value) if name == "trust" else value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> BlockMeta:
        if not data:
            return _DEFAULT_META
        kwargs = dict(data)
        if "trust" in kwargs:
            kwargs["trust"] = Trust(int(kwargs["trust"]))
        return cls(**kwargs)


_DEFAULT_META = BlockMeta()


@dataclass(frozen=True)
class Block:
    """One content block. Which fields matter depends on `type`:

    text: text · thinking: text, signature · tool_use: id, name, input ·
    tool_result: tool_use_id, text (the result), is_error, and an image when `data` is set (read_file
    of a PNG, say: media_type, data) · image: media_type, data (base64)
    """

    type: BlockType
    text: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str = ""
    is_error: bool = False
    signature: str = ""
    media_type: str = ""
    data: str = ""
    meta: BlockMeta = _DEFAULT_META

    # -- constructors -------------------------------------------------------------------------
    @staticmethod
    def text_block(text: str, meta: BlockMeta = _DEFAULT_META) -> Block:
        return Block(type="text", text=text, meta=meta)

    @staticmethod
    def tool_use(id: str, name: str, input: dict[str, Any], meta: BlockMeta | None = None) -> Block:
        meta = meta or BlockMeta(trust=Trust.ASSISTANT, source="assistant", tool_name=name)
        return Block(type="tool_use", id=id, name=name, input=input, meta=meta)

    @staticmethod
    def tool_result(
        tool_use_id: str, text: str, is_error: bool = False, meta: BlockMeta | None = None
    ) -> Block:
        meta = meta or BlockMeta(trust=Trust.TOOL, source="tool")
        return Block(type="tool_result", tool_use_id=tool_use_id, text=text, is_error=is_error, meta=meta)

    def with_meta(self, **changes: Any) -> Block:
        return replace(self, meta=replace(self.meta, **changes))

    # -- API shape ----------------------------------------------------------------------------
    def to_api(self) -> dict[str, Any]:
        """The block as the Anthropic Messages API takes it (no cache_control: assembly adds it)."""
        if self.type == "text":
            return {"type": "text", "text": self.text}
        if self.type == "thinking":
            if not self.text and self.signature:
                return {"type": "redacted_thinking", "data": self.signature}
            return {"type": "thinking", "thinking": self.text, "signature": self.signature}
        if self.type == "tool_use":
            return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}
        if self.type == "tool_result":
            out: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.tool_use_id}
            out["content"] = self.text if self.text else "(no output)"
            if self.data:  # a result that is an image: its caption, then the image
                out["content"] = [{"type": "text", "text": out["content"]}, self.image_api()]
            if self.is_error:
                out["is_error"] = True
            return out
        if self.type == "image":
            return self.image_api()
        raise ValueError(f"unknown block type {self.type!r}")

    def image_api(self) -> dict[str, Any]:
        source = {"type": "base64", "media_type": self.media_type, "data": self.data}
        return {"type": "image", "source": source}

    # -- log shape (lossless, includes meta) ----------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out = self.to_api()
        if self.type == "tool_result":
            out["content"] = self.text  # keep the exact text, even when empty
            if self.data:
                out["content"] = [{"type": "text", "text": self.text}, self.image_api()]
        meta = self.meta.to_json()
        if meta:
            out["meta"] = meta
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Block:
        kind = data.get("type")
        meta = BlockMeta.from_json(data.get("meta"))
        if kind == "text":
            return cls(type="text", text=str(data.get("text", "")), meta=meta)
        if kind == "thinking":
            return cls(
                type="thinking",
                text=str(data.get("thinking", data.get("text", ""))),
                signature=str(data.get("signature", "")),
                meta=meta,
            )
        if kind == "redacted_thinking":
            return cls(type="thinking", text="", signature=str(data.get("data", "")), meta=meta)
        if kind == "tool_use":
            return cls(
                type="tool_use",
                id=str(data.get("id", "")),
                name=str(data.get("name", "")),
                input=dict(data.get("input") or {}),
                meta=meta,
            )
        if kind == "tool_result":
            content = data.get("content", "")
            image = _result_image(content)
            if image is not None:  # our caption + image shape: the caption kept exactly
                content = [c for c in content if c is not image]
            source = (image or {}).get("source") or {}
            return cls(
                type="tool_result",
                tool_use_id=str(data.get("tool_use_id", "")),
                text=content_to_text(content),
                is_error=bool(data.get("is_error", False)),
                media_type=str(source.get("media_type", "")),
                data=str(source.get("data", "")),
                meta=meta,
            )
        if kind == "image":
            source = data.get("source") or {}
            return cls(
                type="image",
                media_type=str(source.get("media_type", "")),
                data=str(source.get("data", "")),
                meta=meta,
            )
        raise ValueError(f"unknown block type {kind!r}")

    def size_chars(self) -> int:
        """Characters of payload, the unit of the offload thresholds."""
        if self.type == "tool_use":
            return len(self.name) + len(json.dumps(self.input, ensure_ascii=False))
        if self.type == "image":
            return len(self.data)
        return len(self.text)


def _result_image(content: Any) -> dict[str, Any] | None:
    """The one base64 image of a tool_result's content list (None when it has none, or several)."""
    if not isinstance(content, list):
        return None
    images = [c for c in content if isinstance(c, dict) and c.get("type") == "image"]
    if len(images) != 1 or (images[0].get("source") or {}).get("type") != "base64":
        return None
    return images[0]


def content_to_text(content: Any) -> str:
    """A tool_result's `content` (a string or a list of blocks) flattened to text."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts: list[str] = []
        for item in content:
            if isinstance(item, dict):
                if item.get("type") == "text":
                    parts.append(str(item.get("text", "")))
                elif item.get("type") == "image":
                    parts.append("[image]")
                else:
                    parts.append(json.dumps(item, ensure_ascii=False))
            else:
                parts.append(str(item))
        return "\n".join(parts)
    return str(content)


@dataclass(frozen=True)
class Message:
    role: Role
    blocks: tuple[Block, ...]
    turn: int = 0  # the index of the person's message this belongs to (0 before the first)

    def to_api(self) -> dict[str, Any]:
        return {"role": self.role, "content": [b.to_api() for b in self.blocks]}

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "turn": self.turn, "content": [b.to_json() for b in self.blocks]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        content = data.get("content", [])
        if isinstance(content, str):
            blocks: tuple[Block, ...] = (Block.text_block(content),)
        else:
            blocks = tuple(Block.from_json(b) for b in content)
        role = data.get("role")
        if role not in ("user", "assistant"):
            raise ValueError(f"bad role {role!r}")
        return cls(role=role, blocks=blocks, turn=int(data.get("turn", 0)))

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if b.type == "text")

    def tool_uses(self) -> list[Block]:
        return [b for b in self.blocks if b.type == "tool_use"]

    def tool_results(self) -> list[Block]:
        return [b for b in self.blocks if b.type == "tool_result"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]

    @classmethod
    def from_block(cls, block: Block) -> ToolCall:
        return cls(id=block.id, name=block.name, input=dict(block.input))


@dataclass(frozen=True)
class ModelInfo:
    name: str
    context_window: int = 200_000
    max_output_tokens: int = 32_000
    input_price: float = 2.0  # USD per million uncached input tokens
    output_price: float = 10.0
    cache_write_multiplier: float = 1.25  # a cache write kept 5 minutes
    cache_write_1h_multiplier: float = 2.0  # a cache write kept an hour (`cache_ttl = "1h"`)
    cache_read_multiplier: float = 0.1
    cache_min_tokens: int = 1024

    def cost(self, usage: Usage) -> float:
        per = self.input_price / 1_000_000
        minutes, hour = usage.writes_by_ttl
        return (
            usage.input_tokens * per
            + minutes * per * self.cache_write_multiplier
            + hour * per * self.cache_write_1h_multiplier
            + usage.cache_read_input_tokens * per * self.cache_read_multiplier
            + usage.output_tokens * self.output_price / 1_000_000
        )


@dataclass(frozen=True)
class Request:
    model: str
    system: list[dict[str, Any]]  # text blocks, possibly with cache_control
    messages: list[dict[str, Any]]  # API-shaped messages
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 16_000
    temperature: float | None = None
    thinking_budget: int | None = None
    tool_choice: dict[str, Any] | None = None  # e.g. {"type": "none"}: tools stay (the cached prefix), unused
    metadata: dict[str, Any] = field(default_factory=dict)  # ours (purpose, step); never sent
    UNSENT = "unsent"  # metadata: the thinking a guarding provider left out (llm/thinking_binding.py)

    def __post_init__(self) -> None:  # a lone surrogate would fail this request and every later one
        for name in ("system", "messages", "tools"):
            object.__setattr__(self, name, scrub_json(getattr(self, name)))

    def to_api(self) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": self.messages}
        if self.system:
            body["system"] = self.system
        if self.tools:
            body["tools"] = self.tools
            if self.tool_choice:
                body["tool_choice"] = self.tool_choice
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        return body


@dataclass(frozen=True)
class CommandSpec:
    name: str  # without the slash
    args: str  # e.g. "[focus]"
    help: str
    choices: tuple[str, ...] = ()  # completions of the argument (model names, modes)
