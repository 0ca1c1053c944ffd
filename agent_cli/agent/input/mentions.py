"""`@` mentions: a file named in the prompt is attached as a read of it (a directory as an `ls`), a
pasted image path as a read of the image. Each becomes a call of the person's (input/calls.py), so
the view holds it exactly as if the model had read the file.

Before sending, `describe` says what each mention costs in tokens — the very read it will make,
counted by the engine's counter — or the one line that says why it will not be attached (missing,
binary, denied by a rule). The same line is a notice when the prompt is sent; the prompt goes as
typed, with nothing attached for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from agent_cli.agent.input.calls import person_use
from agent_cli.context.tokens import TokenCounter
from agent_cli.core.errors import ToolError
from agent_cli.core.images import tokens_for
from agent_cli.core.types import Block, ToolCall
from agent_cli.tools.base import ToolContext
from agent_cli.tools.images.load import load_image
from agent_cli.tools.mentions.index import FileIndex
from agent_cli.tools.mentions.parse import find_mentions
from agent_cli.tools.mentions.resolve import Attachment, resolve
from agent_cli.tools.permissions import Permissions
from agent_cli.tools.registry import ToolRegistry, run_call

COMPLETIONS = 50
_CACHED = 256  # token costs remembered (by path, size, mtime and range)


@dataclass(frozen=True)
class MentionInfo:
    """One mention as the prompt's chip shows it before sending."""

    text: str  # as typed: `@src/app.py#L3-9`, or the pasted path
    shown: str  # the path as the model will see it
    kind: str  # text | image | directory | missing
    tokens: int = 0  # what attaching it adds to the context
    error: str = ""  # why it will not be attached (one line)


class MentionHost(Protocol):
    """What mentions use of a session (agent/runner.py's AgentSession), read at each call: /clear and
    /resume give the session a new tool context and engine."""

    tools: ToolRegistry
    permissions: Permissions
    tool_ctx: ToolContext
    interactive: bool

    @property
    def counter(self) -> TokenCounter: ...


class Mentions:
    def __init__(self, host: MentionHost, files: FileIndex) -> None:
        self.host = host
        self.files = files
        self._costs: dict[tuple[Any, ...], MentionInfo] = {}

    # -- sending -----------------------------------------------------------------------------------
    async def attachments(self, words: str, *, own: bool = True) -> tuple[list[Attachment], list[str]]:
        """What the person's words attach, and a line for each mention that attaches nothing (an
        image is opened first, in a thread: a corrupt one is said here, not sent as an error).
        `own`: the person wrote them (not a repository's command file): see `_permitted`."""
        workspace = self.host.tool_ctx.workspace
        attached: list[Attachment] = []
        problems: list[str] = []
        for mention in find_mentions(words):
            found = resolve(workspace, mention)
            if found.ok:
                found = self._permitted(found, own)
            if found.ok and found.kind == "image":
                try:
                    await asyncio.to_thread(load_image, found.path, mention.label)
                except ToolError as exc:
                    found = replace(found, error=str(exc))
            if found.ok:
                if all(a.input != found.input for a in attached):  # the same file twice: read once
                    attached.append(found)
            elif not mention.pasted or found.kind != "missing":  # a path that names nothing is words
                problems.append(found.error)
        return attached, problems

    def _permitted(self, found: Attachment, own: bool = True) -> Attachment:
        """Deny rules bind a mention too (`Read(~/.ssh/**)`). Naming a path outside the workspace is
        the person's yes to the question reading it would ask (when they wrote it: `own`); a name
        inside it that leads out (a link the repository planted) or an ask rule still asks, as the
        model's read would."""
        tool = self.host.tools.get(found.tool)
        if tool is None:
            return replace(found, error=f"{found.mention.label}: the {found.tool} tool is not available")
        decision = self.host.permissions.decide(tool, found.input)
        if decision.action == "deny":
            return replace(found, error=f"{found.mention.label}: {decision.reason}")
        workspace = Path(self.host.tool_ctx.workspace).absolute()
        named_outside = own and not found.path.is_relative_to(workspace)  # as typed, links not followed
        if decision.action != "ask" or (named_outside and not decision.rule):
            return found
        if not self.host.interactive:  # headless: nobody to ask, so it is not attached
            return replace(
                found,
                error=f"{found.mention.label}: not attached without a person to ask ({decision.reason})",
            )
        return replace(found, ask=True)

    @staticmethod
    def uses(attached: Sequence[Attachment]) -> tuple[Block, ...]:
        return tuple(person_use(a.tool, dict(a.input), "mention") for a in attached)

    # -- before sending ----------------------------------------------------------------------------
    async def describe(self, words: str) -> list[MentionInfo]:
        """Each mention in `words` with its token cost, or why it will not be attached."""
        out: list[MentionInfo] = []
        workspace = self.host.tool_ctx.workspace
        for mention in find_mentions(words):
            found = resolve(workspace, mention)
            if found.ok:
                found = self._permitted(found)
            if not found.ok:
                if not (mention.pasted and found.kind == "missing"):
                    out.append(MentionInfo(mention.label, found.shown, found.kind, error=found.error))
                continue
            out.append(await self._cost(found))
        return out

    async def _cost(self, found: Attachment) -> MentionInfo:
        try:
            stat = found.path.stat()
            key: tuple[Any, ...] = (
                str(found.path),
                stat.st_size,
                stat.st_mtime_ns,
                tuple(sorted(found.input.items())),
            )
        except OSError:
            key = (str(found.path), tuple(sorted(found.input.items())))
        if (known := self._costs.get(key)) is not None:
            return replace(known, text=found.mention.label)
        ctx = replace(self.host.tool_ctx, seen_read=None, call_id="", emit=None)
        call = ToolCall("cost", found.tool, dict(found.input))
        # in a thread of its own: a large file is read whole to count its lines, and the TUI types on
        result = await asyncio.to_thread(asyncio.run, run_call(self.host.tools, call, ctx))
        if result.is_error:
            info = MentionInfo(found.mention.label, found.shown, found.kind, error=result.output)
        else:
            tokens = self.host.counter.text(result.output)
            if result.image is not None:
                size = result.meta.get("image") or (0, 0)
                tokens += tokens_for(int(size[0]), int(size[1]))
            info = MentionInfo(found.mention.label, found.shown, found.kind, tokens)
        if len(self._costs) >= _CACHED:
            self._costs.clear()
        self._costs[key] = info
        return info

    async def complete(self, query: str, limit: int = COMPLETIONS) -> list[str]:
        """Workspace paths for `@query`, best first (listed in a thread the first time)."""
        self.files.refresh()
        return await asyncio.to_thread(self.files.query, query, limit)
