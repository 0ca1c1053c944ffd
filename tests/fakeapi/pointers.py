"""Reading a Messages-API request as a model would: what text it shows, and which refs it names for
a file's text that left it (the shapes agent_cli/context writes: T1's `[cleared: …; recall ref R]`
on a read's result or on an edit's input,
T0's `<persisted-output ref="R">`, T3's region pointers, T1's digest and coarse lines, T4's
`<summary ref="R">`). Used by the reactive model (reactive.py); see its docstring."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_cli.replay.fidelity import needed_lines, shows, visible_texts


@dataclass(frozen=True)
class Pointer:
    """A ref the request names for `path` ("*": any file). kind: "file" (that read's own output),
    "input" (an edit's or write's cleared input: text the model wrote), "region" (a summarized span
    holding it among others), "list" (a coarse list of calls)."""

    path: str
    ref: str
    kind: str
    lines: tuple[int, int] | None = None


COMPACTED = ("[cleared: ", "[region summary", "[summarized in the region summary", "<persisted-output ")
READ_TOOLS = frozenset({"read_file", "Read"})
WRITE_TOOLS = frozenset({"edit_file", "write_file", "Edit", "MultiEdit", "Write"})
_REF = r"([A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])"
_LINES = re.compile(r"lines (\d+)-(\d+)")
_RECALL_REF = re.compile(r"recall ref " + _REF)
_PERSISTED_REF = re.compile(r'<persisted-output ref="' + _REF + '"')
_OWN_OUTPUT = re.compile(r"its full output: ref " + _REF)
_REGION_REF = re.compile(r"region summary ref " + _REF)
_SUMMARY_REF = re.compile(r'<summary ref="' + _REF + '"')
_DIGEST = re.compile(
    r"^- (?:read_file|Read) (?P<path>.+?)(?: lines (?P<a>\d+)-(?P<b>\d+))? → \w+ "
    r"\((?:output cleared|[\d,]+ chars), ref (?P<ref>[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])\)",
    re.MULTILINE,
)
_COARSE = re.compile(
    r"^- \d+ earlier calls \((?P<kinds>[^)]*)\)(?: on (?P<files>.+?))?; list: recall ref "
    r"(?P<ref>[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9])",
    re.MULTILINE,
)


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _blocks(body: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            yield {"type": "text", "text": content}
        else:
            yield from (b for b in content or [] if isinstance(b, dict))


def _system_texts(body: dict[str, Any]) -> list[str]:
    system = body.get("system")
    if isinstance(system, str):
        return [system]
    return [str(b.get("text", "")) for b in system or [] if isinstance(b, dict)]


def sees(body: dict[str, Any], old: str) -> bool:
    """Whether every non-empty line of `old` is in what the request shows the model."""
    needed = needed_lines(old)
    whole = "\n".join(_system_texts(body) + visible_texts(body.get("messages") or []))
    return shows(needed, whole)


def _lines(text: str) -> tuple[int, int] | None:
    found = _LINES.search(text[:400])
    return (int(found.group(1)), int(found.group(2))) if found else None


def _result_pointers(path: str, content: str) -> list[Pointer]:
    """Pointers of a read's result that left the view (content is the placeholder, preview or pointer)."""
    for pattern in (_PERSISTED_REF, _OWN_OUTPUT, _RECALL_REF):
        found = pattern.search(content)
        if found:
            return [Pointer(path, found.group(1), "file", _lines(content))]
    found = _REGION_REF.search(content)
    return [Pointer(path, found.group(1), "region")] if found else []


def pointers(body: dict[str, Any]) -> list[Pointer]:
    """Every ref the request names for a file read, in the order they appear (see the module doc)."""
    uses: dict[str, dict[str, Any]] = {}
    out: list[Pointer] = []
    for block in _blocks(body):
        kind = block.get("type")
        if kind == "tool_use":
            uses[str(block.get("id"))] = block
            out += _input_pointers(block)
            continue
        texts = [result_text(block)] if kind == "tool_result" else [str(block.get("text", ""))]
        if kind == "tool_result":
            use = uses.get(str(block.get("tool_use_id")), {})
            inputs = use.get("input") or {}
            path = inputs.get("path") or inputs.get("file_path")
            if use.get("name") in READ_TOOLS and isinstance(path, str) and texts[0].startswith(COMPACTED):
                out += _result_pointers(path, texts[0])
        for found_text in texts:
            out += _text_pointers(found_text)
    return out


def _input_pointers(use: dict[str, Any]) -> list[Pointer]:
    """An edit's or a write's input whose text T1 cleared (`[cleared: N chars; recall ref R-in]`): R
    holds the whole input, the text the model wrote into the file."""
    inputs = use.get("input") or {}
    path = inputs.get("path") or inputs.get("file_path")
    if use.get("name") not in WRITE_TOOLS or not isinstance(path, str):
        return []
    for value in inputs.values():
        found = (
            _RECALL_REF.search(value) if isinstance(value, str) and value.startswith("[cleared: ") else None
        )
        if found:
            return [Pointer(path, found.group(1), "input")]
    return []


def _text_pointers(content: str) -> list[Pointer]:
    out = []
    for found in _DIGEST.finditer(content):
        lines = (int(found.group("a")), int(found.group("b"))) if found.group("a") else None
        out.append(Pointer(found.group("path").strip(), found.group("ref"), "file", lines))
    for found in _COARSE.finditer(content):
        if "read_file" not in found.group("kinds") and "Read" not in found.group("kinds"):
            continue
        files = (found.group("files") or "").split(", ")
        named = [f for f in files if f and not re.fullmatch(r"\+\d+ more", f)]
        out += [Pointer(name, found.group("ref"), "list") for name in named]
        if len(named) < len(files) or not named:
            out.append(Pointer("*", found.group("ref"), "list"))
    out += [Pointer("*", found.group(1), "region") for found in _SUMMARY_REF.finditer(content)]
    return out


def same_path(shown: str, path: str) -> bool:
    """Whether a path as a placeholder shows it (maybe shortened to `...tail`, or a bare file name)
    is `path` (as the scenario names it)."""
    if shown == "*":
        return True
    a, b = shown.removeprefix("./"), path.removeprefix("./")
    if a.startswith("..."):
        return b.endswith(a[3:])
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def last_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else None
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )
