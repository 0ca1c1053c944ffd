"""Files' pictures: what of each file the view still shows, which context/reuse.py values.

Computed from the view alone, by code (no model), so a replayed view gets the same answer:

- each file has a *picture*: its reads since it was last written or read whole (a later read covering
  the same lines supersedes an earlier one), then the written content, then the edits since (their old
  and new text). An edit patches the picture; it does not make the read stale — the next edit of the
  same file needs the rest of it. A read of the whole file shows it as it is now, so everything before
  it in the picture (the written content, the edits, partial reads) is superseded. What the picture no
  longer holds is *stale*: superseded reads, text written over, edits before the last whole write or
  whole read. A failed call touches nothing.
- `named_files`: files named in the latest todo list (a `TodoWrite`, or the open tasks of Claude
  Code's `TaskCreate`/`TaskUpdate`), in the last failing command's output (a bash result with a
  non-zero exit) or in given texts (the person's words). A path is matched with either separator
  (`src\\x.go` names `C:\\repo\\src\\x.go`: sessions run on Windows too).
- `todo_lists`: each todo-list call replaces the whole list, so only the latest (that did not fail)
  is the plan. A todo tool's calls are otherwise never compacted; one a later list replaced is stale
  (context/reuse.py) and its input (a list) and result may go like any stale output.
- `file_key`: one name per file, however a call spells its path. A model on Windows writes
  `C:\\repo\\x.go` in one call and `C:/repo/x.go` or `c:\\repo\\x.go` in the next; anyone may write
  `./x.go` or `src//x.go`. As written, those were different files: the read of a file being edited
  looked unedited, and an edit found no cleared read to bring back. The pictures, the predictor
  (context/reuse.py), the ghosts (context/ghosts.py), the ledger and replay's edit probe key files by
  it: `/` separators, `.`, `..` and doubled separators resolved, the drive letter upper-case. The rest
  of the case is kept (a POSIX file system tells `A.go` from `a.go`). What a relative path is relative
  to, the view does not know: a live session names each call's file as it appends it (`path_of` reads
  `BlockMeta.file`, relative to the workspace: agent/workspace_reads.py), so `src/a.py` and
  `/ws/src/a.py` are one file there; Claude Code's calls always give absolute paths.

What is kept is not decided here: every clear is priced (context/eviction.py) with the probability
context/reuse.py gives each picture; `WorkingSet` is the outcome T3 and digest leave whole
(tiers/pricing.py:valued). Stale outputs are worth nothing and may be cleared even among the most
recent results. Every cleared result stays recallable by its ref.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agent_cli.core.types import Block, Message

READ_TOOLS = frozenset({"read_file", "Read"})
EDIT_TOOLS = frozenset({"edit_file", "Edit", "MultiEdit"})
WRITE_TOOLS = frozenset({"write_file", "Write"})
TODO_TOOLS = frozenset({"todo_write", "todo", "TodoWrite"})
TASK_CREATE, TASK_UPDATE = "TaskCreate", "TaskUpdate"  # Claude Code's task list, one task per call
TASK_CLOSED = frozenset({"completed", "deleted"})
BASH_TOOLS = frozenset({"bash", "Bash"})
SUPERSEDED_KEYS = frozenset({"old_string"})  # an applied edit's old text is no longer in the file
UNCHANGED_PREFIX = "unchanged since "  # read_file's answer to a re-read still in view (tools/read.py)
WHOLE = 10**9  # a read without a limit covers the file (as far as the tool shows it)
DIGEST_TAG = "tool-digest"  # one line per folded call (tiers/collapse.py)
COARSE_TAG = "tool-digest-coarse"  # one line for many folded calls (tiers/coarsen.py)
_EXIT = re.compile(r"(?:exit(?:ed)?(?: with)?(?: code| status)?[:= ]+|\[exit )(-?\d+)", re.IGNORECASE)
_PATHISH = re.compile(r"[\w./\\-]*\w\.\w{1,8}")
_TASK_NUMBER = re.compile(r"Task #(\d+)")
GREP_TOOLS = frozenset({"grep", "Grep"})
# Shell commands that print lines of the files they name, with the options that take a value (so the
# value is not taken for a file); `PATTERNED`: their first operand is a pattern or script, not a file.
VIEWERS: Mapping[str, frozenset[str]] = {
    "cat": frozenset(),
    "nl": frozenset(),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "sed": frozenset({"-e", "-f"}),
    "awk": frozenset({"-F", "-v", "-f"}),
    "grep": frozenset({"-A", "-B", "-C", "-m", "-e", "-f"}),
    "egrep": frozenset({"-A", "-B", "-C", "-m", "-e", "-f"}),
    "rg": frozenset({"-A", "-B", "-C", "-m", "-e", "-g", "-t"}),
}
PATTERNED = frozenset({"sed", "awk", "grep", "egrep", "rg"})
IN_PLACE = frozenset({"sed", "awk"})  # with -i they change the file instead of printing it
_FILE_OPERAND = re.compile(r"\w\.\w{1,8}$")
_SEGMENTS = re.compile(r"&&|\|\||;|\n")


@dataclass(frozen=True)
class WorkingSet:
    keep: frozenset[str] = frozenset()  # tool_use ids whose result and input stay
    stale: frozenset[str] = frozenset()  # tool_use ids whose output is superseded
    files: tuple[str, ...] = ()  # the working files, most important first

    def keeps(self, tool_use_id: str) -> bool:
        return tool_use_id in self.keep


@dataclass
class FilePicture:
    path: str
    last: int = -1  # number of the last call that touched it (calls, folded ones too, from the view's start)
    picture: list[str] = field(default_factory=list)  # tool_use ids, oldest first
    reads: list[tuple[str, int, int]] = field(default_factory=list)  # (id, first line, last line)
    stale: list[str] = field(default_factory=list)
    edited: bool = False  # edited or written in view: the picture holds the model's own changes
    whole: bool = False  # the picture starts with a read of the whole file


def coarse_count(text: str) -> int:
    head = text[2:].split(" ", 1)[0]
    return int(head) if head.isdigit() else 1


def calls_in(message: Message, uses: bool = True) -> int:
    """Tool calls an assistant message stands for: its digest lines, the calls its summary lines
    count, and (with `uses`) its tool_use blocks. A folded call still counts: it happened."""
    if message.role != "assistant":
        return 0
    lines = sum(b.text.count("\n") + 1 for b in message.blocks if b.meta.tag == DIGEST_TAG)
    coarse = sum(coarse_count(b.text) for b in message.blocks if b.meta.tag == COARSE_TAG)
    return (len(message.tool_uses()) if uses else 0) + lines + coarse


def _name(block: Block) -> str:
    return block.meta.tool_name or block.name


def _int(value: object, default: int) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default


def _range(block: Block) -> tuple[int, int]:
    first = max(1, _int(block.input.get("offset"), 1))
    limit = _int(block.input.get("limit"), 0)
    return first, (first + limit - 1 if limit > 0 else WHOLE)


def pictures(view: Sequence[Message]) -> dict[str, FilePicture]:
    """Each file's picture (see the module doc), by path."""
    files: dict[str, FilePicture] = {}
    outputs = {b.tool_use_id: b for m in view if m.role == "user" for b in m.tool_results()}
    failed = {i for i, b in outputs.items() if b.is_error}
    calls = 0
    for message in view:
        if message.role != "assistant":
            continue
        calls += calls_in(message, uses=False)  # folded calls (they come before this message's own)
        for use in message.tool_uses():
            calls += 1
            name, path = _name(use), path_of(use)
            if not path or use.id in failed or name not in READ_TOOLS | EDIT_TOOLS | WRITE_TOOLS:
                continue
            entry = files.setdefault(path, FilePicture(path))
            entry.last = calls
            if name in WRITE_TOOLS:
                entry.stale += entry.picture
                entry.picture, entry.reads = [use.id], []
                entry.edited, entry.whole = True, True
            elif name in EDIT_TOOLS:
                entry.picture.append(use.id)
                entry.edited = True
            elif use.id in outputs and outputs[use.id].text.startswith(UNCHANGED_PREFIX):
                entry.picture.append(use.id)  # "unchanged since": the earlier read still holds the text
            else:
                first, last = _range(use)
                if (first, last) == (1, WHOLE):  # the whole file as it is now: all before is superseded
                    entry.stale += entry.picture
                    entry.picture, entry.reads = [use.id], [(use.id, first, last)]
                    entry.edited, entry.whole = False, True
                    continue
                covered = [r for r in entry.reads if first <= r[1] and r[2] <= last]
                for old in covered:
                    entry.reads.remove(old)
                    entry.picture.remove(old[0])
                    entry.stale.append(old[0])
                entry.reads.append((use.id, first, last))
                entry.picture.append(use.id)
    return files


def named_files(view: Sequence[Message], paths: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
    """Paths named in the latest todo list, the last failing command's output or the `extra` texts."""
    texts: list[str] = list(extra)
    uses = {b.id: b for m in view if m.role == "assistant" for b in m.tool_uses()}
    lists = todo_lists(view)
    if lists:
        texts.append(str(uses[lists[-1]].input))
    texts += open_tasks(view)
    for message in reversed(view):
        results = [
            b
            for b in message.tool_results()
            if b.tool_use_id in uses and _name(uses[b.tool_use_id]) in BASH_TOOLS
        ]
        if results:
            last = results[-1]
            found = _EXIT.search(last.text[-400:])
            if last.is_error or (found and found.group(1) != "0"):
                texts.append(last.text)
            break
    mentioned = {_slashed(m.group(0)).lstrip("./") for text in texts for m in _PATHISH.finditer(text)}
    return [p for p in paths if any(len(m) > 3 and _same_file(p, m) for m in mentioned)]


def todo_lists(view: Sequence[Message]) -> list[str]:
    """The todo-list calls that set a list (a failed one set nothing), oldest first: each replaces
    the list before it, so only the last is the plan."""
    failed = {b.tool_use_id for m in view if m.role == "user" for b in m.tool_results() if b.is_error}
    return [
        b.id
        for m in view
        if m.role == "assistant"
        for b in m.tool_uses()
        if _name(b) in TODO_TOOLS and b.id not in failed
    ]


def replaced_lists(view: Sequence[Message]) -> frozenset[str]:
    """The todo-list calls a later list replaced: every one but the plan."""
    return frozenset(todo_lists(view)[:-1])


def open_tasks(view: Sequence[Message]) -> list[str]:
    """What the open tasks of Claude Code's task list say (`TaskCreate`'s subject and description,
    as `TaskUpdate` left them; a completed or deleted task is closed). A task's number is the one
    its creation's result gives ("Task #3 created"), else its place in the order of creation."""
    results = {b.tool_use_id: b.text for m in view if m.role == "user" for b in m.tool_results()}
    tasks: dict[str, dict] = {}
    for message in view:
        for use in message.tool_uses() if message.role == "assistant" else ():
            name = _name(use)
            if name == TASK_CREATE:
                found = _TASK_NUMBER.search(results.get(use.id, ""))
                tasks[found.group(1) if found else str(len(tasks) + 1)] = dict(use.input)
            elif name == TASK_UPDATE and str(use.input.get("taskId", "")) in tasks:
                tasks[str(use.input["taskId"])].update(use.input)
    return [
        f"{task.get('subject', '')}\n{task.get('description', '')}"
        for task in tasks.values()
        if task.get("status") not in TASK_CLOSED
    ]


def _slashed(path: str) -> str:
    return path.replace("\\", "/")


def _same_file(path: str, mentioned: str) -> bool:
    """`/repo/tests/x.py` and `tests/x.py` (or `x.py` and `tests/x.py`) name the same file; so do
    `C:\\repo\\tests\\x.py` and `tests/x.py`."""
    path = _slashed(path).lstrip("./")
    return path == mentioned or path.endswith("/" + mentioned) or mentioned.endswith("/" + path)


_DRIVE = re.compile(r"[A-Za-z]:")


def file_key(path: str) -> str:
    """The one spelling of `path` (see the module doc; "" for none)."""
    if not path:
        return ""
    slashed = _slashed(path)
    if _DRIVE.match(slashed):
        slashed = slashed[0].upper() + slashed[1:]
    normal = posixpath.normpath(slashed)
    return "" if normal == "." else normal


def path_of(use: Block) -> str:
    """The file a call names: as the live session named it when it was appended (`BlockMeta.file`,
    relative to the workspace: agent/workspace_reads.py), else its `file_path` or `path` as
    `file_key` spells it; "" for none."""
    return file_key(use.meta.file) if use.meta.file else input_path(use.input)


def glimpsed(use: Block) -> str:
    """The one file whose lines a call shows without reading it: a content search of one file
    (`grep` with `output_mode: content` and a file as its `path`), or a shell command that prints
    lines of one file (`sed -n 10,40p x.go`, `grep -n foo x.go | head`, `cat x.go`, `cd d && head
    x.go`). Its output is what the next edit of those lines starts from. "" for anything else."""
    name = use.meta.tool_name or use.name
    if name in GREP_TOOLS:
        path = path_of(use)  # as a live session named it, like the reads it is matched with
        return path if use.input.get("output_mode") == "content" and _FILE_OPERAND.search(path) else ""
    command = use.input.get("command") if name in BASH_TOOLS else None
    if not isinstance(command, str):
        return ""
    for segment in _SEGMENTS.split(command):
        first = segment.split("|", 1)[0]  # what a pipe's first command prints is what shows
        try:
            words = shlex.split(first)
        except ValueError:
            return ""
        if not words or words[0] == "cd":
            continue
        return _viewed(words)
    return ""


def _viewed(words: Sequence[str]) -> str:
    """The one file a viewer command (`VIEWERS`) names as its operand; "" for none or several."""
    takes = VIEWERS.get(words[0])
    if takes is None or (words[0] in IN_PLACE and any(w.startswith(("-i", "--in-place")) for w in words)):
        return ""  # (`sed -i` changes the file and prints none of it)
    operands: list[str] = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1:
            skip = word in takes
        else:
            operands.append(word)
    if words[0] in PATTERNED and not any(w in ("-e", "-f") for w in words):
        operands = operands[1:]
    if (
        len(operands) != 1
        or any(c in operands[0] for c in "*?[{$<>")
        or not _FILE_OPERAND.search(operands[0])
    ):
        return ""
    return file_key(operands[0])


def input_path(tool_input: Mapping[str, object]) -> str:
    """A call input's `file_path` (or `path`) as `file_key` spells it; "" for none."""
    value = tool_input.get("file_path") or tool_input.get("path") or ""
    return file_key(value) if isinstance(value, str) else ""
