"""Bash lines read the way bash reads them, so the permission rules see the whole command.

`parse_shell(command)` gives a `ShellLine`: every simple command the line runs (with its `VAR=x`
assignments, and a risk when no prefix rule may allow it), every file a redirect writes or reads,
and the doubts that keep any rule but a bare `Bash` from allowing it. The modules:
- `line.py`: the entry; bashlex for the structure, and the walk over it;
- `scan.py`: quotes, here-documents and the expansions bashlex does not look inside;
- `words.py`: quote removal, ANSI-C strings, globs in a word;
- `expansions.py`: what `${…}`, `$((…))`, subscripts and substitutions run;
- `wrappers.py`: commands that run another command (`timeout`, `env`, `sudo`, `bash -c`, `eval`,
  `find -exec`…);
- `programs.py`: options that run a program or write a file, and builtins that change later commands;
- `env.py`: which environment assignments are harmless and which make a program run another;
- `model.py`: the values they share.
"""

from agent_cli.tools.shell.line import HARMLESS_TARGETS, parse_shell
from agent_cli.tools.shell.model import ShellLine, SimpleCommand

__all__ = ["HARMLESS_TARGETS", "ShellLine", "SimpleCommand", "parse_shell"]
