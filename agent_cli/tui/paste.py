"""Big pastes become a chip in the prompt: `[Pasted text: 10.2 MB, 120,000 lines]`.

Putting megabytes into the TextArea takes tens of seconds (every line is measured and wrapped) and
leaves a prompt nobody can read. The prompt shows the chip; `expand` swaps each chip still in the
text for what was pasted (Backspace and Delete take a chip whole: `chip_at`), so the full text is what gets sent — as a `Prompt` (core/prompt.py) whose
parts keep the pastes apart from the words typed around them, which stay the person's own. Chips
stay expandable for the whole session, so a prompt recalled from history (Up) still carries its paste.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_cli.core.prompt import Prompt, PromptPart

CHIP_CHARS = 1_000  # a paste longer than this, or with more lines than CHIP_LINES, is a chip
CHIP_LINES = 10


def line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def format_size(size: int) -> str:
    """`812 B`, `4.1 kB`, `10.2 MB` (decimal units, as file managers show them)."""
    if size < 1_000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1_000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def chip_label(text: str, number: int = 1) -> str:
    lines = line_count(text)
    tag = "Pasted text" if number == 1 else f"Pasted text #{number}"
    size = format_size(len(text.encode("utf-8", "surrogatepass")))
    return f"[{tag}: {size}, {lines:,} line{'s' * (lines != 1)}]"


def wants_chip(text: str) -> bool:
    return len(text) > CHIP_CHARS or normalize_newlines(text).count("\n") >= CHIP_LINES


def normalize_newlines(text: str) -> str:
    """Terminals paste line breaks as CR (tmux, xterm): a pasted line break is a newline."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


@dataclass
class PasteStore:
    """The session's collapsed pastes, by chip label."""

    _texts: dict[str, str] = field(default_factory=dict)

    def add(self, text: str) -> str:
        """Keep `text`; the chip that stands for it in the prompt."""
        text = normalize_newlines(text)
        for label, kept in self._texts.items():
            if kept == text:  # the same paste again: the same chip, stored once
                return label
        label = chip_label(text, len(self._texts) + 1)
        self._texts[label] = text
        return label

    def chip_at(self, line: str, column: int, *, left: bool) -> tuple[int, int] | None:
        """The span of the chip in `line` that a Backspace (`left`) or Delete at `column` would cut
        into: a chip goes whole, never a character of it (a broken chip would send its label)."""
        for label in self._texts:
            start = line.find(label)
            while start != -1:
                end = start + len(label)
                if (start < column <= end) if left else (start <= column < end):
                    return start, end
                start = line.find(label, end)
        return None

    def expand(self, text: str) -> str:
        """`text` with every chip in it replaced by its paste (a chip edited away is simply gone)."""
        present = [label for label in self._texts if label in text]
        if not present:
            return text
        pattern = re.compile("|".join(re.escape(label) for label in present))
        return pattern.sub(lambda m: self._texts[m.group(0)], text)  # one pass: pastes are not rescanned

    def prompt(self, text: str) -> str:
        """`text` expanded as a `Prompt` (words and pastes as parts); `text` itself when it has no chip."""
        present = [label for label in self._texts if label in text]
        if not present:
            return text
        pattern = re.compile("(" + "|".join(re.escape(label) for label in present) + ")")
        pieces = pattern.split(text)  # words, chip, words, chip, ..., words
        return Prompt(
            PromptPart(self._texts[piece], pasted=True) if i % 2 else PromptPart(piece)
            for i, piece in enumerate(pieces)
        )

    def __len__(self) -> int:
        return len(self._texts)
