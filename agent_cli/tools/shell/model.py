"""What the permission rules see of a bash line: its simple commands, the files it writes and reads,
and the doubts that keep any rule from allowing it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]  # the command and its arguments, quotes removed, expansions as written
    assignments: tuple[str, ...] = ()  # `VAR=x` before it (or set by `env`), quotes removed
    risk: str = ""  # why no prefix or wildcard rule may allow it ("" = none): an exact rule or `Bash` can
    wrapper: bool = False  # only runs the command listed after it (`timeout 5 …`, `bash -c '…'`)

    @property
    def text(self) -> str:
        return " ".join(self.assignments + self.words)


@dataclass(frozen=True)
class ShellLine:
    commands: tuple[SimpleCommand, ...]  # in order, substitutions and wrapped commands included
    writes: tuple[str, ...]  # targets of redirects that write a file (`> f`, `>> f`, `&> f`), as written
    reads: tuple[str, ...] = ()  # targets of redirects that read a file (`< f`)
    doubts: tuple[str, ...] = ()  # why it cannot be read with certainty: no rule but a bare `Bash` allows it

    @property
    def sure(self) -> bool:
        return not self.doubts


@dataclass(frozen=True)
class Word:
    text: str  # quote removed; expansions as written
    dynamic: bool = False  # holds an expansion ($x, $(…), …): its value is known only when it runs
    glob: bool = False  # holds an unquoted glob or brace expansion: it may become other words


class Sink(Protocol):
    """Where the reading of a line goes (shell/line.py's accumulator)."""

    def command(self, command: SimpleCommand) -> None: ...

    def doubt(self, reason: str) -> None: ...

    def script(self, text: str) -> None:
        """Read `text` as a bash script that this line runs (`bash -c`, `eval`, `$(…)`)."""
        ...

    def changes_directory(self) -> None:
        """A command in the line changes the directory later relative paths are read from."""
        ...
