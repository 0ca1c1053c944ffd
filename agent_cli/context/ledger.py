"""The ledger: hard facts of the session, kept by code from the messages, never by a model (DESIGN §8).

The person's messages (verbatim; long ones cut with a ref), files read/written/edited (path, count,
last line range), commands run with their exit code, the last errors, the todo state. It is appended
to every full-compaction summary and is the whole of the emergency fallback summary.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from agent_cli.context.working_set import path_of
from agent_cli.core.types import Block, Message

_PERSISTED = re.compile(r'<persisted-output ref="([^"]+)"[^>]*? chars="(\d+)"')
MESSAGE_CHARS = 2_000  # longer messages are cut, with a ref to the full text
MAX_ERRORS = 10
SHORT_CHARS = 200  # what is left of an old message when the rendering must shrink
RENDER_COMMANDS = 40  # the rendering shows the latest commands; the JSON keeps them all
FILE_TOOLS = {"read_file": "read", "write_file": "written", "edit_file": "edited"}
_EXIT = re.compile(r"(?:exit(?:ed)?(?: with)?(?: code| status)?[:= ]+|\[exit )(-?\d+)", re.IGNORECASE)
_TODO_MARKS = {"completed": "x", "done": "x", "in_progress": "~", "in-progress": "~", "active": "~"}


@dataclass
class FileEntry:
    path: str
    read: int = 0
    written: int = 0
    edited: int = 0
    lines: tuple[int, int] | None = None  # the last line range touched


@dataclass
class CommandEntry:
    command: str
    exit_code: int | None = None
    is_error: bool = False


@dataclass
class _Call:
    name: str
    input: dict[str, Any]
    file: str = ""  # working_set.path_of: one entry per file however the calls spell it


@dataclass
class Ledger:
    messages: list[str] = field(default_factory=list)  # the person's messages (possibly cut)
    files: dict[str, FileEntry] = field(default_factory=dict)  # first-seen order
    commands: list[CommandEntry] = field(default_factory=list)
    errors: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))
    todos: list[tuple[str, str]] = field(default_factory=list)  # (status, text)
    touched: list[str] = field(default_factory=list)  # file paths, the most recently touched last
    _calls: dict[str, _Call] = field(default_factory=dict)
    _commands_by_id: dict[str, int] = field(default_factory=dict)
    _files_by_id: dict[str, str] = field(default_factory=dict)

    # -- feeding ---------------------------------------------------------------------------------
    def observe(self, message: Message) -> dict[str, str]:
        """Record a message as it is appended; returns originals to keep ({ref: full text})."""
        if message.role == "assistant":
            for block in message.blocks:
                if block.type == "tool_use":
                    self._calls[block.id] = _Call(block.name, dict(block.input), path_of(block))
            return {}
        originals: dict[str, str] = {}
        for block in message.blocks:
            if block.type == "tool_result":
                self._result(block)
        said = "\n\n".join(
            _pasted(b) or b.text
            for b in message.blocks
            if b.type == "text" and not b.meta.tag and b.meta.source == "user"
        )
        words = said.strip()
        if words:
            number = len(self.messages) + 1
            if len(words) > MESSAGE_CHARS:
                ref = f"user-{number}"
                originals[ref] = said
                words = (
                    f"{words[:MESSAGE_CHARS]} … [{len(words) - MESSAGE_CHARS:,} more chars: recall ref {ref}]"
                )
            self.messages.append(words)
        return originals

    def record_result(self, tool_use_id: str, meta: Mapping[str, Any]) -> None:
        """Facts a tool reported beside its output (`ToolResult.meta`): exit_code, lines, todos."""
        if "exit_code" in meta and tool_use_id in self._commands_by_id:
            entry = self.commands[self._commands_by_id[tool_use_id]]
            entry.exit_code = _int(meta.get("exit_code"))
        lines = meta.get("lines")
        path = self._files_by_id.get(tool_use_id) or str(meta.get("path") or "")
        if path and isinstance(lines, list | tuple) and len(lines) == 2 and path in self.files:
            self.files[path].lines = (int(lines[0]), int(lines[1]))
        if isinstance(meta.get("todos"), list):
            self.todos = _todos(meta["todos"])

    def record_error(self, text: str) -> None:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if first:
            self.errors.append(first[:300])

    def _result(self, block: Block) -> None:
        call = self._calls.pop(block.tool_use_id, None)
        if call is None:
            return
        if block.is_error:
            target = _path(call.input) or str(call.input.get("command", ""))
            self.record_error(f"{call.name} {target}: {block.text}".strip())
        if call.name in FILE_TOOLS and not block.is_error:
            path = call.file
            if path:
                self._files_by_id[block.tool_use_id] = path
                entry = self.files.setdefault(path, FileEntry(path))
                kind = FILE_TOOLS[call.name]
                setattr(entry, kind, getattr(entry, kind) + 1)
                entry.lines = _line_range(call.input) or entry.lines
                if path in self.touched:
                    self.touched.remove(path)
                self.touched.append(path)
        elif call.name == "bash":
            command = str(call.input.get("command", "")).strip()
            if command:
                found = _EXIT.search(block.text[-400:]) if block.text else None
                code = int(found.group(1)) if found else (None if block.is_error else 0)
                self._commands_by_id[block.tool_use_id] = len(self.commands)
                self.commands.append(CommandEntry(command, code, block.is_error))
        elif call.name in ("todo_write", "todo", "TodoWrite") and not block.is_error:
            items = call.input.get("todos", call.input.get("items"))
            if isinstance(items, list):
                self.todos = _todos(items)

    # -- output ----------------------------------------------------------------------------------
    def render(self, max_chars: int | None = None) -> str:
        """Markdown in a stable order. With `max_chars`, the oldest messages are shortened first."""
        messages = list(self.messages)
        text = self._render(messages)
        excess = len(text) - max_chars if max_chars is not None else 0
        for index, message in enumerate(messages):
            if excess <= 0:
                break
            if len(message) > SHORT_CHARS + 20:
                messages[index] = message[:SHORT_CHARS] + " … [shortened]"
                excess -= len(message) - len(messages[index])
        return self._render(messages) if messages != self.messages else text

    def _render(self, messages: list[str]) -> str:
        out = ["## Ledger (recorded by code, exact)"]
        if messages:
            out.append("\n### The person's messages")
            out += [f"{i}. {_quote(m)}" for i, m in enumerate(messages, 1)]
        if self.files:
            out.append("\n### Files")
            for entry in self.files.values():
                kinds = [
                    f"{k} {getattr(entry, k)}x" for k in ("read", "written", "edited") if getattr(entry, k)
                ]
                lines = f", last lines {entry.lines[0]}-{entry.lines[1]}" if entry.lines else ""
                out.append(f"- `{entry.path}`: {', '.join(kinds)}{lines}")
        if self.commands:
            out.append("\n### Commands")
            shown = self.commands[-RENDER_COMMANDS:]
            if len(self.commands) > len(shown):
                out.append(f"- ({len(self.commands) - len(shown)} earlier commands not shown)")
            for c in shown:
                status = (
                    f"exit {c.exit_code}" if c.exit_code is not None else ("failed" if c.is_error else "?")
                )
                out.append(f"- `{_one_line(c.command)}` -> {status}")
        if self.errors:
            out.append("\n### Recent errors")
            out += [f"- {e}" for e in self.errors]
        if self.todos:
            out.append("\n### Todo")
            out += self.todo_lines()
        return "\n".join(out) if len(out) > 1 else ""

    def todo_lines(self) -> list[str]:
        return [f"- [{_TODO_MARKS.get(s, ' ')}] {t}" for s, t in self.todos]

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": list(self.messages),
            "files": [asdict(f) for f in self.files.values()],
            "commands": [asdict(c) for c in self.commands],
            "errors": list(self.errors),
            "todos": [list(t) for t in self.todos],
            "touched": list(self.touched),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ledger:
        ledger = cls()
        ledger.messages = [str(m) for m in data.get("messages", [])]
        for f in data.get("files", []):
            lines = f.get("lines")
            entry = FileEntry(
                str(f["path"]), int(f.get("read", 0)), int(f.get("written", 0)), int(f.get("edited", 0))
            )
            entry.lines = (int(lines[0]), int(lines[1])) if lines else None
            ledger.files[entry.path] = entry
        ledger.commands = [
            CommandEntry(str(c["command"]), _int(c.get("exit_code")), bool(c.get("is_error")))
            for c in data.get("commands", [])
        ]
        ledger.errors.extend(str(e) for e in data.get("errors", []))
        ledger.todos = [(str(s), str(t)) for s, t in data.get("todos", [])]
        ledger.touched = [str(p) for p in data.get("touched", [])]
        return ledger


def _path(data: Mapping[str, Any]) -> str:
    value = data.get("path") or data.get("file_path") or ""
    return str(value)


def _line_range(data: Mapping[str, Any]) -> tuple[int, int] | None:
    offset, limit = _int(data.get("offset")), _int(data.get("limit"))
    if not limit or limit < 1:
        return None  # the tool's own default range: known only from its meta (record_result)
    start = max(1, offset or 1)
    return (start, start + limit - 1)


def _todos(items: list[Any]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        if isinstance(item, Mapping):
            text = item.get("content") or item.get("text") or item.get("title") or item.get("task") or ""
            out.append((str(item.get("status", "pending")), _one_line(str(text))))
        elif isinstance(item, str):
            out.append(("pending", _one_line(item)))
    return out


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _pasted(block: Block) -> str:
    """A paste offloaded at ingest (T0): one line naming its size and ref; the text is in the store."""
    found = _PERSISTED.match(block.text) if block.meta.ref else None
    if found is None:
        return ""
    return f"[pasted text, {int(found.group(2)):,} chars: recall ref {found.group(1)}]"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:197] + "..."


def _quote(text: str) -> str:
    return text.replace("\n", "\n   ")
