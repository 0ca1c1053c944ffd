"""Lone surrogates (what Python makes of bytes that are not UTF-8) never reach the log or a request:
scrubbed where text comes in, shown as `\\xNN` in file names, and scrubbed by the log's writer and by
`Request` whatever slipped by."""

from __future__ import annotations

import json
import os

from agent_cli.core.surrogates import name_from_shown, scrub, scrub_json, shown_name
from agent_cli.core.types import Block, Message, Request
from agent_cli.session.log import EventLog, read_events

BAD = os.fsdecode(b"caf\xe9.txt")


def test_scrub_and_shown_name():
    assert scrub("bad \udcff\udcfe bytes") == "bad \ufffd\ufffd bytes"
    assert scrub("fine, café") == "fine, café"
    assert shown_name(BAD) == "caf\\xe9.txt" and shown_name("café.txt") == "café.txt"
    assert name_from_shown("caf\\xe9.txt") == BAD
    assert name_from_shown("caf\\xc3\\xa9.txt") == "café.txt"  # bytes that make UTF-8 together
    assert name_from_shown("plain.txt") is None and name_from_shown("a\\x41") is None
    assert shown_name("odd \ud800") == "odd \ufffd"  # a surrogate no name decodes to


def test_scrub_json_copies_only_what_it_changes():
    clean = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert scrub_json(clean) is clean
    dirty = {"a": [BAD, ("x", {"k\udcff": 1})], "b": clean}
    out = scrub_json(dirty)
    assert out == {"a": ["caf\ufffd.txt", ("x", {"k\ufffd": 1})], "b": clean} and out["b"] is clean
    assert dirty["a"][0] == BAD  # the original is left as it was


def test_a_request_carries_no_lone_surrogate():
    message = Message("user", (Block.text_block("look at " + BAD),), 1)
    request = Request(
        model="m",
        system=[{"type": "text", "text": "cwd " + BAD}],
        messages=[message.to_api()],
        tools=[{"name": "t", "description": BAD, "input_schema": {}}],
    )
    body = json.dumps(request.to_api(), ensure_ascii=False).encode("utf-8")  # would raise before
    assert b"caf\xef\xbf\xbd.txt" in body


def test_the_log_writes_a_lone_surrogate_as_u_fffd(tmp_path):
    log = EventLog(tmp_path / "s")
    log.message("user", Message("user", (Block.text_block("bad " + BAD),), 1), prompt="bad " + BAD)
    log.close()
    raw = log.path.read_bytes().decode("utf-8")
    assert "\\udc" not in raw  # not kept as an escape, which every read would hand back
    (event,) = read_events(log.path).events
    assert event["prompt"] == "bad caf\ufffd.txt"
    assert Message.from_json(event["message"]).text == "bad caf\ufffd.txt"
