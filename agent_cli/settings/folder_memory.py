"""A folder's memory files, given with the first read that reaches the folder (Claude Code's nested
CLAUDE.md, read "on demand").

The memory files of the workspace and the folders above it are read at the start of a session
(settings/memory_files.py). Those of a folder below the workspace — `AGENTS.md`, `CLAUDE.md`,
`.claude/CLAUDE.md`, `CLAUDE.local.md` (`PROJECT_NAMES`) in `pkg/api/` — come when `read_file`
first reads a file in that folder or deeper: each folder from just below the workspace down to the
file's, whose files were not given yet in this conversation, has them appended to that read's
result, in one `<user-context folder="…">` element (the tag the workspace's own come in: the
repository's instructions, no more trusted than those). Under the same rules as the workspace's: a
link out of the folder, an import leading out, a file a deny or ask rule covers are not read (one
line says so), each file and all imports capped.

They are part of that result: the context engine clears them with it, `recall` brings them back, and
T0 offload keeps them in view after the preview of a large read (context/offload.py). A folder's
come once while the context holds them: the next read there brings them again only after they left
it (a `/clear`, a summary, a clear of the result they came with); a new session, a resumed one and a
sub-agent each start from what their own view shows.

The composition root (api/compose.py) installs one on each loop's tool calls (agent/tool_calls.py
`result_parts`) when `subfolder_memory` is on (the default).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_cli.core.tags import FOLDER_CONTEXT_TAG, element
from agent_cli.core.types import Message, ToolCall
from agent_cli.settings.memory_files import (
    Judge,
    folders_below,
    has_memory_files,
    project_memory_paths,
    read_folder_memory,
)
from agent_cli.tools.base import ToolResult

READ_TOOL = "read_file"
_GIVEN = re.compile(rf'\n\n<{FOLDER_CONTEXT_TAG} folder="([^"]*)">\n')


class FolderMemory:
    """`result_parts` for one conversation (`view`: its engine's view, asked at each read): (tag,
    element) for a read that reaches folders whose memory files the context does not hold; None
    otherwise."""

    def __init__(
        self, workspace: Path, judge: Judge, template: str, view: Callable[[], Sequence[Message]]
    ) -> None:
        self.root = Path(workspace).resolve()
        self.judge = judge  # why the person's rules refuse reading a file ("" when they do not)
        self.template = template  # prompts/folder_memory.md: `{folders}`, `{files}`
        self.view = view
        self.seen = project_memory_paths(self.root)  # the workspace's own: read at the start already
        self._running: dict[str, set[Path]] = {}  # call id -> folders it gave, until its result is in view

    def __call__(self, call: ToolCall, result: ToolResult) -> tuple[str, str] | None:
        path = result.meta.get("path")
        if call.name != READ_TOOL or result.is_error or not isinstance(path, str):
            return None
        folders = [f for f in folders_below(self.root, Path(path)) if has_memory_files(f)]
        if not folders:  # most reads: nothing to look for in the view
            return None
        given, seen = self._given(), set(self.seen)
        texts: list[tuple[Path, str]] = []
        for folder in folders:
            if folder not in given and (text := read_folder_memory(self.root, folder, self.judge, seen)):
                texts.append((folder, text))
        if not texts:
            return None
        self._running[call.id] = self._covered(texts[-1][0])
        names = [os.path.relpath(folder, self.root) for folder, _ in texts]
        fill = {"{folders}": ", ".join(names), "{files}": "\n\n".join(text for _, text in texts)}
        body = re.sub(r"\{folders\}|\{files\}", lambda m: fill[m.group(0)], self.template).strip()
        return FOLDER_CONTEXT_TAG, element(FOLDER_CONTEXT_TAG, body, folder=names[-1])

    def _given(self) -> set[Path]:
        """The folders whose files the context holds: shown in a read's result in the view (whole,
        or after a large read's preview), or given with a call whose result is not in it yet."""
        uses: set[str] = set()  # of the calls still running: those whose call is in view...
        answered: set[str] = set()  # ...and whose result is too
        shown: set[Path] = set()
        for message in self.view():
            for block in message.blocks:
                if block.type == "tool_use" and block.id in self._running:
                    uses.add(block.id)
                elif block.type != "tool_result":
                    continue
                elif block.tool_use_id in self._running:
                    answered.add(block.tool_use_id)
                if block.meta.tag == FOLDER_CONTEXT_TAG and (found := _GIVEN.findall(block.text)):
                    shown |= self._covered(self.root / html.unescape(found[-1]))
        self._running = {k: v for k, v in self._running.items() if k in uses and k not in answered}
        return shown.union(*self._running.values())

    def _covered(self, folder: Path) -> set[Path]:
        """`folder` and those above it, down from the workspace: the read that reached it reached them."""
        return {p for p in (folder, *folder.parents) if p != self.root and p.is_relative_to(self.root)}
