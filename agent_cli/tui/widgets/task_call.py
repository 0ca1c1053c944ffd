"""A `task` call: one live line per sub-agent.

While the child works the body shows what it does now, its model calls and its context size; Enter
or a click expands it to every step so far. When it is done the body previews the child's answer
(expanded: the steps, then the whole answer).
"""

from __future__ import annotations

from agent_cli.core.events import SubagentProgress
from agent_cli.tui.widgets.tool_call import ToolCall


class TaskCall(ToolCall):
    def __init__(self, tool: str, target: str = "", *, call_id: str = "", **kwargs) -> None:
        super().__init__(tool, target, call_id=call_id, **kwargs)
        self.agent = target.split(":", 1)[0] if ":" in target else "sub-agent"
        self.step = ""
        self.steps: tuple[str, ...] = ()
        self.turns = 0
        self.tokens = 0

    def progress(self, event: SubagentProgress) -> None:
        self.agent = event.agent or self.agent
        self.step = "" if event.done else event.step
        self.steps = event.steps
        self.turns = event.turns
        self.tokens = event.tokens
        self._update_body()

    @property
    def summary(self) -> str:
        calls = f"{self.turns} model call{'s' * (self.turns != 1)}"
        parts = [self.agent, calls, f"{_k(self.tokens)} tokens in context"]
        if self.step and not self.is_finished:
            parts.append(f"now: {self.step}")
        return " · ".join(parts)

    @property
    def content(self) -> str:
        lines = [self.summary]
        if self.expanded:
            lines += [f"  ⎿ {step}" for step in self.steps]
        if self.output:
            lines += ["", self.output]
        return "\n".join(lines)


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
