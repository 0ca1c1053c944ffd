"""The session-memory note (DESIGN §7): a Markdown note kept up to date in the background.

Sections: Current Goal; Key Findings & Decisions; Files Touched; Progress (Done / Next); User
Preferences. First written after `memory_first_tokens` of conversation, then whenever
>= `memory_update_tokens` were added AND >= `memory_update_tool_calls` tool calls ran since the last
update — and, either way, only when it pays its way: the note may take `memory_max_share` of the
session's weighted input, so an update waits until enough was spent since the last one. Each update rewrites the note from the previous note plus the new turns, with secrets
redacted and capped at `memory_max_tokens`. Two ways to ask: `update_with` sends the conversation
itself as the (cached) prefix with `instruction()` (prompts/session_memory_prefix.md) at its end, so
the update reads the prefix from the prompt cache instead of paying for a fresh transcript; `update`
sends a rendered transcript of the new turns to the summarizer (prompts/session_memory.md). It is written
atomically to `<session_dir>/session_memory.md` and mirrored to `<workspace>/.session_memory.md`;
`<session_dir>/session_memory.json` remembers which view messages it covers, so T2 can use it after
`--resume`. The note feeds T2 (context/tiers/memory_compact.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from agent_cli.context.model import ContextConfig, Summarizer, TokenCount
from agent_cli.context.tiers.rendering import fill, redact, render_for_summary, split_prompt
from agent_cli.core.files import PRIVATE_FILE, atomic_write
from agent_cli.core.types import Message, Usage

log = logging.getLogger(__name__)

NOTE_FILE = "session_memory.md"
META_FILE = "session_memory.json"
MIRROR_FILE = ".session_memory.md"
SECTIONS = (
    "## Current Goal",
    "## Key Findings & Decisions",
    "## Files Touched",
    "## Progress (Done / Next)",
    "## User Preferences",
)
TRUNCATED = "\n\n[note cut to its size cap]"
CACHE_READ, CACHE_WRITE, CACHE_WRITE_1H = 0.1, 1.25, 2.0  # weights of cached input (uncached = 1)
TAIL_TOKENS = 1_000  # what an update writes to the cache past the last request's prefix, about


def weighted_input(usage: Usage) -> float:
    minutes, hour = usage.writes_by_ttl
    return (
        usage.input_tokens
        + CACHE_WRITE * minutes
        + CACHE_WRITE_1H * hour
        + CACHE_READ * usage.cache_read_input_tokens
    )


def _default_prompts(name: str) -> str:
    from agent_cli.context.prompts import load_prompt  # the engine's loader (package or repo prompts/)

    return load_prompt(name)


def write_atomic(path: Path, text: str) -> None:
    atomic_write(path, text, mode=PRIVATE_FILE)  # the note is the conversation's gist: 0600


class SessionMemory:
    def __init__(
        self,
        session_dir: Path,
        workspace: Path,
        summarizer: Summarizer,
        config: ContextConfig,
        counter: TokenCount,
        *,
        prompts: Callable[[str], str] | None = None,
    ) -> None:
        self.session_dir = Path(session_dir)
        self.workspace = Path(workspace)
        self.summarizer = summarizer
        self.config = config
        self.counter = counter
        self.prompts = prompts or _default_prompts
        self.note = ""
        self.covers = 0  # the note covers view messages [0:covers)
        self.last_error = ""
        self._task: asyncio.Task[str | None] | None = None
        self._lock = asyncio.Lock()

    @property
    def path(self) -> Path:
        return self.session_dir / NOTE_FILE

    @property
    def mirror_path(self) -> Path:
        return self.workspace / MIRROR_FILE

    @property
    def updating(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- when ----------------------------------------------------------------------------------
    def should_update(self, tokens_since: int, tool_calls_since: int, total_tokens: int) -> bool:
        """§7: the first note after memory_first_tokens of conversation; then only when enough was
        added AND enough tool calls ran since the last update."""
        if not self.note:
            return total_tokens >= self.config.memory_first_tokens
        return (
            tokens_since >= self.config.memory_update_tokens
            and tool_calls_since >= self.config.memory_update_tool_calls
        )

    def pays_its_way(self, spent_since: float, context_tokens: int, instruction_tokens: int) -> bool:
        """Whether an update now keeps the note within `memory_max_share` of the session's weighted
        input: `spent_since` is the weighted input (uncached 1, cache write 1.25, read 0.1) spent since
        the last update; an update costs about a cached read of the context plus writing the tail."""
        cost = CACHE_READ * context_tokens + CACHE_WRITE * (instruction_tokens + TAIL_TOKENS)
        return spent_since * self.config.memory_max_share >= cost

    # -- what ----------------------------------------------------------------------------------
    def load(self) -> str:
        """The note from a previous run of this session ("" when none); a corrupt sidecar only loses
        the coverage (T2 then waits for the next update)."""
        try:
            self.note = self.path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            self.note = ""
        except OSError as exc:
            log.warning("could not read %s: %s", self.path, exc)
            self.note = ""
        self.covers = 0
        if self.note:
            try:
                meta = json.loads((self.session_dir / META_FILE).read_text(encoding="utf-8"))
                self.covers = max(0, int(meta.get("covers", 0)))
            except (OSError, ValueError, TypeError, AttributeError):
                self.covers = 0
        return self.note

    async def update(self, messages: Sequence[Message], covers: int | None = None) -> str:
        """Rewrite the note from the previous note + the turns it does not cover yet.

        `messages` is the view; `covers` (default: all of it) the index the new note will cover up to.
        The new turns are messages[self.covers:covers] (all of messages[:covers] when the old coverage
        no longer fits the view). Raises when the summarizer fails; the previous note is kept then."""
        covers = len(messages) if covers is None else max(0, min(covers, len(messages)))
        async with self._lock:
            start = self.covers if 0 <= self.covers <= covers else 0
            new = messages[start:covers]
            transcript = render_for_summary(new, self.config.prune_output_chars)
            if not transcript.strip() and self.note:
                self.covers = covers
                return self.note
            template = self.prompts("session_memory")
            if not template.strip():
                raise ValueError("prompts/session_memory.md is empty or missing")
            system, request = split_prompt(template)
            if "{transcript}" not in request:
                request += "\n\n{transcript}"
            values = {
                "previous_summary": self.note or "(none yet: this is the first note)",
                "max_tokens": str(self.config.memory_max_tokens),
                "focus": "",
            }
            text = await self.summarizer(
                fill(system, **values), fill(request, transcript=transcript, **values)
            )
            return self._accept(text, covers)

    def instruction(self) -> str:
        """The note request sent at the end of the conversation (prompts/session_memory_prefix.md)."""
        template = self.prompts("session_memory_prefix")
        if not template.strip():
            raise ValueError("prompts/session_memory_prefix.md is empty or missing")
        previous = self.note or "(none yet: this is the first note)"
        return fill(template, previous_summary=previous, max_tokens=str(self.config.memory_max_tokens))

    async def update_with(self, ask: Callable[[], Awaitable[str]], covers: int) -> str:
        """Rewrite the note with `ask` (a request built around `instruction()`, the conversation being
        its cached prefix); the note then covers view messages [0:covers). Raises when it fails."""
        async with self._lock:
            return self._accept(await ask(), max(0, covers))

    def _accept(self, text: str, covers: int) -> str:
        text = text.strip()
        if not text:
            raise ValueError("the summarizer returned an empty session-memory note")
        note = self._cap(redact(text))
        write_atomic(self.path, note + "\n")
        write_atomic(self.session_dir / META_FILE, json.dumps({"covers": covers}) + "\n")
        try:
            write_atomic(self.mirror_path, note + "\n")
        except OSError as exc:  # the session copy is the one that counts
            log.warning("could not mirror the note to %s: %s", self.mirror_path, exc)
        self.note, self.covers, self.last_error = note, covers, ""
        return note

    def reset(self) -> None:
        """Forget the note (a rewind removed turns it covers); it is written afresh later."""
        self.note, self.covers = "", 0
        for path in (self.path, self.session_dir / META_FILE, self.mirror_path):
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("could not remove %s: %s", path, exc)

    def _cap(self, note: str) -> str:
        limit = self.config.memory_max_tokens
        if self.counter.text(note) <= limit:
            return note
        lines = note.splitlines()
        while lines and self.counter.text("\n".join(lines) + TRUNCATED) > limit:
            lines.pop()
        return "\n".join(lines).rstrip() + TRUNCATED

    # -- in the background -----------------------------------------------------------------------
    def schedule(
        self,
        messages: Sequence[Message],
        covers: int | None = None,
        *,
        on_done: Callable[[str | None], None] | None = None,
    ) -> asyncio.Task[str | None] | None:
        """Start an update in the background and return its task, or None when one is already running.
        Never blocks and never raises into the caller: the task returns the new note, or None after a
        failure (logged, and kept in `last_error`). Must be called from a running event loop."""
        if self.updating:
            return None
        snapshot = list(messages)

        async def run() -> str | None:
            try:
                note: str | None = await self.update(snapshot, covers)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.last_error = f"session-memory update failed: {exc}"
                log.warning(self.last_error)
                note = None
            if on_done is not None:
                on_done(note)
            return note

        self._task = asyncio.get_running_loop().create_task(run())
        return self._task

    async def wait(self) -> None:
        """Let a running update finish (on exit), swallowing its failure (already recorded)."""
        if self._task is not None and not self._task.done():
            try:
                await self._task
            except asyncio.CancelledError:
                pass
