"""Small, pure formatters shared by the TUI's widgets: token counts, durations, money, percentages."""

from __future__ import annotations


def format_tokens(n: int) -> str:
    """`950`, `51.2k`, `200k`, `1.2M` — short, and exact enough to read at a glance."""
    n = max(0, int(n))
    if n < 1_000:
        return str(n)
    if n < 1_000_000:
        return _trim(f"{n / 1_000:.1f}") + "k"
    return _trim(f"{n / 1_000_000:.1f}") + "M"


def _trim(number: str) -> str:
    return number[:-2] if number.endswith(".0") else number


def format_percent(fraction: float) -> str:
    return f"{round(max(0.0, fraction) * 100)}%"


def format_threshold(fraction: float) -> str:
    """A configured fraction exactly: `75%`, `83.5%`."""
    pct = round(fraction * 100, 1)
    return f"{pct:g}%"


def format_duration(seconds: float) -> str:
    """`40ms`, `12.4s`, `2m 05s`."""
    seconds = max(0.0, float(seconds))
    if seconds < 0.1:
        return f"{round(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m {rest:02d}s"


def format_cost(usd: float) -> str:
    return f"${usd:.4f}"


def hit_rate_fraction(rate: float) -> float:
    """The backend reports the cache hit rate as a fraction (0..1); accept a percentage too."""
    return rate / 100 if rate > 1 else rate


def first_lines(text: str, count: int) -> tuple[str, int]:
    """The first `count` lines of `text` and how many lines were left out."""
    lines = text.splitlines()
    if len(lines) <= count:
        return text.rstrip("\n"), 0
    return "\n".join(lines[:count]), len(lines) - count
