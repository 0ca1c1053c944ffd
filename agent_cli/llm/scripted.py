"""A deterministic provider that plays a script: the real loop runs against it in tests and `--demo`.

Script (YAML or JSON): a mapping with `responses` (played in order by `stream`) and optionally
`summaries` (played in order by `complete`, the summarizer's call). A response is a mapping:

    - text: "I'll look at the tests."        # streamed in small chunks
      thinking: "..."                         # optional
      tool_calls:                              # optional, answered in order by the loop
        - {name: bash, input: {command: "pytest -q"}}
      usage: {input_tokens: 1200, ...}          # optional; estimated from the request otherwise
      error: {kind: overloaded, message: "..."} # optional: raise a ProviderError instead
      overflow: {tokens: 210000, maximum: 200000}  # optional: raise "prompt is too long"

When the script runs out, `stream` answers "Done." and `complete` writes a deterministic summary of
its input (the person's words and the tool calls), so a session can always go on, and `/summary`
in `--demo` shows the conversation, not its own prompt.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.core.errors import ConfigError, ContextOverflowError, ProviderError
from agent_cli.core.types import Block, BlockMeta, Message, ModelInfo, Trust, Usage
from agent_cli.llm.base import (
    Request,
    StreamDone,
    StreamEvent,
    StreamText,
    StreamThinking,
    StreamToolInput,
    StreamToolStart,
    StreamUsage,
    collect,
)
from agent_cli.llm.models import model_info

DEMO_SCRIPT = Path(__file__).with_name("demo_script.yaml")
DEMO_MODEL = "demo"  # models.toml's [models.demo]: free, no prompt cache


@dataclass
class Script:
    responses: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Script:
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read script {path}: {exc}") from exc
        return cls.parse(raw, str(path))

    @classmethod
    def parse(cls, raw: str, origin: str = "<script>") -> Script:
        try:
            if raw.lstrip().startswith(("{", "[")):
                data = json.loads(raw)
            else:
                import yaml

                data = yaml.safe_load(raw)
        except Exception as exc:  # noqa: BLE001 - any parse failure is a config error
            raise ConfigError(f"script {origin} is not valid YAML/JSON: {exc}") from exc
        if isinstance(data, list):
            data = {"responses": data}
        if not isinstance(data, dict) or not isinstance(data.get("responses", []), list):
            raise ConfigError(f"script {origin}: expected a mapping with a 'responses' list")
        return cls(
            responses=[r if isinstance(r, dict) else {"text": str(r)} for r in data.get("responses", [])],
            summaries=[str(s) for s in data.get("summaries", [])],
        )


class ScriptedProvider:
    """Plays `script`; records every request it received in `requests`."""

    name = "scripted"
    routes_any_model = True  # it plays its script whatever the model is called

    def __init__(self, script: Script | None = None, *, chunk_delay: float = 0.0, model: str = "scripted"):
        self.script = script or Script()
        self.chunk_delay = chunk_delay
        self.model = model
        self.requests: list[Request] = []
        self.completions: list[Request] = []
        self._next = 0
        self._next_summary = 0

    def model_info(self, model: str) -> ModelInfo:
        return model_info(model)

    async def count_tokens(self, request: Request) -> int | None:
        """What this provider would bill for `request` (its one estimator, as a real API's count is)."""
        return _estimate_usage(request, {}).input_tokens

    def _take(self) -> dict[str, Any]:
        if self._next < len(self.script.responses):
            response = self.script.responses[self._next]
            self._next += 1
            return response
        return {"text": "Done."}

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        response = self._take()
        async for event in self._play(request, response):
            yield event

    async def _play(self, request: Request, response: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        if "overflow" in response:
            spec = response["overflow"]
            tokens, maximum = int(spec["tokens"]), int(spec["maximum"])
            raise ContextOverflowError(
                kind="context_overflow",
                message=f"prompt is too long: {tokens} tokens > {maximum} maximum",
                status=400,
                tokens=tokens,
                maximum=maximum,
            )
        if "error" in response:
            spec = response["error"]
            raise ProviderError(
                kind=spec.get("kind", "server"),
                message=spec.get("message", "scripted error"),
                status=spec.get("status"),
            )
        usage = (
            Usage.from_json(response["usage"]) if "usage" in response else _estimate_usage(request, response)
        )
        yield StreamUsage(
            Usage(usage.input_tokens, 0, usage.cache_read_input_tokens, usage.cache_creation_input_tokens)
        )
        blocks: list[Block] = []
        assistant = BlockMeta(trust=Trust.ASSISTANT, source="assistant")
        if response.get("thinking"):
            for chunk in _chunks(str(response["thinking"])):
                await self._pause()
                yield StreamThinking(chunk)
            blocks.append(
                Block(type="thinking", text=str(response["thinking"]), signature="scripted", meta=assistant)
            )
        text = str(response.get("text") or "")
        if text:
            for chunk in _chunks(text):
                await self._pause()
                yield StreamText(chunk)
            blocks.append(Block.text_block(text, assistant))
        for index, call in enumerate(response.get("tool_calls") or []):
            call_id = str(call.get("id") or f"toolu_s{len(self.requests):03d}_{index}")
            name = str(call["name"])
            payload = dict(call.get("input") or {})
            yield StreamToolStart(call_id, name)
            yield StreamToolInput(call_id, json.dumps(payload))
            blocks.append(Block.tool_use(call_id, name, payload))
        if not blocks:
            blocks.append(Block.text_block("(empty response)", assistant))
        stop = (
            "tool_use"
            if any(b.type == "tool_use" for b in blocks)
            else str(response.get("stop_reason", "end_turn"))
        )
        yield StreamUsage(usage)
        yield StreamDone(Message("assistant", tuple(blocks)), usage, stop)

    async def _pause(self) -> None:
        await asyncio.sleep(self.chunk_delay)  # also yields control, so interrupts land mid-stream

    async def complete(self, request: Request) -> StreamDone:
        self.completions.append(request)
        if self._next_summary < len(self.script.summaries):
            text = self.script.summaries[self._next_summary]
            self._next_summary += 1
        else:
            text = _fallback_summary(request)
        response = {"text": text}
        return await collect(self._play(request, response))


def _chunks(text: str, size: int = 12) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _estimate_usage(request: Request, response: dict[str, Any]) -> Usage:
    body = json.dumps(request.to_api())
    out = len(json.dumps(response)) // 4
    return Usage(input_tokens=max(1, len(body) // 4), output_tokens=max(1, out))


def _fallback_summary(request: Request) -> str:
    """A deterministic 'summary' of what was given: the person's words and the tool calls of the
    conversation. The last message is the instruction to summarize and is left out, so `/summary`
    in `--demo` shows the conversation, not the program's own prompt."""
    lines: list[str] = []
    for message in request.messages[:-1]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            text = block.get("text", "") if block.get("type") == "text" else ""
            if message["role"] == "user" and _first_line(text) and not text.lstrip().startswith("<"):
                lines.append(f"the person: {_first_line(text)}")  # (a `<tag>` block is an injection)
            elif block.get("type") == "tool_use":
                values = [v for v in (block.get("input") or {}).values() if isinstance(v, str)]
                lines.append(f"{block.get('name')} {_first_line(values[0]) if values else ''}".rstrip())
    return "## Summary (scripted)\n" + "\n".join(f"- {line[:160]}" for line in lines[-12:])


def _first_line(text: str) -> str:
    """The first line that says something (a bare `<tag>` line, as injections open with, does not)."""
    lines = (line.strip() for line in text.splitlines())
    return next((line for line in lines if line and not re.fullmatch(r"</?[\w-]+>", line)), "")


def demo_provider(chunk_delay: float = 0.01) -> ScriptedProvider:
    """The provider behind `agent --demo`: a short task in the current workspace, no network."""
    return ScriptedProvider(Script.load(DEMO_SCRIPT), chunk_delay=chunk_delay, model=DEMO_MODEL)
