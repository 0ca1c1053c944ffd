"""The MCP SDK's log records are kept with their server, never printed; others' records pass."""

from __future__ import annotations

import logging
from pathlib import Path

import mcp

from agent_cli.extensions.mcp import sdk_log


def test_the_sdks_records_are_kept_with_the_server_and_others_pass(caplog):
    sdk_log.install()
    notes: list[str] = []
    token = sdk_log.NOTES.set(notes)
    try:
        try:
            raise ValueError("bad\nline")
        except ValueError:
            logging.getLogger("mcp.client.stdio").exception("Failed to parse")
        sdk_file = str(Path(mcp.__file__).parent / "client" / "session.py")
        client = logging.getLogger("client")
        from_sdk = client.makeRecord("client", logging.WARNING, sdk_file, 1, "dropping tool %r", ("x",), None)
        client.handle(from_sdk)
        with caplog.at_level(logging.WARNING):
            client.warning("someone else's client logger")  # not the SDK: it goes on as before
    finally:
        sdk_log.NOTES.reset(token)
    assert notes == ["Failed to parse: bad line", "dropping tool 'x'"]
    assert [r.getMessage() for r in caplog.records] == ["someone else's client logger"]
