"""Fidelity: did the request a policy built show the model the text each recorded edit needed?

Open-loop replay cannot see what a policy hides: the recorded model edits anyway. So for every
recorded edit we ask whether the text it changes was in the request the policy built at that moment
(DESIGN §13):

- the needed text of an edit (`Edit`/`MultiEdit` `old_string`, our `edit_file`) is its old text; of a
  `Write` over a file read before, the file's prior content as the reads (and the edits since) show it;
- it is *visible* when every non-empty line of it (stripped) occurs in the request's text: text
  blocks, tool_result content and the string values of tool_use inputs (the model sees what it wrote),
  with read-tool line-number prefixes (`    12\\t`, `    12→`) removed;
- `blind` = visible with no management (policy `none`) and not under the policy;
- the adjusted cost adds, per blind edit, one extra request that re-reads the text, priced at that
  moment: the request just sent is in the cache (read at 0.1x), the re-read output is new (written
  at 1.25x, as the next request reads it). The re-read output is what showed the text under `none`
  (the smallest tool result holding every needed line), or the needed text itself when no single
  result held it. It is a lower bound: the re-read text also rides in later requests, not charged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.context.working_set import input_path
from agent_cli.core.types import Message
from agent_cli.replay.claude_code import Transcript, our_tool_name

LINE_PREFIX = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)
READ_LINE = re.compile(r"^ *(\d+)(?:\t|→)(.*)$")
REREAD_WRITE = 1.25
PREFIX_READ = 0.1


@dataclass(frozen=True)
class EditProbe:
    """One recorded edit: the response of request `request` calls it; `needed` are the lines it needed."""

    request: int
    tool_use_id: str
    path: str
    kind: str  # "edit" | "write"
    needed: tuple[str, ...]


@dataclass(frozen=True)
class EditCheck:
    probe: EditProbe
    visible: bool
    context_tokens: int  # tokens of the request built at that moment (recorded model's tokens)
    reread_tokens: int  # what a re-read of the needed text would bring back


@dataclass(frozen=True)
class Baseline:
    """The recorded edits as a session's unmanaged view shows them (its `none` replay's checks): what a
    policy's blind edits are counted against. No setting of T1's pricing changes it, so a caller
    that replays one session under many settings (bench/loo.py) makes it once (driver.baseline)."""

    file: str
    budget_tokens: int  # the budget it was made with: T5 truncates the unmanaged view too
    checks: tuple[EditCheck, ...]


@dataclass(frozen=True)
class Fidelity:
    edits: int
    visible_unmanaged: int
    blind: int
    adjusted_weighted_input: int
    blind_edits: tuple[EditCheck, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "edits": self.edits,
            "visible_unmanaged": self.visible_unmanaged,
            "blind": self.blind,
            "adjusted_weighted_input": self.adjusted_weighted_input,
            "blind_edits": [
                {"request": c.probe.request, "tool_use_id": c.probe.tool_use_id, "path": c.probe.path}
                for c in self.blind_edits
            ],
        }


# -- what each edit needed -------------------------------------------------------------------------


def needed_lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def read_content(output: str) -> str | None:
    """The file text a read result showed (its numbered lines, prefixes removed); None if none."""
    lines = [m.group(2) for m in (READ_LINE.match(line) for line in output.splitlines()) if m]
    return "\n".join(lines) if lines else None


def _old_strings(tool_input: dict[str, Any]) -> list[str]:
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        return [str(e.get("old_string", "")) for e in edits if isinstance(e, dict)]
    old = tool_input.get("old_string")
    return [old] if isinstance(old, str) else []


def _apply_edit(known: str, tool_input: dict[str, Any]) -> str:
    edits = tool_input.get("edits") if isinstance(tool_input.get("edits"), list) else [tool_input]
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old, new = edit.get("old_string"), edit.get("new_string")
        if isinstance(old, str) and old and isinstance(new, str) and old in known:
            known = known.replace(old, new) if edit.get("replace_all") else known.replace(old, new, 1)
    return known


def edit_probes(transcript: Transcript) -> list[EditProbe]:
    """Every recorded edit, in order, with the text it needed (file contents followed through reads,
    edits and writes, so a Write over a read file knows what it overwrote)."""
    request_at = {r.position: r.index for r in transcript.requests}
    known: dict[str, str] = {}  # path -> the file's text as last seen by the model
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    probes: list[EditProbe] = []
    for position, message in enumerate(transcript.messages):
        if message.role == "user":
            for result in message.tool_results():
                name, tool_input = calls.pop(result.tool_use_id, ("", {}))
                path = input_path(tool_input)
                if result.is_error or not path:
                    continue
                if name == "read_file":
                    content = read_content(result.text)
                    if content is not None:
                        known[path] = content
                elif name == "edit_file" and path in known:
                    known[path] = _apply_edit(known[path], tool_input)
                elif name == "write_file":
                    known[path] = str(tool_input.get("content", ""))
            continue
        for use in message.tool_uses():
            name = our_tool_name(use.name)
            calls[use.id] = (name, dict(use.input))
            index = request_at.get(position)
            path = input_path(use.input)
            if index is None or not path:
                continue
            if name == "edit_file":
                needed = needed_lines("\n".join(_old_strings(use.input)))
                if needed:
                    probes.append(EditProbe(index, use.id, path, "edit", needed))
            elif name == "write_file" and path in known:
                needed = needed_lines(known[path])
                if needed:
                    probes.append(EditProbe(index, use.id, path, "write", needed))
    return probes


# -- what a request shows ----------------------------------------------------------------------------


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def block_texts(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [str(block.get("text", ""))]
    if kind == "tool_use":
        return list(_strings(block.get("input", {})))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return [content]
        if isinstance(content, list):
            return [
                str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
            ]
    return []


def visible_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Each text the model sees in the messages of a request, line-number prefixes removed."""
    out: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content or []:
            if isinstance(block, dict):
                out += [LINE_PREFIX.sub("", t) for t in block_texts(block) if t]
    return out


def shows(needed: Sequence[str], text: str) -> bool:
    return all(line in text for line in needed)


class FidelityProbe:
    """Checks, request by request, whether each recorded edit's text is in the built request."""

    def __init__(self, transcript: Transcript) -> None:
        self.probes: dict[int, list[EditProbe]] = {}
        for probe in edit_probes(transcript):
            self.probes.setdefault(probe.request, []).append(probe)
        self.checks: list[EditCheck] = []

    def observe(self, index: int, messages: Sequence[dict[str, Any]], tokens: int, count: Any) -> None:
        """`count(text) -> tokens` in the recorded model's tokens; `tokens`: the whole request's."""
        probes = self.probes.get(index)
        if not probes:
            return
        texts = visible_texts(messages)
        whole = "\n".join(texts)
        for probe in probes:
            visible = shows(probe.needed, whole)
            holders = [t for t in texts if shows(probe.needed, t)]
            reread = min(holders, key=len) if holders else "\n".join(probe.needed)
            self.checks.append(EditCheck(probe, visible, tokens, count(reread)))


def fidelity(checks: Sequence[EditCheck], unmanaged: Sequence[EditCheck], weighted_input: int) -> Fidelity:
    """The policy's checks against the same edits under `none` (`unmanaged`)."""
    seen = {c.probe.tool_use_id: c for c in unmanaged if c.visible}
    blind = tuple(c for c in checks if c.probe.tool_use_id in seen and not c.visible)
    extra = sum(
        PREFIX_READ * c.context_tokens + REREAD_WRITE * seen[c.probe.tool_use_id].reread_tokens for c in blind
    )
    return Fidelity(
        edits=len(checks),
        visible_unmanaged=len(seen),
        blind=len(blind),
        adjusted_weighted_input=weighted_input + int(extra),
        blind_edits=blind,
    )


def view_messages(view: Sequence[Message]) -> list[dict[str, Any]]:
    """API-shaped messages of a view (for checks on a view rather than a built request)."""
    return [m.to_api() for m in view]
