"""The model's regular expressions, run with a time limit.

`bash_output(filter=…)` and `recall(pattern=…)` match a pattern the model wrote against output that
may be megabytes long, on the event loop the UI runs on. Python's `re` has no limit: a pattern like
`(a|aa)+$` backtracks for minutes on one long line and the whole agent stops answering. The `regex`
library (re's syntax, maintained, already installed with tiktoken) takes a timeout per call; `Matcher`
spreads one budget over every line of a read, and when it is spent the read stops with a clear error
and nothing is lost (the output stays stored, the cursor where it was).
"""

from __future__ import annotations

import time

import regex

from agent_cli.core.errors import ToolError

BUDGET_SECONDS = 2.0  # for one read's matching, all its lines together


class Matcher:
    """A compiled pattern and what is left of its time budget."""

    def __init__(self, pattern: str, what: str = "pattern", budget: float = BUDGET_SECONDS) -> None:
        try:
            self.compiled = regex.compile(pattern)
        except (regex.error, TypeError, ValueError) as exc:
            raise ToolError(f"invalid {what} {pattern!r}: {exc} (nothing was read)") from exc
        self.pattern = pattern
        self.what = what
        self.budget = budget
        self.deadline: float | None = None

    def search(self, line: str) -> bool:
        """Whether `line` holds a match; ToolError once the read's budget is spent."""
        now = time.monotonic()
        if self.deadline is None:
            self.deadline = now + self.budget
        left = self.deadline - now
        try:
            if left <= 0:
                raise TimeoutError
            return self.compiled.search(line, timeout=left) is not None
        except TimeoutError:
            raise ToolError(
                f"the {self.what} /{self.pattern}/ took over {self.budget:g} s to match (it backtracks: "
                "nested or overlapping repeats such as (a+)+ or (a|aa)+); nothing was lost, try a simpler one"
            ) from None
