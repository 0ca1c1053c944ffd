"""Request checks an OpenAI-compatible chat-completions server makes; a failure is a 400's message.

Checked: model present; messages a non-empty list of known roles; user/system content non-empty text
(or parts of text / image_url); an assistant message has content or tool_calls; each tool call has a
unique id, type "function", a name and `arguments` that are a JSON object in a string; the messages
after an assistant message with tool_calls are `tool` messages answering every one of its ids, once,
before any other message; no `tool` message anywhere else; tools are functions with a name and an
object schema; stream_options only with stream; max_tokens a positive integer.
"""

from __future__ import annotations

import json
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")


class Invalid(Exception):
    """A request the server would reject; `str(self)` is its message."""


def validate_chat(body: Any) -> None:
    if not isinstance(body, dict):
        raise Invalid("request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Invalid("you must provide a model parameter")
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    if max_tokens is not None and (
        not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
    ):
        raise Invalid(f"Invalid 'max_tokens': integer below minimum value. Expected >= 1, got {max_tokens!r}")
    if body.get("stream_options") is not None and not body.get("stream"):
        raise Invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    _check_tools(body.get("tools"))
    _check_messages(body.get("messages"))


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("'tools': expected an array")
    names = set()
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            raise Invalid(f"tools[{i}]: expected {{'type': 'function', 'function': {{...}}}}")
        if not function.get("name"):
            raise Invalid(f"tools[{i}].function.name: Field required")
        schema = function.get("parameters", {"type": "object"})
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise Invalid(
                f"tools[{i}].function.parameters: schema must be a JSON Schema of 'type: \"object\"'"
            )
        if function["name"] in names:
            raise Invalid(f"tools: duplicate function name {function['name']!r}")
        names.add(function["name"])


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Invalid("'messages' must contain at least one message")
    open_calls: list[str] = []  # ids of the last assistant message still waiting for a tool message
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise Invalid(f"{where}.role: must be one of {', '.join(ROLES)}")
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise Invalid(
                    f"Invalid parameter: {where}: messages with role 'tool' must be a response to a preceding "
                    f"message with 'tool_calls' (tool_call_id {call_id!r})"
                )
            open_calls.remove(call_id)
            if not isinstance(message.get("content"), str | list):
                raise Invalid(f"{where}.content: expected a string")
            continue
        if open_calls:
            raise Invalid(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(open_calls)}"
            )
        if role == "assistant":
            open_calls = _check_assistant(where, message, seen_ids)
        else:
            _check_content(where, message.get("content"))
    if open_calls:
        raise Invalid(f"tool_call_ids without a response message: {', '.join(open_calls)}")


def _check_assistant(where: str, message: dict[str, Any], seen_ids: set[str]) -> list[str]:
    calls = message.get("tool_calls") or []
    content = message.get("content")
    if not calls and not content:
        raise Invalid(f"{where}: an assistant message needs content or tool_calls")
    if content is not None and not isinstance(content, str | list):
        raise Invalid(f"{where}.content: expected a string or null")
    ids = []
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(function, dict):
            raise Invalid(f"{at}: expected a function call")
        if not call.get("id") or call["id"] in seen_ids:
            raise Invalid(f"{at}.id: missing or duplicate id {call.get('id')!r}")
        if not function.get("name"):
            raise Invalid(f"{at}.function.name: Field required")
        try:
            arguments = json.loads(function.get("arguments"))
        except (TypeError, json.JSONDecodeError) as err:
            raise Invalid(f"{at}.function.arguments: not valid JSON ({err})") from None
        if not isinstance(arguments, dict):
            raise Invalid(f"{at}.function.arguments: must be a JSON object")
        seen_ids.add(call["id"])
        ids.append(call["id"])
    return ids


def _check_content(where: str, content: Any) -> None:
    if isinstance(content, str):
        if not content:
            raise Invalid(f"{where}.content: must not be empty")
        return
    if not isinstance(content, list) or not content:
        raise Invalid(f"{where}.content: expected a string or a non-empty array of parts")
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
            continue
        if kind == "image_url" and isinstance(part.get("image_url"), dict):
            continue
        raise Invalid(f"{where}.content[{k}]: expected a non-empty text or an image_url part")
