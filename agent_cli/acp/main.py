"""`agent acp`: the ACP agent on stdin/stdout until the client closes them.

stdout carries the protocol alone: the process's own fd 1 is moved to stderr before anything runs,
so a stray print (ours, a library's, a child's) cannot corrupt a message. Every line the client sends
passes `screen` before the SDK sees it: a line that is not JSON gets JSON-RPC's parse error (-32700),
JSON that is not a request, notification or response object its invalid-request error (-32600) —
not an object, an `id` that is no string, number or null, a `method` that is no string, neither a
method nor a result — with a null id as the spec says (the request's id when it has a valid one),
and one line on stderr; the SDK would drop some in silence and end the connection on others. A
request without `"jsonrpc": "2.0"` gets the same error with its id; such a notification is dropped
with a line on stderr (a notification is never answered); a response is passed on (dropping the
client's answer would leave our request waiting for good).
`session/cancel` sent as a request (with an id) cancels as the notification does and is answered
with a null result. SIGTERM and SIGHUP end every turn as a cancel does and close the sessions,
resumable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_cli.api import Options

BUFFER_LIMIT = 50 * 1024 * 1024  # one message at most (an image in a prompt), as the SDK's default
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
CANCEL = "session/cancel"  # a notification; sent as a request, it is answered here (see `screen`)


class OneLine(logging.Formatter):
    """`agent acp: message (Error: what)`, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"agent acp: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {exc})"
        return text


def serve(options: Options) -> int:
    """Run until the client hangs up; the exit code."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    protocol_out = os.dup(1)
    os.dup2(2, 1)  # fd 1 is stderr from here on; the protocol has its own descriptor
    sys.stdout = sys.stderr
    try:
        asyncio.run(_serve(options, protocol_out))
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve(options: Options, protocol_out: int) -> None:
    from acp import run_agent
    from acp.connection import StreamDirection, StreamEvent

    from agent_cli.acp.server import AcpAgent

    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=BUFFER_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    pipe = os.fdopen(protocol_out, "wb", buffering=0)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    writer = asyncio.StreamWriter(transport, flow, None, loop)
    reader = asyncio.StreamReader(limit=BUFFER_LIMIT)  # what the SDK reads: the lines `screen` passed
    screening = asyncio.create_task(screen(stdin, reader, writer))
    main = asyncio.current_task()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, main.cancel if main is not None else lambda: None)

    with tempfile.TemporaryDirectory(prefix="agent-acp-") as scratch:
        agent = AcpAgent(options, Path(scratch))

        def observe(event: StreamEvent) -> None:
            if event.direction == StreamDirection.INCOMING:
                agent.saw(event.message)

        try:
            await run_agent(agent, writer, reader, observers=[observe])
        except asyncio.CancelledError:
            pass  # a signal: the sessions close below
        finally:
            screening.cancel()
            await asyncio.shield(_close(agent))


async def screen(
    source: asyncio.StreamReader, sink: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Copy the client's lines to `sink` until it hangs up, answering those that are not JSON-RPC
    objects here (see the module doc)."""
    try:
        while True:
            try:
                line = await source.readline()
            except ValueError:  # longer than BUFFER_LIMIT: asyncio has dropped it
                await _refuse(writer, INVALID_REQUEST, f"a message over {BUFFER_LIMIT:,} bytes")
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await _refuse(writer, PARSE_ERROR, f"not JSON ({exc})")
                continue
            if not isinstance(message, dict):
                await _refuse(writer, INVALID_REQUEST, f"a JSON {type(message).__name__}, not an object")
                continue
            if why := _not_a_message(message):
                valid_id = "id" in message and _is_id(message["id"])
                await _refuse(writer, INVALID_REQUEST, why, message["id"] if valid_id else None)
                continue
            if "method" in message and (why := _not_version_2(message)):
                if "id" in message:
                    await _refuse(writer, INVALID_REQUEST, why, message["id"])
                else:  # a notification is never answered: dropped, not acted on
                    logging.getLogger(__name__).warning(
                        "dropped a %r notification from the client: %s", message["method"][:80], why
                    )
                continue
            if message.get("method") == CANCEL and "id" in message:  # a request: cancel, answer null
                line = json.dumps({k: v for k, v in message.items() if k != "id"}).encode()
                await _send(writer, {"jsonrpc": "2.0", "id": message["id"], "result": None})
            sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
    finally:
        sink.feed_eof()


def _is_id(value: Any) -> bool:
    """JSON-RPC's ids: a string, a number or null (not a bool, an object or a list)."""
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _not_a_message(message: dict[str, Any]) -> str:
    """Why `message` is no request, notification or response object ('' when it is one)."""
    if "id" in message and not _is_id(message["id"]):
        return f"an id that is a JSON {type(message['id']).__name__} (a string, a number or null)"
    if "method" in message:
        return "" if isinstance(message["method"], str) else "a method that is not a string"
    if "result" in message or "error" in message:
        return "" if "id" in message else "a response without an id"
    return "neither a method nor a result"


def _not_version_2(message: dict[str, Any]) -> str:
    """Why `message` is not JSON-RPC 2.0 ('' when it says `"jsonrpc": "2.0"`)."""
    if "jsonrpc" not in message:
        return 'no "jsonrpc": "2.0" member'
    version = message["jsonrpc"]
    return "" if version == "2.0" else f'"jsonrpc" is {json.dumps(version)[:40]}, not "2.0"'


async def _refuse(writer: asyncio.StreamWriter, code: int, why: str, request_id: Any = None) -> None:
    logging.getLogger(__name__).warning("refused a line from the client: %s", why)
    message = "Parse error" if code == PARSE_ERROR else "Invalid Request"
    await _send(
        writer, {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, "data": why}}
    )


async def _send(writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
    writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    await writer.drain()


async def _close(agent: Any) -> None:
    await agent.close()
