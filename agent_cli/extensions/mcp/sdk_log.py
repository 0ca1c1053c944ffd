"""What the MCP SDK logs stays off the person's terminal: with no logging configured, Python prints
its warnings to stderr, and a server that writes one line that is not JSON-RPC gave a whole
traceback. Each record becomes a line kept with the server whose task logged it (the SDK's reader
tasks run in the context of the server's owner task, manager.py), which a failure's reason quotes;
the server's failure is said once, by us.

The SDK logs under `mcp.*`, and its client session under the bare name `client`: there only the
SDK's own records are taken, anyone else's pass.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from pathlib import Path

NOTES: ContextVar[list[str] | None] = ContextVar("mcp_server_notes", default=None)  # the server's lines
KEEP = 20  # lines kept per server
_installed = False
_sdk_dir = "\0"  # the SDK's folder, once installed


def install() -> None:
    """Take the SDK's records from now on (the second call does nothing)."""
    global _installed, _sdk_dir
    if _installed:
        return
    import mcp

    _installed, _sdk_dir = True, str(Path(mcp.__file__).parent)
    sdk = logging.getLogger("mcp")
    sdk.addHandler(_Keep())
    sdk.propagate = False
    logging.getLogger("client").addFilter(_from_sdk)


def note(record: logging.LogRecord) -> str:
    """The record as one short line: its message, and for a value the SDK refused, that value."""
    text = " ".join(record.getMessage().split())
    exc = record.exc_info[1] if record.exc_info else None
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            refused = errors()[0].get("input")
        except Exception:  # noqa: BLE001 - not pydantic's: the message alone
            refused = None
        if isinstance(refused, str | bytes):
            text += f": {refused[:120]!r}"
    elif exc is not None:
        text += ": " + " ".join(str(exc).split())[:200]
    return text


def _keep(record: logging.LogRecord) -> None:
    notes = NOTES.get()
    if notes is not None:
        notes.append(note(record))
        del notes[:-KEEP]


class _Keep(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        _keep(record)


def _from_sdk(record: logging.LogRecord) -> bool:
    """The `client` logger's filter: the SDK's records are kept and go no further."""
    if not record.pathname.startswith(_sdk_dir):
        return True
    _keep(record)
    return False
