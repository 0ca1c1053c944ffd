"""What a permission question shows: the full command for bash, the diff for edit_file/write_file,
the URL and its host for web_fetch.

The diff is computed from the tool input and the file on disk, as the tool would change it; when the
edit would fail (no match, a binary file), the preview says so instead of a diff.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.core.surrogates import bytes_from_shown, has_surrogates, shown_bytes
from agent_cli.tools.encoding import detect, line_ending, with_line_ending
from agent_cli.tools.fs import display_path, resolve_path
from agent_cli.tools.web.address import host_of
from agent_cli.tools.write import unified_diff

MAX_PREVIEW_BYTES = 2_000_000


@dataclass(frozen=True)
class Preview:
    kind: str  # "command" | "diff" | ""
    text: str


def permission_preview(tool_name: str, input: dict[str, Any], workspace: Path) -> Preview:
    try:
        if tool_name == "bash":
            return Preview("command", str(input.get("command", "")))
        if tool_name == "write_file":
            path = resolve_path(workspace, str(input.get("path", "")))
            return Preview("diff", _diff(_current(path), str(input.get("content", "")), workspace, path))
        if tool_name == "edit_file":
            return _edit_preview(input, workspace)
        if tool_name in ("web_fetch", "web_search"):
            return Preview("", web_preview(input))
    except Exception as exc:  # noqa: BLE001 - a preview must never break the question
        return Preview("", f"(no preview: {exc})")
    return Preview("", "")


def web_preview(input: dict[str, Any]) -> str:
    """The URL and its host (what a WebFetch rule names), or the query, and the prompt if any."""
    if "query" in input:
        return f"search: {input.get('query', '')}"
    url = str(input.get("url", ""))
    host = host_of(url)
    lines = [f"URL: {url}", f"host: {host}" if host else "host: (not a URL web_fetch reads)"]
    if input.get("prompt"):
        lines.append(f"prompt: {input['prompt']}")
    return "\n".join(lines)


def _edit_preview(input: dict[str, Any], workspace: Path) -> Preview:
    path = resolve_path(workspace, str(input.get("path", "")))
    old, new = str(input.get("old_string", "")), str(input.get("new_string", ""))
    text = _current(path)
    if old == "":
        return Preview("diff", _diff(text, new if not text else text, workspace, path))
    new = with_line_ending(new, line_ending(text))  # as edit_file writes it
    if old not in text and has_surrogates(text):  # the file's odd bytes as read_file shows them
        old, new = bytes_from_shown(old), bytes_from_shown(new)
    if old not in text and "\r\n" in text:
        old, new = old.replace("\n", "\r\n"), with_line_ending(new, "\r\n")
    count = text.count(old)
    if count == 0:
        return Preview("", f"old_string is not in {display_path(workspace, path)}: the edit would fail")
    updated = text.replace(old, new) if input.get("replace_all") is True else text.replace(old, new, 1)
    return Preview("diff", _diff(text, updated, workspace, path))


def _current(path: Path) -> str:
    """The file's text as edit_file reads it: in its own encoding (Latin-1, UTF-16, a BOM ...)."""
    if not path.is_file():
        return ""
    with path.open("rb") as fh:
        data = fh.read(MAX_PREVIEW_BYTES + 1)
    complete = len(data) <= MAX_PREVIEW_BYTES
    data = data[:MAX_PREVIEW_BYTES]
    encoding = detect(data, complete)
    if encoding is None:  # binary
        return ""
    body = data[len(encoding.bom) :] if data.startswith(encoding.bom) else data
    return body.decode(encoding.codec, errors=encoding.errors if complete else "replace")


def _diff(old: str, new: str, workspace: Path, path: Path) -> str:
    return shown_bytes(unified_diff(old, new, display_path(workspace, path))) or "(no change)"
