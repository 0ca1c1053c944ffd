"""`# a line`: the person adds it to the workspace's memory file — AGENTS.md or CLAUDE.md, whichever
exists (AGENTS.md first; a new AGENTS.md when neither does) — as a Markdown list item, keeping the
file's encoding and line ends. The model hears of it at once (a reminder with the next prompt); a
new session reads it with the file.

The repository is not trusted: a memory file that is a symlink out of the workspace, or onto a path
that makes code run later (git hooks, shell start-up files: tools/sandbox/protected.py), is not
written; one line says why.
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.core.files import atomic_write_bytes
from agent_cli.settings.memory_files import MEMORY_NAMES
from agent_cli.tools.encoding import UTF8, decode_file, line_ending, unencodable
from agent_cli.tools.sandbox.protected import is_protected


def memory_line(text: str) -> str | None:
    """The line of a `#` prompt (one line; the `#`s and spaces before it dropped); None otherwise."""
    if not text.startswith("#") or "\n" in text.strip():
        return None
    return text.lstrip("#").strip()


def memory_file(workspace: Path) -> Path:
    for name in MEMORY_NAMES:
        path = workspace / name
        if path.exists() or path.is_symlink():
            return path
    return workspace / MEMORY_NAMES[0]


def add_memory_line(workspace: Path, line: str) -> Path:
    """Append `- line` to the memory file; the file. ValueError (one line) when it may not be."""
    workspace = workspace.resolve()
    path = memory_file(workspace)
    real = path.resolve()
    if not real.is_relative_to(workspace):
        raise ValueError(f"{path.name} points outside the workspace ({real}); not written")
    if label := is_protected(real, workspace):
        raise ValueError(f"{path.name} points at a protected path ({label}); not written")
    if real.exists() and not real.is_file():
        raise ValueError(f"{path.name} is not a regular file; not written")
    data = real.read_bytes() if real.exists() else b""
    decoded = decode_file(data) if data else ("", UTF8)
    if decoded is None:
        raise ValueError(f"{path.name} is not a text file; not written")
    text, encoding = decoded
    end = line_ending(text) if text else "\n"
    if text and not text.endswith(("\n", "\r")):
        text += end
    text += f"- {line}{end}"
    if bad := unencodable(text, encoding):
        raise ValueError(f"{path.name} is {encoding.label}, which cannot hold {bad!r}; not written")
    atomic_write_bytes(real, encoding.encode(text))
    return path
