"""A local HTTP server that speaks OpenAI's chat-completions API, for tests and for manual runs.

    server = FakeOpenAI().start()            # port 0: a free port; server.url -> http://127.0.0.1:PORT/v1
    server.push(text("hi"), reply(ToolUse("read_file", {...}), ToolUse("ls", {...})), rate_limited(0.05))
    ... point OPENAI_BASE_URL at server.url ...
    server.requests[-1]["messages"]          # every POST body, in order (headers: .headers)
    server.stop()

`POST /v1/chat/completions` answers from the same scripted replies as the Anthropic fake (replies.py):
a `Reply`'s text streams as `content` deltas, `Thinking` as `reasoning_content`, and several `ToolUse`
blocks as parallel `tool_calls` whose argument deltas interleave by `index`; the last chunks carry
the finish_reason and (with `stream_options.include_usage`) usage with
`prompt_tokens_details.cached_tokens`; then `data: [DONE]`. A `Fault` is an error answer in OpenAI's
shape ({"error": {"message", "type", "code"}}) with its headers (retry-after); `Disconnect` cuts the
stream, `StreamError` sends an error chunk mid-stream, `Stall` waits for `release()`.
Requests are validated first (openai_validate.py: a bad one gets 400 and does not consume the queue),
then checked against `max_prompt_tokens` (400 context_length_exceeded, worded as OpenAI, vLLM or
llama.cpp by `overflow_style`). Prompt tokens are chars/4 of the body; cached_tokens are the prefix
of the messages shared with an earlier request (what OpenAI's automatic prompt caching reads).

Manual run: python -m tests.fakeapi.openai_server --port 8766 --script replies.yaml
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakeapi.cache import estimate_tokens
from tests.fakeapi.openai_validate import Invalid, validate_chat
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
    reply_from_json,
    text,
)

OVERFLOW_STYLES = ("openai", "vllm", "llamacpp")


def context_length_exceeded(tokens: int, maximum: int, style: str = "openai") -> Fault:
    """The 400 a server sends for a prompt over the window, worded as `style` words it."""
    if style == "vllm":
        message = (
            f"This model's maximum context length is {maximum} tokens. However, your request has "
            f"{tokens} input tokens. Please reduce the length of the input messages."
        )
        return Fault(400, "BadRequestError", message)
    if style == "llamacpp":
        return Fault(
            400,
            "exceed_context_size_error",
            "the request exceeds the available context size, try increasing it",
            extra={"n_prompt_tokens": tokens, "n_ctx": maximum},
        )
    message = (
        f"This model's maximum context length is {maximum} tokens. However, your messages resulted in "
        f"{tokens} tokens. Please reduce the length of the messages."
    )
    return Fault(400, "invalid_request_error", message, code="context_length_exceeded")


class FakeOpenAI:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        require_key: str | None = None,
        max_prompt_tokens: int | None = None,
        overflow_style: str = "openai",
        separate_summaries: bool = False,
        models: tuple[str, ...] = ("fake-model",),
    ) -> None:
        assert overflow_style in OVERFLOW_STYLES, overflow_style
        self.require_key = require_key
        self.max_prompt_tokens = max_prompt_tokens
        self.overflow_style = overflow_style
        self.separate_summaries = separate_summaries  # a request without tools gets a summary, off-queue
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.statuses: list[int] = []
        self.summary_requests: list[dict[str, Any]] = []
        self._prefixes: list[str] = []  # serialized messages of earlier requests (the prompt cache)
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._release = threading.Semaphore(0)
        self._stopped = threading.Event()
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *replies: Scripted | str | dict[str, Any]) -> None:
        made = [
            r if isinstance(r, Reply | Fault | StreamError | Disconnect | Stall) else reply_from_json(r)
            for r in replies
        ]
        with self._lock:
            self._queue.extend(made)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def release(self, count: int = 1) -> None:
        self._release.release(count)

    def next_reply(self) -> Scripted:
        with self._lock:
            return self._queue.popleft() if self._queue else text("ok")

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_fake_{next(self._ids):04d}"

    def cached_tokens(self, body: dict[str, Any]) -> int:
        """Tokens of the longest prefix of this request's messages that an earlier request sent."""
        serial = json.dumps([body.get("tools"), body.get("messages")], sort_keys=True)
        with self._lock:
            best = max((_common_prefix(serial, p) for p in self._prefixes), default=0)
            self._prefixes.append(serial)
        return estimate_tokens(best) if best else 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1"

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.fake.models]
            self._json(200, {"object": "list", "data": data})
            return
        self._error(404, "not_found_error", f"Not found: {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        with self.fake._lock:
            self.fake.headers.append(headers)
            self.fake.requests.append(body if isinstance(body, dict) else {"_unparsed": raw})
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, "not_found_error", f"Not found: {path}")
            return
        key = headers.get("authorization", "").removeprefix("Bearer ")
        if self.fake.require_key is not None and key != self.fake.require_key:
            self._error(401, "invalid_request_error", "Incorrect API key provided.", code="invalid_api_key")
            return
        try:
            validate_chat(body)
        except Invalid as err:
            self._error(400, "invalid_request_error", str(err))
            return
        assert isinstance(body, dict)
        tokens = estimate_tokens(len(raw))
        limit = self.fake.max_prompt_tokens
        if limit is not None and tokens > limit:
            self._fault(context_length_exceeded(tokens, limit, self.fake.overflow_style))
            return
        self._answer(body, tokens)

    # -- answers --------------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any], tokens: int) -> None:
        if self.fake.separate_summaries and not body.get("tools"):
            self.fake.summary_requests.append(body)
            scripted: Scripted = text(f"## Summary\nA fake summary of a request of {tokens} tokens.")
        else:
            scripted = self.fake.next_reply()
        if isinstance(scripted, Fault):
            self._fault(scripted)
            return
        reply = scripted if isinstance(scripted, Reply) else (scripted.reply or text("ok"))
        cached = min(tokens, self.fake.cached_tokens(body))
        calls = [b for b in reply.blocks if isinstance(b, ToolUse)]
        ids = [c.id or self.fake.next_id("call") for c in calls]
        content = "".join(b.text for b in reply.blocks if isinstance(b, Text))
        reasoning = "".join(b.text for b in reply.blocks if isinstance(b, Thinking))
        output = reply.output_tokens or max(
            1, estimate_tokens(len(content) + len(reasoning) + 40 * len(calls))
        )
        usage = {
            "prompt_tokens": tokens,
            "completion_tokens": output,
            "total_tokens": tokens + output,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        finish = {"tool_use": "tool_calls", "max_tokens": "length"}.get(reply.effective_stop_reason, "stop")
        base = {"id": self.fake.next_id("chatcmpl"), "created": int(time.time()), "model": body["model"]}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            if calls:
                message["tool_calls"] = [_call_json(i, c) for i, c in zip(ids, calls, strict=True)]
            choice = {"index": 0, "message": message, "finish_reason": finish}
            self._json(200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        self._begin_stream()
        chunks = list(_deltas(reply, ids, calls))
        cut = scripted.after_blocks if isinstance(scripted, StreamError | Disconnect | Stall) else None
        for block_index, delta in chunks:
            if cut is not None and block_index >= cut:
                cut = None
                if not self._interrupt(scripted):
                    return
            self._data({**base, "object": "chat.completion.chunk", "choices": [_choice(delta)]})
        if cut is not None and not self._interrupt(scripted):  # cut after the last block
            return
        self._data({**base, "object": "chat.completion.chunk", "choices": [_choice({}, finish)]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._data({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _interrupt(self, scripted: Scripted) -> bool:
        if isinstance(scripted, StreamError):
            self._data({"error": {"message": scripted.message, "type": scripted.error_type, "code": None}})
            self._chunk(b"")
            return False
        if isinstance(scripted, Disconnect):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False
        while not self.fake._release.acquire(timeout=0.05):
            if self.fake._stopped.is_set():
                return False
        return True

    # -- wire -----------------------------------------------------------------------------------
    def _begin_stream(self) -> None:
        self.fake.statuses.append(200)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _data(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.fake.statuses.append(status)  # before the answer leaves, so a test never sees it missing
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _fault(self, fault: Fault) -> None:
        self._error(fault.status, fault.error_type, fault.message, fault.headers, fault.code, fault.extra)

    def _error(
        self,
        status: int,
        error_type: str,
        message: str,
        headers: dict[str, str] | None = None,
        code: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        error = {"message": message, "type": error_type, "param": None, "code": code, **(extra or {})}
        self._json(status, {"error": error}, headers)


def _call_json(call_id: str, call: ToolUse) -> dict[str, Any]:
    arguments = json.dumps(call.input, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def _choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}


def _deltas(reply: Reply, ids: list[str], calls: list[ToolUse]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(block index, delta) in stream order: the role, text and reasoning deltas, then the tool calls
    (each started with its id and name, then the arguments of all calls interleaved)."""
    size = reply.chunk_chars
    yield 0, {"role": "assistant", "content": ""}
    first_call = len(reply.blocks)
    for index, block in enumerate(reply.blocks):
        if isinstance(block, Text):
            for piece in _pieces(block.text, size):
                yield index, {"content": piece}
        elif isinstance(block, Thinking):
            for piece in _pieces(block.text, size):
                yield index, {"reasoning_content": piece}
        else:
            first_call = min(first_call, index)
    pending: list[deque[str]] = []
    for n, (call_id, call) in enumerate(zip(ids, calls, strict=True)):
        start = {
            "index": n,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield first_call + n, {"tool_calls": [start]}
        pending.append(deque(_pieces(json.dumps(call.input, ensure_ascii=False), size)))
    while any(pending):
        for n, pieces in enumerate(pending):
            if pieces:
                yield (
                    first_call + n,
                    {"tool_calls": [{"index": n, "function": {"arguments": pieces.popleft()}}]},
                )


def _pieces(value: str, size: int) -> list[str]:
    size = max(1, size)
    return [value[i : i + size] for i in range(0, len(value), size)]


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def main(argv: list[str] | None = None) -> None:
    from tests.fakeapi.server import load_script

    parser = argparse.ArgumentParser(description="A local server that speaks OpenAI's chat-completions API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON or YAML list of scripted replies")
    parser.add_argument("--require-key", help="answer 401 unless the bearer key is this value")
    parser.add_argument("--max-prompt-tokens", type=int, help="answer context_length_exceeded above this")
    parser.add_argument("--overflow-style", choices=OVERFLOW_STYLES, default="openai")
    args = parser.parse_args(argv)
    server = FakeOpenAI(
        args.host,
        args.port,
        require_key=args.require_key,
        max_prompt_tokens=args.max_prompt_tokens,
        overflow_style=args.overflow_style,
    )
    if args.script:
        server.push(*load_script(args.script))
    server.start()
    print(f"fake OpenAI API on {server.url} ({server.pending} scripted replies, then 'ok')", flush=True)
    print(f"  export OPENAI_BASE_URL={server.url} OPENAI_API_KEY={args.require_key or 'sk-fake'}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
