"""A local HTTP server that speaks the Anthropic Messages API, for tests and for manual runs.

    server = FakeAnthropic().start()        # port 0: a free port; server.url -> http://127.0.0.1:PORT
    server.push(text("hello"), tool_call("read_file", {"path": "a.py"}), rate_limited(retry_after=2))
    ... point ANTHROPIC_BASE_URL (or base_url=) at server.url ...
    server.requests[-1]["messages"]        # every POST /v1/messages body, in order (headers: .headers)
    server.stop()

`POST /v1/messages` answers from the queue of scripted replies (replies.py), or a short text "ok"
when it is empty, or — with a `responder` — from a model that reacts to each request (reactive.py); `stream: true` gets SSE exactly like the real API (message_start with usage incl.
cache fields, ping, content_block_start/delta/stop for text, thinking and tool_use, message_delta
with stop_reason and output_tokens, message_stop). `POST /v1/messages/count_tokens` answers
{"input_tokens": N}. Requests are validated first (validate.py: a bad one gets 400
invalid_request_error and does not consume the queue), then checked against `max_prompt_tokens`.
Token estimates are chars/4 of the JSON body; cache usage is simulated (cache.py).

Manual run: python -m tests.fakeapi.server --port 8765 --script replies.yaml
(the script is a JSON or YAML list of entries, see replies.reply_from_json).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.fakeapi.binding import PreservedThinking
from tests.fakeapi.cache import PromptCache, estimate_tokens, request_tokens
from tests.fakeapi.http_base import FakeHandler, FakeServer, Responder, command_line, pieces, serve
from tests.fakeapi.replies import (
    Disconnect,
    Fault,
    Reply,
    Scripted,
    Stall,
    StreamError,
    Text,
    Thinking,
    ToolUse,
    text,
)
from tests.fakeapi.validate import Invalid, validate

API_VERSION_HEADER = "anthropic-version"


class FakeAnthropic(FakeServer):
    name = "fake-anthropic"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        require_key: str | None = None,
        max_prompt_tokens: int | None = None,
        cache_min_tokens: int = 0,
        clock: Callable[[], float] = time.monotonic,
        separate_summaries: bool = False,
        responder: Responder | None = None,
        bind_thinking: bool = False,
    ) -> None:
        super().__init__(
            host,
            port,
            _Handler,
            require_key=require_key,
            max_prompt_tokens=max_prompt_tokens,
            separate_summaries=separate_summaries,
            responder=responder,
        )
        self.cache = PromptCache(clock, cache_min_tokens)
        self.count_requests: list[dict[str, Any]] = []  # bodies of POST /v1/messages/count_tokens
        # bind_thinking: thinking blocks are bound to their prefix, as a model with preserved thinking's
        # are (binding.py): one sent back after its prefix changed is refused, or dropped when asked
        self.binding = PreservedThinking() if bind_thinking else None

    def record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        with self.lock:
            self.headers.append(headers)
            (self.count_requests if path.endswith("/count_tokens") else self.requests).append(body)


class _Handler(FakeHandler):
    server_version = "fake-anthropic/1"

    @property
    def fake(self) -> FakeAnthropic:
        return self.server.fake  # type: ignore[attr-defined]

    def answer_headers(self) -> dict[str, str]:
        return {"request-id": self.fake.next_id("req")}

    def do_GET(self) -> None:  # noqa: N802
        self._error(404, "not_found_error", f"Not found: {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        path, raw, headers, body = self.read_request()
        self.fake.record(path, headers, body if isinstance(body, dict) else {"_unparsed": raw})
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._error(404, "not_found_error", f"Not found: {path}")
            return
        if self.fake.require_key is not None and api_key_from(headers) != self.fake.require_key:
            self._error(401, "authentication_error", "invalid x-api-key")
            return
        if not headers.get(API_VERSION_HEADER):
            self._error(400, "invalid_request_error", "anthropic-version: header is required")
            return
        if body is None:
            self._error(400, "invalid_request_error", "There was an error parsing the body: not valid JSON")
            return
        count_only = path.endswith("/count_tokens")
        try:
            validate(body, count_only=count_only)
        except Invalid as err:
            self._error(400, "invalid_request_error", str(err))
            return
        if self.fake.binding is not None and not count_only:
            body, refused = self.fake.binding.check(body)
            if refused:
                self._error(400, "invalid_request_error", refused)
                return
        tokens = request_tokens(len(raw), body)
        limit = self.fake.max_prompt_tokens
        if limit is not None and tokens > limit:
            self._error(
                400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {limit} maximum"
            )
            return
        if count_only:
            self.json_answer(200, {"input_tokens": tokens})
            return
        self._answer(body, tokens)

    # -- answers --------------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any], tokens: int) -> None:
        side = not body.get("tools") or (body.get("tool_choice") or {}).get("type") == "none"
        scripted = self.fake.scripted_for(body, tokens, side=side)
        if isinstance(scripted, Fault):
            self._error(scripted.status, scripted.error_type, scripted.message, scripted.headers)
            return
        reply = scripted if isinstance(scripted, Reply) else (scripted.reply or text("ok"))
        with self.fake.lock:
            cached = self.fake.cache.account(body, tokens)
        if self.fake.responder is not None:
            self.fake.responder.observe(body, cached, side=side)
        usage = {
            "input_tokens": cached.input_tokens,
            "cache_creation_input_tokens": cached.cache_creation_input_tokens,
            "cache_read_input_tokens": cached.cache_read_input_tokens,
            "cache_creation": {  # the writes by TTL, as the API reports them
                "ephemeral_5m_input_tokens": cached.cache_creation_input_tokens
                - cached.cache_creation_1h_input_tokens,
                "ephemeral_1h_input_tokens": cached.cache_creation_1h_input_tokens,
            },
        }
        blocks = [self._content(b) for b in reply.blocks]
        if self.fake.binding is not None:
            blocks = self.fake.binding.sign(body, blocks)
        output_tokens = reply.output_tokens or max(1, estimate_tokens(len(json.dumps(blocks))))
        message = {
            "id": self.fake.next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": reply.effective_stop_reason,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": output_tokens},
        }
        if not body.get("stream"):
            self.json_answer(200, message)
            return
        self._stream(message, reply, scripted, usage)

    def _content(self, block: Text | Thinking | ToolUse) -> dict[str, Any]:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            return {"type": "thinking", "thinking": block.text, "signature": block.signature}
        return {
            "type": "tool_use",
            "id": block.id or self.fake.next_id("toolu"),
            "name": block.name,
            "input": block.input,
        }

    def _stream(
        self, message: dict[str, Any], reply: Reply, scripted: Scripted, usage: dict[str, int]
    ) -> None:
        self.begin_stream()
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        self._event("message_start", {"type": "message_start", "message": start})
        self._event("ping", {"type": "ping"})
        cut = scripted.after_blocks if isinstance(scripted, StreamError | Disconnect | Stall) else None
        for index, block in enumerate(message["content"]):
            if index == cut:
                if not self._interrupt(scripted):
                    return
            self._block(index, block, reply.chunk_chars)
        if cut is not None and cut >= len(message["content"]) and not self._interrupt(scripted):
            return
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        output = {"output_tokens": message["usage"]["output_tokens"]}
        self._event("message_delta", {"type": "message_delta", "delta": delta, "usage": output})
        self._event("message_stop", {"type": "message_stop"})
        self.chunk(b"")

    def _interrupt(self, scripted: Scripted) -> bool:
        """Apply a mid-stream fault; True when the stream goes on afterwards (a released Stall)."""

        def send_error(fault: StreamError) -> None:
            self._event(
                "error", {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
            )

        return self.cut_stream(scripted, send_error)

    def _block(self, index: int, block: dict[str, Any], size: int) -> None:
        kind = block["type"]
        if kind == "text":
            start, pieces = (
                {"type": "text", "text": ""},
                [("text_delta", "text", c) for c in _chunks(block["text"], size)],
            )
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            pieces = [("thinking_delta", "thinking", c) for c in _chunks(block["thinking"], size)]
            pieces.append(("signature_delta", "signature", block["signature"]))
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            encoded = json.dumps(block["input"], ensure_ascii=False)
            pieces = [("input_json_delta", "partial_json", "")]
            pieces += [("input_json_delta", "partial_json", c) for c in _chunks(encoded, size)]
        self._event(
            "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        )
        for delta_type, field, value in pieces:
            delta = {"type": delta_type, field: value}
            self._event(
                "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
            )
        self._event("content_block_stop", {"type": "content_block_stop", "index": index})

    # -- wire -----------------------------------------------------------------------------------
    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.chunk(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

    def _error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        payload = {"type": "error", "error": {"type": error_type, "message": message}}
        self.json_answer(status, payload, headers)


def api_key_from(headers: dict[str, str]) -> str | None:
    """The key a request carried: `x-api-key`, or `authorization: Bearer KEY` (what SDK 2.x sends)."""
    if headers.get("x-api-key"):
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


def _chunks(value: str, size: int) -> list[str]:
    return pieces(value, size) or [""]


def main(argv: list[str] | None = None) -> None:
    parser = command_line(
        "A local server that speaks the Anthropic Messages API.",
        8765,
        "answer 'prompt is too long' above this",
    )
    parser.add_argument("--cache-min-tokens", type=int, default=0)
    parser.add_argument(
        "--bind-thinking", action="store_true", help="bind thinking blocks to their prefix (binding.py)"
    )
    args = parser.parse_args(argv)
    server = FakeAnthropic(
        args.host,
        args.port,
        require_key=args.require_key,
        max_prompt_tokens=args.max_prompt_tokens,
        cache_min_tokens=args.cache_min_tokens,
        bind_thinking=args.bind_thinking,
    )
    serve(
        server,
        args.script,
        lambda s: [
            f"fake Anthropic API on {s.url} ({s.pending} scripted replies, then 'ok')",
            f"  export ANTHROPIC_BASE_URL={s.url} ANTHROPIC_API_KEY={args.require_key or 'sk-ant-fake'}",
            *(
                ["  thinking is bound to its prefix: a changed prefix gets a 400 (or the block dropped)"]
                if args.bind_thinking
                else []
            ),
        ],
    )


if __name__ == "__main__":
    main()
