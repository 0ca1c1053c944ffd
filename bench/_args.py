"""What the bench scripts' arguments share: a count (runs, turns, files, workers ...) is a whole number,
1 or more; anything else is refused by argparse with one line, before any work starts."""

from __future__ import annotations

import argparse


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value
