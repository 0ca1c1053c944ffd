"""The third step of T1: old digest lines become one summary line per assistant message.

Collapse (tiers/collapse.py) leaves one line per folded call, `- <tool> <target> → ok (…, ref R)`;
a long session piles up hundreds of them, each ~40 tokens read again by every later request. A
long autonomous run folds into ONE assistant message, so the horizon is per block, not per message:
in each message, the digest lines of calls followed by at least `coarse_calls` later calls are
replaced by ONE line (lines naming a file of the working set stay as they are):

    - 14 earlier calls (Read x6, Edit x5, Bash x3) on a.py, b.py, README.md +2 more; list: recall ref R

The assistant's narration between those calls ("Now let me read X") goes with them: R holds the
replaced lines and that narration byte-identical, in their order (each line still names its own
output's ref), so nothing is lost: one recall gives the list, a second the output. The message's
own last words (the answer that closed the run) stay verbatim, the person's words are never
touched, and the most recent calls keep their lines (the model sees what it just did and how it
went). On a cold cache (T1 "cache_cold") the rewrite is free, so everything older than the working
set's recent calls (collapse.KEEP_CALLS) is summarized.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath, PureWindowsPath

from agent_cli.context.tiers.markers import make_ref
from agent_cli.context.working_set import COARSE_TAG, DIGEST_TAG, calls_in, coarse_count
from agent_cli.core.types import Block, Message

MAX_FILES = 4
_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]|\\\\")  # a drive letter or a UNC share


@dataclass
class Coarsened:
    view: list[Message]
    originals: dict[str, str] = field(default_factory=dict)
    refs: list[str] = field(default_factory=list)


def _parse(line: str) -> tuple[str, str]:
    """(tool, target) of a digest line `- <tool> <target> → …`."""
    what = line[2:].split(" → ", 1)[0].strip()
    tool, _, target = what.partition(" ")
    return tool, target


def _file_name(path: str) -> str:
    """The last part of a path; a Windows path (`C:\\...`) splits at either separator."""
    return (PureWindowsPath if _WINDOWS_PATH.match(path) else PurePosixPath)(path).name


def _file_label(target: str) -> str:
    first = target.split(" lines ", 1)[0].split()[0] if target.split() else ""
    if "/" not in first and "." not in first and not _WINDOWS_PATH.match(first):
        return ""
    return _file_name(first.rstrip("."))


def summary_line(lines: Sequence[str], ref: str) -> str:
    tools = Counter(_parse(line)[0] for line in lines)
    files: list[str] = []
    for line in lines:
        label = _file_label(_parse(line)[1])
        if label and label not in files:
            files.append(label)
    kinds = ", ".join(f"{tool} x{n}" for tool, n in tools.most_common())
    on = ""
    if files:
        on = " on " + ", ".join(files[:MAX_FILES])
        if len(files) > MAX_FILES:
            on += f" +{len(files) - MAX_FILES} more"
    return f"- {len(lines)} earlier calls ({kinds}){on}; list: recall ref {ref}"


def _names_working_file(line: str, working_files: Sequence[str]) -> bool:
    names = [_file_name(p) for p in working_files if p]
    return any(name and name in line for name in names)


def _block_calls(block: Block) -> int:
    if block.type == "tool_use":
        return 1
    if block.meta.tag == DIGEST_TAG:
        return block.text.count("\n") + 1
    if block.meta.tag == COARSE_TAG:
        return coarse_count(block.text)
    return 0


def _folds(block: Block) -> bool:
    """Digest lines and the narration between old calls fold; a summary line already made stays."""
    return block.type == "text" and bool(block.text) and block.meta.tag != COARSE_TAG


def coarsen(
    view: Sequence[Message],
    *,
    coarse_calls: int,
    working_files: Sequence[str] = (),
) -> Coarsened:
    """In each assistant message, the digest lines of calls followed by at least `coarse_calls` later
    calls, and the narration between them, become one summary line (where that saves: at least two
    lines). A line naming a file of the working set stays as it is."""
    out = Coarsened(list(view))
    if coarse_calls <= 0:
        return out
    after = sum(calls_in(m) for m in view)  # calls after the current position
    for index, message in enumerate(view):
        if message.role != "assistant":
            continue
        last = -1
        for k, block in enumerate(message.blocks):
            after -= _block_calls(block)
            if block.meta.tag == DIGEST_TAG and after >= coarse_calls:
                last = k
        if last < 0:
            continue
        head = message.blocks[: last + 1]
        lines = [line for b in head if b.meta.tag == DIGEST_TAG for line in b.text.split("\n")]
        kept = [line for line in lines if _names_working_file(line, working_files)]
        folded = [line for line in lines if line not in kept]
        if len(folded) < 2:
            continue
        original = "\n".join(b.text for b in head if _folds(b))
        ref = make_ref("calls", original)
        first = next(b for b in head if b.meta.tag == DIGEST_TAG)
        blocks: list[Block] = [b for b in head if not _folds(b)]
        blocks.append(
            replace(first, text=summary_line(folded, ref), meta=replace(first.meta, tag=COARSE_TAG))
        )
        if kept:
            blocks.append(replace(first, text="\n".join(kept)))
        blocks += message.blocks[last + 1 :]
        out.view[index] = replace(message, blocks=tuple(blocks))
        out.originals[ref] = original
        out.refs.append(ref)
    return out
