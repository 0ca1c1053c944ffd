"""Request checks the real Messages API makes; a failure is the message of a 400 invalid_request_error.

Checked: model and max_tokens present; messages non-empty, first from the user, roles alternating;
no empty content or empty text block (system included); every tool_result answers a tool_use of the
immediately previous assistant message, and comes before any other content of its user message;
every tool_use is answered in the next user message; tool_use ids unique and inputs objects; at most
4 cache_control blocks (system + tools + messages) with a valid type and ttl; a thinking budget of
at least 1024 and below max_tokens; custom tools with a name and an input_schema.
"""

from __future__ import annotations

from typing import Any

MAX_CACHE_CONTROL = 4


class Invalid(Exception):
    """A request the API would reject; `str(self)` is the API's message."""


def validate(body: Any, *, count_only: bool = False) -> None:
    """Raise Invalid with the API's message when `body` would be rejected."""
    if not isinstance(body, dict):
        raise Invalid("request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise Invalid("model: Field required")
    if not count_only:
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise Invalid("max_tokens: Field required")
        if max_tokens < 1:
            raise Invalid("max_tokens: Input should be greater than or equal to 1")
        _check_thinking(body.get("thinking"), max_tokens)
    _check_system(body.get("system"))
    _check_tools(body.get("tools"))
    _check_messages(body.get("messages"))
    found = count_cache_control(body)
    if found > MAX_CACHE_CONTROL:
        raise Invalid(
            f"A maximum of {MAX_CACHE_CONTROL} blocks with cache_control may be provided. Found {found}."
        )


def count_cache_control(body: dict[str, Any]) -> int:
    found = 0
    for path, block in iter_blocks(body):
        control = block.get("cache_control")
        if control is None:
            continue
        if not isinstance(control, dict) or control.get("type") != "ephemeral":
            raise Invalid(f"{path}.cache_control.type: Input should be 'ephemeral'")
        if control.get("ttl", "5m") not in ("5m", "1h"):
            raise Invalid(f"{path}.cache_control.ttl: Input should be '5m' or '1h'")
        found += 1
    return found


def iter_blocks(body: dict[str, Any]):
    """(path, block) for every block that may carry cache_control, in cache order: tools, system, messages."""
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict):
            yield f"tools.{i}", tool
    system = body.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            if isinstance(block, dict):
                yield f"system.{i}", block
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            yield f"messages.{m}.content.{b}", block
            inner = block.get("content") if block.get("type") == "tool_result" else None
            if isinstance(inner, list):
                for k, sub in enumerate(inner):
                    if isinstance(sub, dict):
                        yield f"messages.{m}.content.{b}.content.{k}", sub


def _check_thinking(thinking: Any, max_tokens: int) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
        raise Invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise Invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= max_tokens:
            raise Invalid("`max_tokens` must be greater than `thinking.budget_tokens`")


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise Invalid("system: Input should be a valid string or list of text blocks")
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise Invalid(f"system.{i}.type: Input should be 'text'")
        if not block.get("text"):
            raise Invalid(f"system.{i}.text: text content blocks must be non-empty")


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not tool.get("name"):
            raise Invalid(f"tools.{i}.name: Field required")
        if "type" not in tool or tool.get("type") == "custom":
            if not isinstance(tool.get("input_schema"), dict):
                raise Invalid(f"tools.{i}.custom.input_schema: Field required")
        if tool["name"] in names:
            raise Invalid(f"tools: Tool names must be unique. Found duplicate: {tool['name']}")
        names.add(tool["name"])


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Invalid("messages: at least one message is required")
    previous_role = ""
    open_tool_uses: list[str] = []  # ids the previous assistant message asked for
    seen_ids: set[str] = set()
    for m, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise Invalid(f"messages.{m}.role: Input should be 'user' or 'assistant'")
        role = message["role"]
        if m == 0 and role != "user":
            raise Invalid('messages: first message must use the "user" role')
        if role == previous_role:
            raise Invalid(
                f'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        blocks = _content_blocks(message.get("content"), m, last=m == len(messages) - 1, role=role)
        if role == "user":
            _check_user_blocks(blocks, m, open_tool_uses)
            open_tool_uses = []
        else:
            open_tool_uses = _check_assistant_blocks(blocks, m, seen_ids)
        previous_role = role
    if open_tool_uses:
        raise _unanswered(len(messages) - 1, open_tool_uses)


def _content_blocks(content: Any, m: int, *, last: bool, role: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content and not (last and role == "assistant"):
            raise Invalid(
                f"messages.{m}: all messages must have non-empty content except for the optional "
                "final assistant message"
            )
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise Invalid(f"messages.{m}.content: Input should be a valid string or list of content blocks")
    if not content and not (last and role == "assistant"):
        raise Invalid(
            f"messages.{m}: all messages must have non-empty content except for the optional "
            "final assistant message"
        )
    for b, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise Invalid(f"messages.{m}.content.{b}.type: Field required")
        if block["type"] == "text" and not block.get("text"):
            raise Invalid(f"messages.{m}.content.{b}.text: text content blocks must be non-empty")
    return content


def _check_user_blocks(blocks: list[dict[str, Any]], m: int, expected: list[str]) -> None:
    answered: list[str] = []
    other_seen = False
    for b, block in enumerate(blocks):
        kind = block["type"]
        if kind == "tool_use":
            raise Invalid(f"messages.{m}.content.{b}: `tool_use` blocks can only be in `assistant` messages")
        if kind != "tool_result":
            other_seen = True
            continue
        tool_use_id = block.get("tool_use_id")
        if not isinstance(tool_use_id, str) or not tool_use_id:
            raise Invalid(f"messages.{m}.content.{b}.tool_use_id: Field required")
        if tool_use_id not in expected:
            raise Invalid(
                f"messages.{m}.content.{b}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{tool_use_id}. Each `tool_result` block must have a corresponding `tool_use` block "
                "in the previous message."
            )
        if tool_use_id in answered:
            raise Invalid(
                f"messages.{m}.content.{b}: duplicate `tool_result` for `tool_use_id` {tool_use_id}"
            )
        if other_seen:
            raise Invalid(
                f"messages.{m}.content.{b}: `tool_result` blocks must come before any other content "
                "in a user message"
            )
        _check_tool_result_content(block.get("content"), m, b)
        answered.append(tool_use_id)
    missing = [i for i in expected if i not in answered]
    if missing:
        raise _unanswered(m - 1, missing)


def _check_tool_result_content(content: Any, m: int, b: int) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise Invalid(f"messages.{m}.content.{b}.content: Input should be a valid string or list")
    for k, sub in enumerate(content):
        if isinstance(sub, dict) and sub.get("type") == "text" and not sub.get("text"):
            raise Invalid(f"messages.{m}.content.{b}.content.{k}.text: text content blocks must be non-empty")


def _check_assistant_blocks(blocks: list[dict[str, Any]], m: int, seen_ids: set[str]) -> list[str]:
    ids: list[str] = []
    for b, block in enumerate(blocks):
        kind = block["type"]
        if kind == "tool_result":
            raise Invalid(f"messages.{m}.content.{b}: `tool_result` blocks can only be in `user` messages")
        if kind != "tool_use":
            continue
        tool_id = block.get("id")
        if not isinstance(tool_id, str) or not tool_id:
            raise Invalid(f"messages.{m}.content.{b}.id: Field required")
        if tool_id in seen_ids:
            raise Invalid(f"messages.{m}.content.{b}: `tool_use` ids must be unique, found {tool_id} twice")
        if not isinstance(block.get("input"), dict):
            raise Invalid(f"messages.{m}.content.{b}.input: Input should be a valid dictionary")
        if not block.get("name"):
            raise Invalid(f"messages.{m}.content.{b}.name: Field required")
        seen_ids.add(tool_id)
        ids.append(tool_id)
    return ids


def _unanswered(m: int, ids: list[str]) -> Invalid:
    return Invalid(
        f"messages.{m}: `tool_use` ids were found without `tool_result` blocks immediately after: "
        f"{', '.join(ids)}. Each `tool_use` block must have a corresponding `tool_result` block in the "
        "next message."
    )
