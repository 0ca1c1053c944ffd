"""What a mention names, and the call that attaches it: read_file for a text file or an image (with
the line range as offset and limit), ls for a directory. What cannot be attached — a missing path, a
binary file that is not an image — is one line saying so, and no call."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_cli.core.errors import ToolError
from agent_cli.tools.encoding import detect
from agent_cli.tools.fs import SNIFF_BYTES, display_path, resolve_path, sniff_kind
from agent_cli.tools.images.load import is_image
from agent_cli.tools.mentions.parse import Mention
from agent_cli.tools.read import MAX_LINES

Kind = Literal["text", "image", "directory", "missing"]


@dataclass(frozen=True)
class Attachment:
    mention: Mention
    path: Path
    shown: str  # the path as the model sees it (relative inside the workspace)
    kind: Kind
    tool: str = ""  # the call that attaches it: read_file or ls ("" when it cannot be attached)
    input: dict[str, Any] = field(default_factory=dict)
    error: str = ""  # one line: why it is not attached
    ask: bool = False  # attaching it asks the person first, as the model's read would (a link out)

    @property
    def ok(self) -> bool:
        return not self.error


def resolve(workspace: Path, mention: Mention) -> Attachment:
    """The attachment a mention makes (never raises: a problem is `error`)."""
    try:
        path = resolve_path(workspace, mention.path)
    except ToolError as exc:
        return Attachment(mention, workspace, mention.path, "missing", error=f"{mention.label}: {exc}")
    shown = display_path(workspace, path)
    if not path.exists():
        return Attachment(
            mention, path, shown, "missing", error=f"{mention.label}: no such file or directory"
        )
    if path.is_dir():
        return Attachment(mention, path, shown, "directory", "ls", {"path": shown})
    if not path.is_file():  # a FIFO or a device: opening it could wait forever
        return Attachment(mention, path, shown, "missing", error=f"{mention.label}: not a regular file")
    if is_image(path):
        return Attachment(mention, path, shown, "image", "read_file", {"path": shown})
    if mention.pasted:  # a pasted path that is not an image is just words
        return Attachment(mention, path, shown, "missing", error=f"{mention.label}: not an image")
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
        complete = len(head) < SNIFF_BYTES
    except OSError as exc:
        return Attachment(mention, path, shown, "missing", error=f"{mention.label}: {exc.strerror or exc}")
    if detect(head, complete) is None:
        kind = sniff_kind(head)
        what = f"a binary file ({kind})" if kind else "a binary file"
        return Attachment(mention, path, shown, "text", error=f"{mention.label}: {what}, not text")
    tool_input: dict[str, Any] = {"path": shown}
    if mention.first is not None:
        last = mention.last if mention.last is not None else mention.first
        tool_input.update(offset=mention.first, limit=min(MAX_LINES, last - mention.first + 1))
    return Attachment(mention, path, shown, "text", "read_file", tool_input)
