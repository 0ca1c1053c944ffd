"""What the agent asks of the ACP client: the text of files as the editor holds them (its `fs`
methods, the file tools' `FileAccess`), and the person's answer to a permission question.

The client is the person's own editor, so its buffers are trusted as their disk is; every path the
tools send it has passed the permission check first, as it would for the disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import PermissionOption

from agent_cli.core.errors import ToolError
from agent_cli.core.events import PermissionDecision

OPTIONS = (
    ("allow_once", "Allow once", "allow_once"),
    ("allow_always", "Always allow", "allow_always"),
    ("reject_once", "Reject", "reject_once"),
)
DECISIONS: dict[str, PermissionDecision] = {"allow_once": "allow_once", "allow_always": "allow_always"}


class ClientFiles:
    """tools.base.FileAccess over the client's `fs/read_text_file` and `fs/write_text_file`, used
    only when the client offers both (one view of a file: what is read is what is written)."""

    def __init__(self, conn: Any, session_id: str = "") -> None:
        self.conn = conn
        self.session_id = session_id  # set once the session is open

    async def read_text(self, path: Path) -> str | None:
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except (RequestError, ConnectionError):
            return None  # the editor does not have it (a binary file, gone): the disk says why
        return response.content

    async def write_text(self, path: Path, text: str) -> bool:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except RequestError as exc:
            raise ToolError(f"the editor did not write {path}: {exc} {exc.data or ''}".rstrip()) from exc
        except ConnectionError:
            return False  # the client is gone (the turn is ending): the disk keeps the change
        return True


def options(rule: str) -> list[PermissionOption]:
    """Allow once / always allow (what "always" saves, when the permission layer said it) / reject."""
    out = []
    for option_id, name, kind in OPTIONS:
        if option_id == "allow_always" and rule:
            name = f"Always allow {rule}"
        out.append(PermissionOption(option_id=option_id, name=name, kind=kind))
    return out


async def ask(
    conn: Any, session_id: str, tool_call: Any, rule: str, pending: set[asyncio.Task]
) -> PermissionDecision:
    """The person's answer, through the client. A question the turn's cancel withdrew (the task
    is cancelled), a client that fails or has gone, or an answer that is no option: deny."""
    task = asyncio.ensure_future(
        conn.request_permission(session_id=session_id, tool_call=tool_call, options=options(rule))
    )
    pending.add(task)
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        pending.discard(task)
    if task.cancelled() or task.exception() is not None:
        return "deny"
    outcome = task.result().outcome
    return (
        DECISIONS.get(getattr(outcome, "option_id", ""), "deny") if outcome.outcome == "selected" else "deny"
    )
