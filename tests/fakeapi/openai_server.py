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

import json
import os
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from tests.fakeapi.cache import estimate_tokens
from tests.fakeapi.http_base import FakeHandler, FakeServer, command_line, pieces, serve
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


class FakeOpenAI(FakeServer):
    name = "fake-openai"
    path_prefix = "/v1"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        require_key: str | None = None,
        max_prompt_tokens: int | None = None,
        overflow_style: str = "openai",
        separate_summaries: bool = False,  # a request without tools gets a summary, off-queue
        models: tuple[str, ...] = ("fake-model",),
    ) -> None:
        assert overflow_style in OVERFLOW_STYLES, overflow_style
        super().__init__(
            host,
            port,
            _Handler,
            require_key=require_key,
            max_prompt_tokens=max_prompt_tokens,
            separate_summaries=separate_summaries,
        )
        self.overflow_style = overflow_style
        self.models = models
        self._prefixes: list[str] = []  # serialized messages of earlier requests (the prompt cache)

    def cached_tokens(self, body: dict[str, Any]) -> int:
        """Tokens of the longest prefix of this request's messages that an earlier request sent."""
        serial = json.dumps([body.get("tools"), body.get("messages")], sort_keys=True)
        with self.lock:
            best = max((_common_prefix(serial, p) for p in self._prefixes), default=0)
            self._prefixes.append(serial)
        return estimate_tokens(best) if best else 0


class _Handler(FakeHandler):
    server_version = "fake-openai/1"

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?", 1)[0].rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.fake.models]
            self.json_answer(200, {"object": "list", "data": data})
            return
        self._error(404, "not_found_error", f"Not found: {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        path, raw, headers, body = self.read_request()
        path = path.rstrip("/")
        with self.fake.lock:
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
        scripted = self.fake.scripted_for(body, tokens, side=not body.get("tools"))
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
            self.json_answer(200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        self.begin_stream()
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
        self.chunk(b"data: [DONE]\n\n")
        self.chunk(b"")

    def _interrupt(self, scripted: Scripted) -> bool:
        def send_error(fault: StreamError) -> None:
            self._data({"error": {"message": fault.message, "type": fault.error_type, "code": None}})

        return self.cut_stream(scripted, send_error)

    # -- wire -----------------------------------------------------------------------------------
    def _data(self, payload: dict[str, Any]) -> None:
        self.chunk(f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode())

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
        self.json_answer(status, {"error": error}, headers)


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
            for piece in pieces(block.text, size):
                yield index, {"content": piece}
        elif isinstance(block, Thinking):
            for piece in pieces(block.text, size):
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
        pending.append(deque(pieces(json.dumps(call.input, ensure_ascii=False), size)))
    while any(pending):
        for n, rest in enumerate(pending):
            if rest:
                yield (
                    first_call + n,
                    {"tool_calls": [{"index": n, "function": {"arguments": rest.popleft()}}]},
                )


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


def main(argv: list[str] | None = None) -> None:
    parser = command_line(
        "A local server that speaks OpenAI's chat-completions API.",
        8766,
        "answer context_length_exceeded above this",
    )
    parser.add_argument("--overflow-style", choices=OVERFLOW_STYLES, default="openai")
    args = parser.parse_args(argv)
    server = FakeOpenAI(
        args.host,
        args.port,
        require_key=args.require_key,
        max_prompt_tokens=args.max_prompt_tokens,
        overflow_style=args.overflow_style,
    )
    serve(
        server,
        args.script,
        lambda s: [
            f"fake OpenAI API on {s.url} ({s.pending} scripted replies, then 'ok')",
            f"  export OPENAI_BASE_URL={s.url} OPENAI_API_KEY={args.require_key or 'sk-fake'}",
        ],
    )


if __name__ == "__main__":
    main()
