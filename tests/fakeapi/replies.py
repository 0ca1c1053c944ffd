"""What the fake Messages API answers: scripted replies and faults, pushed by a test (or a script file).

A reply is one of:
- `Reply(blocks, stop_reason=None)` — a normal answer made of `Text`, `Thinking` and `ToolUse` blocks;
- `Fault(status, error_type, message, headers)` — an HTTP error answer (429, 529, 400 prompt too long...);
- `StreamError(error_type, message, after_blocks, reply)` — a 200 stream that sends message_start, the
  first `after_blocks` content blocks of `reply`, then an SSE `error` event (like a real mid-stream
  `overloaded_error`);
- `Disconnect(after_blocks, reply)` — the connection is cut mid-stream, without message_stop;
- `Stall(after_blocks, reply)` — the stream stops sending after `after_blocks` blocks and waits until
  `server.release()` (or the server stops), so a test can interrupt a response in flight;
- `Until(reply, pattern)` — a model that polls: `reply` answers until the request's tool results
  match `pattern`, then the next entry does (a test waits for a condition in the script, not by sleeping).

`reply_from_json` reads the same things from a script file (see server.py for the format).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Thinking:
    text: str
    signature: str = "sig-fake"


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""  # generated (toolu_fake_N) when empty


ReplyBlock = Text | Thinking | ToolUse


@dataclass(frozen=True)
class Reply:
    blocks: tuple[ReplyBlock, ...]
    stop_reason: str | None = None  # default: "tool_use" when a ToolUse is present, else "end_turn"
    output_tokens: int | None = None  # default: chars/4 of the output
    chunk_chars: int = 8  # text, thinking and tool JSON are streamed in deltas of this many characters

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


@dataclass(frozen=True)
class Fault:
    status: int
    error_type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    code: str | None = None  # OpenAI's error `code` (the OpenAI fake only)
    extra: dict[str, Any] = field(default_factory=dict)  # more fields of the error object (OpenAI fake)


@dataclass(frozen=True)
class StreamError:
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    after_blocks: int = 0
    reply: Reply | None = None


@dataclass(frozen=True)
class Disconnect:
    after_blocks: int = 0
    reply: Reply | None = None


@dataclass(frozen=True)
class Stall:
    after_blocks: int = 0
    reply: Reply | None = None


Scripted = Reply | Fault | StreamError | Disconnect | Stall


@dataclass(frozen=True)
class Until:
    """A model that polls: `reply` again and again (fresh tool ids each time) until a tool result of
    the request matches `pattern` (a regular expression, `^`/`$` at line ends); then the next entry
    answers. After `limit` repeats it gives up and the next entry answers, so a test fails on its
    assertions instead of hanging."""

    reply: Reply
    pattern: str
    limit: int = 1000


# -- constructors -----------------------------------------------------------------------------


def text(content: str, stop_reason: str | None = None) -> Reply:
    return Reply((Text(content),), stop_reason=stop_reason)


def tool_call(name: str, input: dict[str, Any] | None = None, id: str = "", say: str = "") -> Reply:
    blocks: tuple[ReplyBlock, ...] = (ToolUse(name, dict(input or {}), id),)
    return Reply(((Text(say),) if say else ()) + blocks)


def reply(*blocks: ReplyBlock | str, stop_reason: str | None = None, chunk_chars: int = 8) -> Reply:
    made = tuple(Text(b) if isinstance(b, str) else b for b in blocks)
    return Reply(made, stop_reason=stop_reason, chunk_chars=chunk_chars)


def rate_limited(retry_after: float | None = 1, message: str = "Rate limited") -> Fault:
    headers = {} if retry_after is None else {"retry-after": _num(retry_after)}
    return Fault(429, "rate_limit_error", message, headers)


def overloaded(status: int = 529, headers: dict[str, str] | None = None) -> Fault:
    return Fault(status, "overloaded_error", "Overloaded", dict(headers or {}))


def prompt_too_long(tokens: int, maximum: int) -> Fault:
    return Fault(400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {maximum} maximum")


def server_error(status: int = 500) -> Fault:
    return Fault(status, "api_error", "Internal server error")


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# -- script files -------------------------------------------------------------------------------


def reply_from_json(data: Any) -> Scripted:
    """One script entry: a string (text), or a mapping with one of the shapes below.

    {"text": "..."} · {"thinking": "...", "text": "..."} ·
    {"tool_calls": [{"name": "read_file", "input": {...}, "id": "optional"}], "text": "optional"} ·
    {"blocks": [{"type": "text"|"thinking"|"tool_use", ...}], "stop_reason": "..."} ·
    {"error": {"status": 429, "type": "rate_limit_error", "message": "...", "headers": {...}}} ·
    {"stream_error": {"type": "overloaded_error", "message": "...", "after_blocks": 0}, "text": "..."} ·
    {"disconnect": {"after_blocks": 1}, "text": "..."} · {"stall": {"after_blocks": 1}, "text": "..."}
    """
    if isinstance(data, str):
        return text(data)
    if not isinstance(data, dict):
        raise ValueError(f"a script entry must be a string or a mapping, not {type(data).__name__}")
    if "error" in data:
        err = data["error"]
        if not isinstance(err, dict) or "status" not in err:
            raise ValueError("'error' needs a mapping with at least 'status'")
        return Fault(
            int(err["status"]),
            str(err.get("type", "api_error")),
            str(err.get("message", "error")),
            {str(k): str(v) for k, v in (err.get("headers") or {}).items()},
            None if err.get("code") is None else str(err["code"]),
        )
    body = _reply_body(data)
    if "stream_error" in data:
        spec = data["stream_error"] or {}
        return StreamError(
            str(spec.get("type", "overloaded_error")),
            str(spec.get("message", "Overloaded")),
            int(spec.get("after_blocks", 0)),
            body,
        )
    if "disconnect" in data:
        return Disconnect(int((data["disconnect"] or {}).get("after_blocks", 0)), body)
    if "stall" in data:
        return Stall(int((data["stall"] or {}).get("after_blocks", 0)), body)
    if body is None:
        raise ValueError(f"a script entry needs text, thinking, tool_calls or blocks: {data!r}")
    return body


def _reply_body(data: dict[str, Any]) -> Reply | None:
    blocks: list[ReplyBlock] = []
    for raw in data.get("blocks") or []:
        blocks.append(_block_from_json(raw))
    if data.get("thinking"):
        blocks.append(Thinking(str(data["thinking"])))
    if data.get("text"):
        blocks.append(Text(str(data["text"])))
    for call in data.get("tool_calls") or []:
        if not isinstance(call, dict) or "name" not in call:
            raise ValueError(f"a tool call needs a name: {call!r}")
        blocks.append(ToolUse(str(call["name"]), dict(call.get("input") or {}), str(call.get("id", ""))))
    if not blocks:
        return None
    return Reply(tuple(blocks), stop_reason=data.get("stop_reason"))


def _block_from_json(raw: Any) -> ReplyBlock:
    if not isinstance(raw, dict):
        raise ValueError(f"a block must be a mapping: {raw!r}")
    kind = raw.get("type")
    if kind == "text":
        return Text(str(raw.get("text", "")))
    if kind == "thinking":
        return Thinking(str(raw.get("thinking", raw.get("text", ""))), str(raw.get("signature", "sig-fake")))
    if kind == "tool_use":
        return ToolUse(str(raw["name"]), dict(raw.get("input") or {}), str(raw.get("id", "")))
    raise ValueError(f"unknown block type {kind!r}")
