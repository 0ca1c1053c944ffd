"""Tiny Claude Code sessions written line by line, for replay tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

T0 = datetime(2026, 2, 10, 10, 0, 0, tzinfo=UTC).timestamp()


class SessionWriter:
    """Writes a Claude Code JSONL: one line per content block, usage on every line of a response."""

    def __init__(self, model: str = "claude-opus-4-6") -> None:
        self.model = model
        self.lines: list[dict[str, Any]] = []
        self._n = 0
        self._calls = 0

    def _stamp(self, seconds: float) -> str:
        return datetime.fromtimestamp(T0 + seconds, UTC).isoformat().replace("+00:00", "Z")

    def _uuid(self) -> str:
        self._n += 1
        return f"00000000-0000-0000-0000-{self._n:012d}"

    def user(self, content: Any, at: float) -> None:
        self.lines.append(
            {
                "type": "user",
                "uuid": self._uuid(),
                "timestamp": self._stamp(at),
                "message": {"role": "user", "content": content},
            }
        )

    def response(
        self, blocks: list[dict[str, Any]], at: float, *, read: int = 0, write: int = 0, out: int = 5
    ) -> None:
        self._n += 1
        message_id = f"msg_{self._n}"
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": out,
        }
        for block in blocks:
            self.lines.append(
                {
                    "type": "assistant",
                    "uuid": self._uuid(),
                    "timestamp": self._stamp(at),
                    "message": {
                        "id": message_id,
                        "model": self.model,
                        "role": "assistant",
                        "content": [block],
                        "usage": usage,
                    },
                }
            )

    def tool_turn(self, name: str, target: dict[str, Any], output: str, at: float, **usage: int) -> None:
        """A response calling one tool, then its result."""
        self._calls += 1
        call = f"toolu_{self._calls:03d}"
        self.response([{"type": "tool_use", "id": call, "name": name, "input": target}], at, **usage)
        self.user([{"type": "tool_result", "tool_use_id": call, "content": output}], at + 1)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path
