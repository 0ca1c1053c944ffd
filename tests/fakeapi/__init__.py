"""A local server that speaks the Anthropic Messages API (server.py), its scripted replies
(replies.py), request validation (validate.py), prompt-cache simulation (cache.py), the
`fake_anthropic` pytest fixture (fixtures.py), and a model that reacts to what it is sent instead of
a script (reactive.py, reading requests with pointers.py; closed-loop scenarios run through the real
CLI in scenarios.py)."""

from tests.fakeapi.replies import (
    Disconnect,
    Fault,
    Reply,
    Stall,
    StreamError,
    Text,
    Thinking,
    ToolUse,
    Until,
    overloaded,
    prompt_too_long,
    rate_limited,
    reply,
    server_error,
    text,
    tool_call,
)


def __getattr__(name: str):
    # lazy, so `python -m tests.fakeapi.server` does not import the server module twice
    if name == "FakeAnthropic":
        from tests.fakeapi.server import FakeAnthropic

        return FakeAnthropic
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Disconnect",
    "FakeAnthropic",
    "Fault",
    "Reply",
    "Stall",
    "StreamError",
    "Text",
    "Thinking",
    "ToolUse",
    "Until",
    "overloaded",
    "prompt_too_long",
    "rate_limited",
    "reply",
    "server_error",
    "text",
    "tool_call",
]
