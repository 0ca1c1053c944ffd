"""What a batch shows while it runs: a line per task as it ends and, on a terminal, a live line below
them (done / running / failed, tokens, cost) drawn with rich; piped, plain lines only, each with
the count so far. The person's words (prompts, results) are never read as markup."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from agent_cli.batch.results import Row
from agent_cli.core.printable import printable


@dataclass
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    interrupted: int = 0
    running: set[str] = field(default_factory=set)
    tokens: int = 0
    cost: float = 0.0

    @property
    def ended(self) -> int:
        return self.done + self.failed + self.interrupted

    def line(self) -> str:
        waiting = max(0, self.total - self.ended - len(self.running))
        parts = [f"{self.done} done", f"{len(self.running)} running", f"{self.failed} failed"]
        if self.interrupted:
            parts.append(f"{self.interrupted} interrupted")
        parts.append(f"{waiting} waiting")
        return f"batch: {' · '.join(parts)} · {self.tokens:,} tokens · ${self.cost:.4f}"


class Progress:
    def __init__(self, total: int, out: TextIO | None = None, *, live: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.counts = Counts(total)
        self.live_line = self.out.isatty() if live is None else live
        self._live: Any = None
        self._console: Any = None

    def __enter__(self) -> Progress:
        if self.live_line:
            from rich.console import Console
            from rich.live import Live

            self._console = Console(file=self.out, highlight=False)
            self._live = Live(self._status(), console=self._console, refresh_per_second=4, transient=True)
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _status(self) -> Any:
        from rich.text import Text

        return Text(self.counts.line(), style="bold")

    def say(self, text: str) -> None:
        """A line above the live one (or a plain line); an error's words are a repository's or a
        server's, so no escape sequence in them reaches the terminal."""
        text = printable(text)
        if self._live is not None:
            from rich.text import Text

            self._console.print(Text(text))  # a Text: never markup
            self._live.update(self._status())
        else:
            print(text, file=self.out, flush=True)

    def started(self, task_id: str) -> None:
        self.counts.running.add(task_id)
        self._refresh()

    def finished(self, task_id: str, row: Row | None) -> None:
        counts = self.counts
        counts.running.discard(task_id)
        if row is None:
            counts.interrupted += 1
            self._line("…", task_id, "interrupted; its session is kept (run the batch again to go on)")
            return
        if row.is_error:
            counts.failed += 1
        else:
            counts.done += 1
        counts.tokens += row.usage.total_input + row.usage.output_tokens
        counts.cost += row.total_cost_usd
        self._line("✗" if row.is_error else "✓", task_id, describe(row))

    def waiting(self, task_id: str) -> None:
        self._line("⏸", task_id, "waits for a free slot (--max-concurrency)")

    def died(self, task_id: str, why: str, retrying: bool) -> None:
        then = "running it once more" if retrying else "not again"
        self._line("!", task_id, f"its process died ({why}); {then}")

    def _line(self, mark: str, task_id: str, text: str) -> None:
        prefix = "" if self._live is not None else f"[{self.counts.ended}/{self.counts.total}] "
        self.say(f"{prefix}{mark} {task_id}  {text}")

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._status())


def describe(row: Row) -> str:
    seconds = row.duration_ms / 1000
    if row.is_error:
        if row.stop_reason == "max_turns":  # its result is the last words, often none
            first = f"max turns reached ({row.num_turns} model calls); the task is not finished"
        else:
            first = (row.result.strip().splitlines() or [*row.errors[-1:], "failed"])[0]
        return f"error: {first[:160]}" + (f" · {row.branch}" if row.commit else "")
    parts = [f"{row.num_turns} turn{'s' if row.num_turns != 1 else ''}", f"{seconds:.1f} s"]
    parts += [f"${row.total_cost_usd:.4f}", row.branch, row.diff_stat or "no changes"]
    return " · ".join(part for part in parts if part)
