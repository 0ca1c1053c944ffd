"""The ordered set of tools (fixed order: stable schemas, stable prompt cache) and the safe call path."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agent_cli.core.types import ToolCall
from agent_cli.tools.base import Tool, ToolContext, ToolResult, schema
from agent_cli.tools.bash import BashTool
from agent_cli.tools.edit import EditTool
from agent_cli.tools.glob import GlobTool
from agent_cli.tools.grep import GrepTool
from agent_cli.tools.ls import LsTool
from agent_cli.tools.read import ReadTool
from agent_cli.tools.recall import RecallTool
from agent_cli.tools.todo import TodoTool
from agent_cli.tools.write import WriteTool


class ToolRegistry:
    """Tools by name. Tools may be added after start (MCP servers connect in the background); a
    deferred tool can be called but its schema is not offered until `reveal` (on-demand schemas).
    `on_change` callbacks run after every change of what `schemas()` returns."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._deferred: set[str] = set()
        self._listeners: list[Callable[[], None]] = []
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return [name for name in self._tools if name not in self._deferred]

    def schemas(self) -> list[dict[str, Any]]:
        return [schema(tool) for name, tool in self._tools.items() if name not in self._deferred]

    def add(self, tools: Iterable[Tool], *, deferred: bool = False) -> list[str]:
        """Add tools (one change for all of them); returns the names of tools skipped because the
        name is taken."""
        taken: list[str] = []
        added = False
        for tool in tools:
            if tool.name in self._tools:
                taken.append(tool.name)
                continue
            self._tools[tool.name] = tool
            if deferred:
                self._deferred.add(tool.name)
            added = True
        if added and not deferred:
            self._changed()
        return taken

    def remove(self, names: Iterable[str]) -> None:
        """Take these tools out (an MCP server changed its list); unknown names are ignored."""
        shown = False
        for name in names:
            if self._tools.pop(name, None) is not None:
                shown = shown or name not in self._deferred
                self._deferred.discard(name)
        if shown:
            self._changed()

    def is_deferred(self, name: str) -> bool:
        return name in self._deferred

    def reveal(self, names: Iterable[str]) -> list[str]:
        """Offer the schemas of these deferred tools from now on; returns the names that were."""
        shown = [name for name in names if name in self._deferred]
        if shown:
            self._deferred.difference_update(shown)
            self._changed()
        return shown

    def on_change(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def _changed(self) -> None:
        for callback in list(self._listeners):
            callback()

    def is_compactable(self, name: str) -> bool:
        tool = self._tools.get(name)
        return bool(tool and tool.compactable)

    def is_read_only(self, name: str) -> bool:
        tool = self._tools.get(name)
        return bool(tool and tool.read_only)

    def target(self, call: ToolCall) -> str:
        """The call's label for UI and placeholders ('' when unknown or the input is odd)."""
        tool = self._tools.get(call.name)
        if tool is None:
            return ""
        try:
            return tool.target(call.input)
        except Exception:
            return ""

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def default_tools() -> ToolRegistry:
    return ToolRegistry(
        [
            ReadTool(),
            WriteTool(),
            EditTool(),
            BashTool(),
            GrepTool(),
            GlobTool(),
            LsTool(),
            TodoTool(),
            RecallTool(),
        ]
    )


async def run_call(registry: ToolRegistry, call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Run one call, never raising except asyncio.CancelledError: an unknown tool, invalid input or an
    unexpected exception becomes an error result the model can read."""
    tool = registry.get(call.name)
    if tool is None:
        available = ", ".join(registry.names())
        return ToolResult(output=f"unknown tool {call.name!r}; available tools: {available}", is_error=True)
    try:
        # `accepts`: a wider schema than the one sent, for what a model used to Claude Code adds
        tool_input = validate_input(getattr(tool, "accepts", tool.input_schema), call.input)
    except InputError as e:
        return ToolResult(output=f"invalid input for {tool.name}: {e}", is_error=True)
    try:
        return await tool.run(tool_input, ctx)
    except Exception as e:  # a tool bug must not end the session
        return ToolResult(output=f"{tool.name} failed: {type(e).__name__}: {e}", is_error=True)


class InputError(ValueError):
    pass


_TYPES: dict[str, str] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
}


def validate_input(spec: dict[str, Any], value: Any) -> dict[str, Any]:
    """Check a call's input against the tool's JSON schema (the subset our tools use) and return it
    normalized: numbers given as strings ("10"), booleans as "true"/"false" and integral floats are
    coerced, since models produce them; anything else that does not fit is an InputError."""
    if not isinstance(value, dict):
        raise InputError(f"expected an object of parameters, got {type(value).__name__}")
    result = _check(spec, value, "")
    assert isinstance(result, dict)
    return result


def _check(spec: dict[str, Any], value: Any, where: str) -> Any:
    kind = spec.get("type")
    label = where or "input"
    value = _coerce(kind, value)
    if kind == "object":
        if not isinstance(value, dict):
            raise InputError(f"{label} must be {_TYPES['object']}, got {_json_type(value)}")
        props: dict[str, Any] = spec.get("properties", {})
        missing = [name for name in spec.get("required", []) if value.get(name) is None]
        if missing:
            raise InputError(f"missing required parameter{'s' * (len(missing) > 1)}: {', '.join(missing)}")
        extra = spec.get("additionalProperties", False)
        unknown = [name for name in value if name not in props]
        if unknown and extra is True:  # an open object (MCP schemas): extras go to the tool as given
            props = {**props, **{name: {} for name in unknown}}
        elif unknown and isinstance(extra, dict):
            props = {**props, **{name: extra for name in unknown}}
        elif unknown:
            allowed = ", ".join(props) or "none"
            raise InputError(f"unexpected parameter {', '.join(map(repr, unknown))} (allowed: {allowed})")
        out: dict[str, Any] = {}
        for name, item in value.items():
            if item is None and name not in spec.get("required", []):
                continue  # an explicit null for an optional parameter means "not given"
            out[name] = _check(props[name], item, f"{where}.{name}" if where else name)
        return out
    if kind == "array":
        if not isinstance(value, list):
            raise InputError(f"{label} must be {_TYPES['array']}, got {_json_type(value)}")
        items = spec.get("items", {})
        return [_check(items, item, f"{label}[{i}]") for i, item in enumerate(value)]
    if kind in ("string", "integer", "number", "boolean"):
        ok = {
            "string": isinstance(value, str),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, int | float) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
        }[kind]
        if not ok:
            raise InputError(f"{label} must be {_TYPES[kind]}, got {_json_type(value)} {value!r:.60}")
    if "enum" in spec and value not in spec["enum"]:
        raise InputError(f"{label} must be one of {', '.join(map(str, spec['enum']))}, got {value!r:.60}")
    return value


def _coerce(kind: Any, value: Any) -> Any:
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
    elif kind == "number" and isinstance(value, str):
        try:
            return float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return value
    elif kind == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
