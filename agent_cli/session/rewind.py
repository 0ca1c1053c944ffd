"""Checkpoints and /rewind for one opened session: the workspace is snapshotted before a prompt's
first change and when that prompt's turn ends, and `rewind` goes back to before a prompt in code, in
conversation, or both. A code rewind puts back what the agent's turns changed and keeps what the
person changed between them and after the last (session/ownership.py); what the person changes while
a turn runs cannot be told from the agent's work and is put back with it. The pure event logic
(which events a rewind removes) is session/timeline.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from agent_cli.core.errors import AgentError
from agent_cli.core.events import Event, Notice
from agent_cli.core.surrogates import scrub
from agent_cli.session.checkpoints import CheckpointError, Checkpoints, Restored
from agent_cli.session.log import EventLog, read_events
from agent_cli.session.ownership import Span, checkpoint_index, last_restore, spans_from
from agent_cli.session.timeline import (
    PromptPoint,
    RewindMode,
    effective_events,
    memory_rewound,
    prompt_points,
)

_UNDO_HINT = " `/rewind undo` puts it back as it was just now."


class Rewinder:
    """`turn()` is the loop's current prompt number; `reopen()` rebuilds every view from the log;
    `forget_note()` drops a session-memory note that covered what a rewind removed."""

    def __init__(
        self,
        workspace: Path,
        log: EventLog,
        *,
        turn: Callable[[], int],
        reopen: Callable[[], None],
        forget_note: Callable[[], None],
    ) -> None:
        self.log = log
        self.checkpoints = Checkpoints(workspace, log.path.parent)
        self.turn = turn
        self.reopen = reopen
        self.forget_note = forget_note
        self.failed = False
        self.nested_said: set[str] = set()  # the nested repositories a notice has named
        self.open_prompt = 0  # the prompt whose checkpoint was taken and whose turn has not ended

    async def checkpoint(self, emit: Callable[[Event], None]) -> None:
        """Snapshot the workspace before this prompt's first change (/rewind restores it)."""
        turn = self.turn()
        try:
            snap = await asyncio.to_thread(self.checkpoints.snapshot, f"before prompt {turn}")
        except Exception as exc:  # noqa: BLE001 - whatever went wrong, the tool call it precedes runs
            reason = scrub(str(exc) if isinstance(exc, CheckpointError) else f"{type(exc).__name__}: {exc}")
            # in the log, so a /rewind (in this process or a later one) says this prompt's code is lost
            self.log.append("checkpoint_failed", prompt=turn, reason=reason[:300])
            if not self.failed:  # say it once per session, then work on without
                self.failed = True
                emit(Notice(f"checkpoints are off: {reason}", "warning"))
            return
        skipped = snap.skipped_shown()
        self.log.append("checkpoint", prompt=turn, commit=snap.commit, skipped=skipped)
        self.open_prompt = turn
        if skipped:
            emit(Notice(f"checkpoint skipped {len(skipped)} large file(s): {', '.join(skipped[:5])}"))
        nested = [n for n in snap.nested_shown() if n not in self.nested_said]
        if nested:  # said once per repository
            self.nested_said.update(nested)
            emit(
                Notice(
                    f"checkpoints do not hold the files of {len(nested)} nested repository(ies) or "
                    f"submodule(s), so /rewind cannot restore them: {', '.join(nested[:5])}"
                )
            )

    async def end_turn(self) -> str:
        """When the turn of a prompt that took a checkpoint ends: snapshot the workspace again (the
        same tree when nothing changed since), so a rewind tells the agent's changes from the person's
        made after it. Returns a warning for the person ("" when all is well): a missing end snapshot
        only makes a rewind over this prompt take every change until the next snapshot as the agent's."""
        prompt, self.open_prompt = self.open_prompt, 0
        if not prompt:
            return ""
        # shielded: an interrupt now still leaves the snapshot taken and logged, never half-made
        return await asyncio.shield(asyncio.ensure_future(self._end_snapshot(prompt)))

    async def _end_snapshot(self, prompt: int) -> str:
        try:
            snap = await asyncio.to_thread(self.checkpoints.snapshot, f"after prompt {prompt}")
        except Exception as exc:  # noqa: BLE001 - the turn is over; the next rewind falls back
            return scrub(f"the checkpoint at the end of prompt {prompt} failed: {exc}")[:300]
        self.log.append("checkpoint_end", prompt=prompt, commit=snap.commit)
        return ""

    def prompt_points(self) -> list[PromptPoint]:
        return prompt_points(effective_events(read_events(self.log.path).events))

    async def rewind(self, number: int, mode: RewindMode) -> str:
        """Back to before prompt `number`: code (from its checkpoint), conversation (a rewind event), or both."""
        events = effective_events(read_events(self.log.path).events)
        points = prompt_points(events)
        if not 1 <= number <= len(points):
            raise AgentError(f"there is no prompt {number}: this session has {len(points)} prompt(s)")
        point = points[number - 1]
        said = []
        if mode in ("both", "code"):
            said.append(await self._rewind_code(point, number))
        if mode in ("both", "conversation"):
            drop_note = memory_rewound(events, number)
            self.log.append("rewind", prompt=number)
            if drop_note:
                self.forget_note()
            self.reopen()  # rebuild every view from the log, the rewind applied
            shown = " ".join(point.text.split())  # its first words on one line, as the picker shows it
            said.append(f"Conversation: back to before prompt {number} (“{shown[:60]}”).")
        return " ".join(said)

    async def _rewind_code(self, point: PromptPoint, number: int) -> str:
        if not point.checkpoint:
            if point.not_taken:
                return f"Code: {point.code_note()}."
            return "Code: no changes were made from that prompt on; nothing to restore."
        raw = read_events(self.log.path).events  # what a conversation rewind cut still happened
        restored = await self._restore(
            point.checkpoint, spans_from(raw, checkpoint_index(raw, point.checkpoint))
        )
        self.log.append(
            "restore", prompt=number, commit=point.checkpoint, undo=restored.undo, after=restored.after
        )
        hint = _UNDO_HINT if (restored.restored or restored.removed) and not restored.yours else ""
        said = "Code: " + restored.describe() + hint
        large = list(dict.fromkeys([*point.skipped, *restored.skipped_shown()]))
        if large:
            said += (
                f" Not in checkpoints, left as they are: {len(large)} large file(s): {', '.join(large[:10])}."
            )
        return said

    async def undo(self) -> str:
        """`/rewind undo`: what the last code rewind changed, put back as it was just before it (its
        `undo` snapshot); what the person changed since is kept. It can itself be undone the same way.
        The conversation is left as it is."""
        events = read_events(self.log.path).events
        last = last_restore(events)
        if last is None:
            raise AgentError("there is no code rewind to undo in this session")
        target = str(events[last]["undo"])
        restored = await self._restore(target, spans_from(events, last))
        self.log.append("restore", prompt=0, commit=target, undo=restored.undo, after=restored.after)
        return "Code: back to before the last rewind: " + restored.describe()

    async def _restore(self, commit: str, spans: list[Span]) -> Restored:
        try:
            return await asyncio.to_thread(self.checkpoints.restore, commit, spans)
        except CheckpointError as exc:
            raise AgentError(f"the code could not be restored: {exc}") from exc
