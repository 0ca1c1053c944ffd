"""A local HTTP server that speaks the Anthropic Messages API, for tests and for manual runs.

    server = FakeAnthropic().start()        # port 0: a free port; server.url -> http://127.0.0.1:PORT
    server.push(text("hello"), tool_call("read_file", {"path": "a.py"}), rate_limited(retry_after=2))
    ... point ANTHROPIC_BASE_URL (or base_url=) at server.url ...
    server.requests[-1]["messages"]        # every POST /v1/messages body, in order (headers: .headers)
    server.stop()

`POST /v1/messages` answers from the queue of scripted replies (replies.py), or a short text "ok"
when it is empty; `stream: true` gets SSE exactly like the real API (message_start with usage incl.
cache fields, ping, content_block_start/delta/stop for text, thinking and tool_use, message_delta
with stop_reason and output_tokens, message_stop). `POST /v1/messages/count_tokens` answers
{"input_tokens": N}. Requests are validated first (validate.py: a bad one gets 400
invalid_request_error and does not consume the queue), then checked against `max_prompt_tokens`.
Token estimates are chars/4 of the JSON body; cache usage is simulated (cache.py).

Manual run: python -m tests.fakeapi.server --port 8765 --script replies.yaml
(the script is a JSON or YAML list of entries, see replies.reply_from_json).
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakeapi.cache import PromptCache, estimate_tokens
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
from tests.fakeapi.validate import Invalid, validate

API_VERSION_HEADER = "anthropic-version"


class FakeAnthropic:
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
    ) -> None:
        self.require_key = require_key
        self.max_prompt_tokens = max_prompt_tokens
        self.cache = PromptCache(clock, cache_min_tokens)
        self.requests: list[dict[str, Any]] = []  # bodies of POST /v1/messages (valid or not)
        self.headers: list[dict[str, str]] = []  # headers of every request, in order
        self.count_requests: list[dict[str, Any]] = []  # bodies of POST /v1/messages/count_tokens
        self.statuses: list[int] = []  # the HTTP status of every answer
        self._queue: deque[Scripted] = deque()
        self._routes: list[tuple[str, deque[Scripted]]] = []  # (marker in the first message, replies)
        # separate_summaries: a request without tools (a summarizer's call) or with tool_choice none (a
        # session-memory update on the conversation's prefix) is answered with a summary
        # of its own and does not consume the scripted queue, so a test can script the agent's turns
        # without knowing when the engine will summarize
        self.separate_summaries = separate_summaries
        self.summary_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._release = threading.Semaphore(0)
        self._stopped = threading.Event()
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------------------------
    def push(self, *replies: Scripted | str | dict[str, Any]) -> None:
        """Queue replies; a str is a text reply, a dict is a script entry (replies.reply_from_json)."""
        made = [
            r if isinstance(r, Reply | Fault | StreamError | Disconnect | Stall) else reply_from_json(r)
            for r in replies
        ]
        with self._lock:
            self._queue.extend(made)

    def route(self, marker: str, *replies: Scripted | str | dict[str, Any]) -> None:
        """Replies for the conversations whose first message contains `marker` (a sub-agent's prompt,
        say): they are answered from this queue, in order, before the shared one."""
        made = [
            r if isinstance(r, Reply | Fault | StreamError | Disconnect | Stall) else reply_from_json(r)
            for r in replies
        ]
        with self._lock:
            self._routes.append((marker, deque(made)))

    def conversations(self, marker: str) -> list[dict[str, Any]]:
        """The request bodies whose first message contains `marker`."""
        with self._lock:
            return [b for b in self.requests if marker in _first_message(b)]

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def release(self, count: int = 1) -> None:
        """Let `count` stalled streams (Stall) continue."""
        self._release.release(count)

    def _next_reply(self, body: dict[str, Any] | None = None) -> Scripted:
        with self._lock:
            first = _first_message(body or {})
            for marker, queue in self._routes:
                if queue and marker in first:
                    return queue.popleft()
            return self._queue.popleft() if self._queue else text("ok")

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_fake_{next(self._ids):04d}"

    def _record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        with self._lock:
            self.headers.append(headers)
            (self.count_requests if path.endswith("/count_tokens") else self.requests).append(body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    @property
    def fake(self) -> FakeAnthropic:
        return self.server.fake  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return

    def do_GET(self) -> None:  # noqa: N802
        self._error(404, "not_found_error", f"Not found: {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        self.fake._record(path, headers, body if isinstance(body, dict) else {"_unparsed": raw})
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
        tokens = estimate_tokens(len(raw))
        limit = self.fake.max_prompt_tokens
        if limit is not None and tokens > limit:
            self._error(
                400, "invalid_request_error", f"prompt is too long: {tokens} tokens > {limit} maximum"
            )
            return
        if count_only:
            self._json(200, {"input_tokens": tokens})
            return
        self._answer(body, tokens)

    # -- answers --------------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any], tokens: int) -> None:
        side = not body.get("tools") or (body.get("tool_choice") or {}).get("type") == "none"
        if self.fake.separate_summaries and side:
            self.fake.summary_requests.append(body)
            scripted: Scripted = text(f"## Summary\nA fake summary of a request of {tokens} tokens.")
        else:
            scripted = self.fake._next_reply(body)
        if isinstance(scripted, Fault):
            self._error(scripted.status, scripted.error_type, scripted.message, scripted.headers)
            return
        reply = scripted if isinstance(scripted, Reply) else (scripted.reply or text("ok"))
        with self.fake._lock:
            cached = self.fake.cache.account(body, tokens)
        usage = {
            "input_tokens": cached.input_tokens,
            "cache_creation_input_tokens": cached.cache_creation_input_tokens,
            "cache_read_input_tokens": cached.cache_read_input_tokens,
        }
        blocks = [self._content(b) for b in reply.blocks]
        output_tokens = reply.output_tokens or max(1, estimate_tokens(len(json.dumps(blocks))))
        message = {
            "id": self.fake._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": reply.effective_stop_reason,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": output_tokens},
        }
        if not body.get("stream"):
            self._json(200, message)
            return
        self._stream(message, reply, scripted, usage)

    def _content(self, block: Text | Thinking | ToolUse) -> dict[str, Any]:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            return {"type": "thinking", "thinking": block.text, "signature": block.signature}
        return {
            "type": "tool_use",
            "id": block.id or self.fake._next_id("toolu"),
            "name": block.name,
            "input": block.input,
        }

    def _stream(
        self, message: dict[str, Any], reply: Reply, scripted: Scripted, usage: dict[str, int]
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", self.fake._next_id("req"))
        self.end_headers()
        self.fake.statuses.append(200)
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
        self._chunk(b"")

    def _interrupt(self, scripted: Scripted) -> bool:
        """Apply a mid-stream fault; True when the stream goes on afterwards (a released Stall)."""
        if isinstance(scripted, StreamError):
            error = {"type": "error", "error": {"type": scripted.error_type, "message": scripted.message}}
            self._event("error", error)
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
        self._chunk(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.fake._next_id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.fake.statuses.append(status)

    def _error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        payload = {"type": "error", "error": {"type": error_type, "message": message}}
        self._json(status, payload, headers)


def api_key_from(headers: dict[str, str]) -> str | None:
    """The key a request carried: `x-api-key`, or `authorization: Bearer KEY` (what SDK 2.x sends)."""
    if headers.get("x-api-key"):
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


def _first_message(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return json.dumps(messages[0], ensure_ascii=False) if messages else ""


def _chunks(value: str, size: int) -> list[str]:
    size = max(1, size)
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def load_script(path: Path) -> list[Scripted]:
    """A JSON or YAML list of script entries (or a mapping with a `replies` list)."""
    import yaml  # a project dependency; JSON is valid YAML

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("replies")
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a list of replies (or a mapping with 'replies')")
    try:
        return [reply_from_json(entry) for entry in data]
    except (ValueError, KeyError, TypeError) as err:
        raise SystemExit(f"{path}: {err}") from err


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A local server that speaks the Anthropic Messages API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON or YAML list of scripted replies")
    parser.add_argument("--require-key", help="answer 401 unless x-api-key is this value")
    parser.add_argument(
        "--max-prompt-tokens", type=int, help="answer 'prompt is too long' above this estimate"
    )
    parser.add_argument("--cache-min-tokens", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeAnthropic(
        args.host,
        args.port,
        require_key=args.require_key,
        max_prompt_tokens=args.max_prompt_tokens,
        cache_min_tokens=args.cache_min_tokens,
    )
    if args.script:
        server.push(*load_script(args.script))
    server.start()
    print(f"fake Anthropic API on {server.url} ({server.pending} scripted replies, then 'ok')", flush=True)
    print(
        f"  export ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY={args.require_key or 'sk-ant-fake'}",
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
