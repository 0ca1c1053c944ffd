"""The tool seam: a Tool protocol, the context a tool runs in, and what it returns."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agent_cli.tools.sandbox.child_env import ChildEnv

if TYPE_CHECKING:
    from agent_cli.tools.sandbox.bwrap import Launch, Sandbox


@dataclass(frozen=True)
class ImagePart:
    """An image a result carries (read_file of a PNG): base64 in the API's media types."""

    media_type: str
    data: str


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns. `output` goes to the model; `display` (a diff, say) is for people."""

    output: str
    is_error: bool = False
    display: str = ""
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"path": ..., "lines": (a, b), "exit_code": 0}
    image: ImagePart | None = None  # sent after `output` in the same tool_result


class RecallStore(Protocol):
    """Where offloaded and compacted originals live (context/store.py implements it)."""

    def get(self, ref: str) -> str | None: ...

    def refs(self) -> list[str]: ...


class OutputSink(Protocol):
    """A text written piece by piece (a tool's full output while it streams)."""

    def write(self, text: str) -> None: ...

    def close(self) -> Path | None:
        """Keep what was written; the file it is in (None in memory)."""
        ...

    def abort(self) -> None: ...


@runtime_checkable
class OutputStore(Protocol):
    """A recall store a tool can write its full output to, under the ref the context will name."""

    def get(self, ref: str) -> str | None: ...

    def refs(self) -> list[str]: ...

    def open_output(self, ref: str) -> OutputSink: ...


@dataclass(frozen=True)
class OutputLimits:
    """How much of a tool's output may enter the context whole (`inline_chars`; larger outputs are
    kept in the store and shown as a `preview_chars` head+tail preview) and how much is stored at most
    (`ceiling_chars`; beyond it head and tail are kept and the drop is counted and said).
    The runner sets these from the context config, so they agree with T0's offload threshold."""

    inline_chars: int = 30_000
    preview_chars: int = 2_000
    ceiling_chars: int = 100_000_000


class ProcessRecorder(Protocol):
    """Told when a command's process group starts and ends, so one left behind by a crash can be
    found and ended later (session/processes.py implements it)."""

    def started(self, pgid: int, command: str) -> None: ...

    def ended(self, pgid: int) -> None: ...


# (system prompt, content) -> the answer of the session's summarizer model, metered like a summary
SideModel = Callable[[str, str], Awaitable[str]]


class FileAccess(Protocol):
    """Where read_file, write_file and edit_file find a text file and put it back when it is not the
    disk: an editor's buffers (ACP's `fs` methods), so the model reads what the person sees, saved
    or not. Permission checks are the same either way; only where the text comes from changes."""

    async def read_text(self, path: Path) -> str | None:
        """The file's text as the editor holds it; None: not through here (the disk is read)."""
        ...

    async def write_text(self, path: Path, text: str) -> bool:
        """Put `text` in the editor's file; False: not through here (the disk is written). Raises
        ToolError when the editor refuses."""
        ...


class ReadGuard(Protocol):
    """The deny rules on reading files (tools/permissions.py's `Permissions` is one): grep, glob and ls
    leave out every file one covers, as read_file would refuse to read it (tools/denied_reads.py)."""

    def read_check(self) -> Callable[[Path], bool] | None:
        """For one search: whether a deny rule forbids reading a path it found (judged by the path
        and by its target, symlinks resolved); None when no deny rule is about reading files."""
        ...


class ShellStarter(Protocol):
    """Starts `bash` commands with `run_in_background` (tools/shells/manager.py implements it)."""

    async def start(self, command: str, ctx: ToolContext, launch: Launch, description: str) -> ToolResult: ...


@dataclass
class ToolContext:
    """What a tool may use. `workspace` is the root the person started `agent` in."""

    workspace: Path
    session_dir: Path | None = None
    store: RecallStore | None = None
    todo_state: list[dict[str, Any]] = field(default_factory=list)
    on_output: Callable[[str], None] | None = None  # streaming output (bash), optional
    call_id: str = ""  # the tool_use id of the call being run (the loop sets it per call)
    emit: Callable[[Any], None] | None = None  # the turn's event sink (core.events), for live progress
    sandbox: Sandbox | None = None  # how bash confines commands (None: it does not)
    permission_mode: Callable[[], str] | None = None  # the session's mode now (yolo: no way out)
    # (resolved path, output) -> id of a read still visible in the context with this very output;
    # injected by the runner (the engine knows the view), None outside a session
    seen_read: Callable[[Path, str], str | None] | None = None
    limits: OutputLimits = field(default_factory=OutputLimits)
    processes: ProcessRecorder | None = None  # records bash's process groups while they run
    child_env: ChildEnv = field(default_factory=ChildEnv)  # what bash sees of the environment
    side_model: SideModel | None = None  # the summarizer model (web_fetch's prompt), None outside a session
    shells: ShellStarter | None = None  # background shells (None: run_in_background is refused)
    files: FileAccess | None = None  # an editor's buffers for the file tools (None: the disk)
    read_guard: ReadGuard | None = None  # the session's deny rules on reading (None: nothing left out)


@runtime_checkable
class Tool(Protocol):
    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool  # read-only tools run without asking in `ask` mode
    compactable: bool  # old results may be cleared by micro-compaction (T1)

    def target(self, input: dict[str, Any]) -> str:
        """A short label of what the call acts on (a path, a command), for UI and placeholders."""
        ...

    def paths(self, input: dict[str, Any]) -> list[str]:
        """Paths the call writes or reads, for the outside-the-workspace permission check."""
        ...

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work. Bad input returns ToolResult(is_error=True) with a clear message; never raises
        except asyncio.CancelledError (interrupt), after cleaning up (e.g. killing a process group)."""
        ...


class PathTool:
    """For tools that act on one `path` argument: the label and the path the permission check reads."""

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("path", ""))

    def paths(self, input: dict[str, Any]) -> list[str]:
        path = input.get("path")
        return [path] if isinstance(path, str) and path else []


def schema(tool: Tool) -> dict[str, Any]:
    """The tool as the Messages API takes it."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
