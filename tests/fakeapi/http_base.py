"""What the fake Anthropic and OpenAI servers share: a threaded HTTP server on loopback, the queue of
scripted replies (with per-conversation routes and off-queue summaries), request records, ids,
stalls released by the test, and the wire (chunked SSE, JSON answers, mid-stream cuts).

A fake is a `FakeServer` subclass with its own `FakeHandler` subclass (the API's paths, shapes and
errors); `serve` runs one from the command line until Ctrl-C.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, Self

from tests.fakeapi.replies import (
    Disconnect,
    Fault,
    Reply,
    Scripted,
    Stall,
    StreamError,
    Until,
    reply_from_json,
    text,
)


class Responder(Protocol):
    """Answers a request from its body instead of the scripted queue (tests/fakeapi/reactive.py).
    `observe` is told the usage the server reported for every answered request (side: a summarizer's)."""

    def respond(self, body: dict[str, Any]) -> Scripted: ...

    def observe(self, body: dict[str, Any], usage: Any, *, side: bool) -> None: ...


class FakeServer:
    name = "fake"  # the server thread's name
    path_prefix = ""  # what `url` ends with (OpenAI clients want the /v1 in the base URL)

    def __init__(
        self,
        host: str,
        port: int,
        handler: type[FakeHandler],
        *,
        require_key: str | None = None,
        max_prompt_tokens: int | None = None,
        separate_summaries: bool = False,
        responder: Responder | None = None,
    ) -> None:
        self.require_key = require_key
        # responder: when set, it answers every request the routes do not (the queue is not used);
        # a summarizer's request gets the off-queue summary, as with separate_summaries
        self.responder = responder
        self.max_prompt_tokens = max_prompt_tokens
        # separate_summaries: a summarizer's request (no tools, or — Anthropic — tool_choice none for
        # a session-memory update) is answered with a summary of its own and does not consume the
        # scripted queue, so a test can script the agent's turns without knowing when it summarizes
        self.separate_summaries = separate_summaries
        self.summary_requests: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []  # bodies of the API's main POSTs (valid or not)
        self.headers: list[dict[str, str]] = []  # headers of every request, in order
        self.statuses: list[int] = []  # the HTTP status of every answer
        self.lock = threading.Lock()
        self._queue: deque[Scripted | Until] = deque()
        self._routes: list[tuple[str, deque[Scripted | Until]]] = []  # (marker in the first message, replies)
        self._polls: dict[int, int] = {}  # how often each Until answered
        self._ids = itertools.count(1)
        self._release = threading.Semaphore(0)
        self.stopped = threading.Event()
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{self.path_prefix}"

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.02,), name=self.name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting ------------------------------------------------------------------------------
    def push(self, *replies: Scripted | Until | str | dict[str, Any]) -> None:
        """Queue replies; a str is a text reply, a dict is a script entry (replies.reply_from_json)."""
        with self.lock:
            self._queue.extend(_made(replies))

    def route(self, marker: str, *replies: Scripted | Until | str | dict[str, Any]) -> None:
        """Replies for the conversations whose first message contains `marker` (a sub-agent's prompt,
        say): they are answered from this queue, in order, before the shared one."""
        with self.lock:
            self._routes.append((marker, deque(_made(replies))))

    def conversations(self, marker: str) -> list[dict[str, Any]]:
        """The request bodies whose first message contains `marker`."""
        with self.lock:
            return [b for b in self.requests if marker in first_message(b)]

    @property
    def pending(self) -> int:
        with self.lock:
            return len(self._queue)

    def release(self, count: int = 1) -> None:
        """Let `count` stalled streams (Stall) continue."""
        self._release.release(count)

    def wait_released(self) -> bool:
        """A stalled stream waits here; False when the server stopped first."""
        while not self._release.acquire(timeout=0.05):
            if self.stopped.is_set():
                return False
        return True

    def scripted_for(self, body: dict[str, Any], tokens: int, *, side: bool) -> Scripted:
        """What answers `body`: an off-queue summary for a side request (with separate_summaries or
        a responder), else the next reply of its route, else the responder's answer, else the next
        reply of the shared queue ("ok" when empty)."""
        if side and (self.separate_summaries or self.responder is not None):
            self.summary_requests.append(body)
            return text(f"## Summary\nA fake summary of a request of {tokens} tokens.")
        with self.lock:
            first = first_message(body)
            for marker, queue in self._routes:
                if queue and marker in first and (routed := self._take(queue, body)) is not None:
                    return routed
            if self.responder is not None:
                return self.responder.respond(body)
            return self._take(self._queue, body) or text("ok")

    def _take(self, queue: deque[Scripted | Until], body: dict[str, Any]) -> Scripted | None:
        """The queue's next reply; an `Until` at its head answers until the request's tool results
        match its pattern (or it ran out of repeats), then gives way to the entry after it."""
        while queue:
            head = queue[0]
            if not isinstance(head, Until):
                return queue.popleft()
            count = self._polls.get(id(head), 0)
            if count >= head.limit or re.search(head.pattern, last_tool_results(body), re.MULTILINE):
                queue.popleft()
                continue
            self._polls[id(head)] = count + 1
            return head.reply
        return None

    def next_id(self, prefix: str) -> str:
        with self.lock:
            return f"{prefix}_fake_{next(self._ids):04d}"


class FakeHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def fake(self) -> FakeServer:
        return self.server.fake  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return

    def answer_headers(self) -> dict[str, str]:
        """Headers every answer carries (the Anthropic fake adds a request-id)."""
        return {}

    def read_request(self) -> tuple[str, str, dict[str, str], Any]:
        """The request's path (no query), raw body, lower-cased headers and parsed JSON (None if not)."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        return self.path.split("?", 1)[0], raw, headers, body

    def cut_stream(self, scripted: Scripted, send_error: Callable[[StreamError], None]) -> bool:
        """Apply a mid-stream fault; True when the stream goes on afterwards (a released Stall)."""
        if isinstance(scripted, StreamError):
            send_error(scripted)
            self.chunk(b"")
            return False
        if isinstance(scripted, Disconnect):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False
        return self.fake.wait_released()

    # -- wire -----------------------------------------------------------------------------------
    def begin_stream(self) -> None:
        self.fake.statuses.append(200)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in self.answer_headers().items():
            self.send_header(name, value)
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def json_answer(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.fake.statuses.append(status)  # before the answer leaves, so a test never sees it missing
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in {**self.answer_headers(), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def last_tool_results(body: dict[str, Any]) -> str:
    """The text of the tool results the request ends with (Anthropic's tool_result blocks in the last
    message, or OpenAI's trailing `tool` messages), one after another."""
    messages = body.get("messages") or []
    texts: list[str] = []
    if messages and isinstance(messages[-1].get("content"), list):
        for block in messages[-1]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                parts = content if isinstance(content, list) else [{"text": content}]
                texts += [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        texts.append(str(message.get("content", "")))
    return "\n".join(texts)


def first_message(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return json.dumps(messages[0], ensure_ascii=False) if messages else ""


def pieces(value: str, size: int) -> list[str]:
    """`value` in pieces of `size` characters (none for an empty string)."""
    size = max(1, size)
    return [value[i : i + size] for i in range(0, len(value), size)]


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


def command_line(description: str, port: int, max_prompt_help: str) -> argparse.ArgumentParser:
    """The options every fake takes from the command line; a fake adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON or YAML list of scripted replies")
    parser.add_argument("--require-key", help="answer 401 unless the request's API key is this value")
    parser.add_argument("--max-prompt-tokens", type=int, help=max_prompt_help)
    return parser


def serve(server: FakeServer, script: Path | None, banner: Callable[[FakeServer], list[str]]) -> None:
    """Run `server` from the command line, its script queued, until Ctrl-C."""
    if script:
        server.push(*load_script(script))
    server.start()
    for line in banner(server):
        print(line, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def _made(replies: tuple[Scripted | Until | str | dict[str, Any], ...]) -> list[Scripted | Until]:
    return [
        r if isinstance(r, Reply | Fault | StreamError | Disconnect | Stall | Until) else reply_from_json(r)
        for r in replies
    ]
