"""The model's regular expressions, run with a time limit.

`bash_output(filter=…)` and `recall(pattern=…)` match a pattern the model wrote against output that
may be megabytes long, on the event loop the UI runs on. Python's `re` has no limit: a pattern like
`(a|aa)+$` backtracks for minutes on one long line and the whole agent stops answering. The `regex`
library (re's syntax, maintained, already installed with tiktoken) takes a timeout per call. A read
stops, with a clear error and nothing lost (the output stays stored, the cursor where it was), when
one line takes over `BUDGET_SECONDS`, or when the read has run that long and is slower than
`SLOW_LINE_SECONDS` a line on average (a 50 MB output searched by a sane pattern runs far faster).
"""

from __future__ import annotations

import time

import regex

from agent_cli.core.errors import ToolError

BUDGET_SECONDS = 2.0
SLOW_LINE_SECONDS = 50e-6  # a sane pattern matches hundreds of thousands of lines a second


class Matcher:
    """A compiled pattern and the time its read has taken."""

    def __init__(self, pattern: str, what: str = "pattern", budget: float = BUDGET_SECONDS) -> None:
        try:
            self.compiled = regex.compile(pattern)
        except (regex.error, TypeError, ValueError) as exc:
            raise ToolError(f"invalid {what} {pattern!r}: {exc} (nothing was read)") from exc
        self.pattern = pattern
        self.what = what
        self.budget = budget
        self.started: float | None = None
        self.lines = 0

    def search(self, line: str) -> bool:
        """Whether `line` holds a match; ToolError when the pattern proves too slow (above)."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        self.lines += 1
        spent = now - self.started
        try:
            if spent > self.budget and spent > self.lines * SLOW_LINE_SECONDS:
                raise TimeoutError
            return self.compiled.search(line, timeout=self.budget) is not None
        except TimeoutError:
            raise ToolError(
                f"the {self.what} /{self.pattern}/ took over {self.budget:g} s to match (it backtracks: "
                "nested or overlapping repeats such as (a+)+ or (a|aa)+); nothing was lost, try a simpler one"
            ) from None
