"""An edit made from memory of a file whose read T1 cleared brings that read back: an automatic recall.

An edit whose old text is nowhere in view (hits.py finds it: replay's definition of a blind edit) of a
file whose read was cleared shows the model needed the read (a miss: context/ghosts.py), and its
next edits of that file will need it again — a run of edits of one file is the commonest shape of
real sessions. Without the read each of them is made blind or costs a `recall` (a whole extra
request reading the context). So the engine answers the edit with the read it cleared, appended to
the edit's result as the store keeps it (`<file ref=… path=…>`): what a recall would have returned,
without the extra request. An edit whose text is still in view (a partial read of the spot, a grep
line, the file's previous edit) did not need the read: nothing comes back and no miss is counted.

The read comes back at the tail of the view, so nothing before it is written to the cache again;
it is then an item like any other (the edit's call, priced as the file's latest read: reuse.py)
that T1 may clear again when it no longer pays. What comes back is the read as it was cleared; the
edits made since are in the conversation (the model wrote them), exactly the picture it had before
the clear. What a `Write` gave the file counts as a read of it (the model saw that text as it wrote
it): its cleared content comes back the same way, taken out of the call's input the store keeps as
JSON. Only a text of the edited file that is not stale (a superseded read is never needed), and
only for an edit that needs old text (`Write` replaces the file). The result's tag (`RESTORED_TAG`)
tells `neutral_results` that the appended part — and a PostToolUse hook's feedback before it — is
the program's: its body was escaped when it was made, so a file cannot forge a tag through it, and
replaying the log gives the same view.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from agent_cli.core.persisted import preview
from agent_cli.core.tags import HOOK_TAGS, element
from agent_cli.core.types import Block, Message

RESTORED_TAG = "restored-read"  # BlockMeta.tag of an edit result carrying a read brought back
FILE_TAG = "file"
NOTE = "your earlier read of this file, cleared from the context and brought back because you edited it; your edits since are above"
WRITTEN_NOTE = "what you wrote to this file, cleared from the context and brought back because you edited it; your edits since are above"


class Sizes(Protocol):
    """What the restore reads of ContextConfig (context/model.py imports this module's users, so a
    Protocol): how long a text may come back whole (T0's limit for a result) and how much of a
    longer one shows."""

    offload_result_chars: int
    preview_chars: int


@dataclass(frozen=True)
class Restore:
    """A cleared read to bring back with the result of edit `call`."""

    call: str  # the edit's tool_use id
    ref: str  # the read's ref in the store
    path: str
    # the input key holding the file's text when the ref keeps a call's input (a Write's "content")
    key: str = ""

    def text(self, stored: str | None) -> str | None:
        """The file's text out of what the store keeps under the ref (a call's input is kept as JSON)."""
        if not stored or not self.key:
            return stored
        try:
            value = json.loads(stored).get(self.key)
        except (ValueError, AttributeError):
            return None
        return value if isinstance(value, str) else None


def bring_back(
    message: Message, found: Sequence[Restore], stored: Callable[[str], str | None], limits: Sizes
) -> Message:
    """`message` with each edit result in `found` carrying the reads kept under their refs (`stored`:
    the store's `get`; a read the store cannot give back is left out). A text longer than
    `limits.offload_result_chars` comes back as T0 would show it: its head and tail, the rest by `recall`."""
    if not found:
        return message
    texts = [(r, r.text(stored(r.ref))) for r in found]
    blocks = [
        restored(b, [(r, t) for r, t in texts if t and r.call == b.tool_use_id], limits)
        if b.type == "tool_result"
        else b
        for b in message.blocks
    ]
    return replace(message, blocks=tuple(blocks))


def restored(block: Block, restores: list[tuple[Restore, str]], limits: Sizes) -> Block:
    """The edit result `block` with each read (restore, stored text) appended after it (after a
    hook's part too, which stays the program's part with it)."""
    if not restores or block.meta.tag not in ("", *HOOK_TAGS):
        return block
    parts = [_part(r, text, limits) for r, text in restores]
    text = "\n\n".join([block.text, *parts])
    return replace(block, text=text, meta=replace(block.meta, tag=RESTORED_TAG))


def _part(restore: Restore, text: str, limits: Sizes) -> str:
    note = WRITTEN_NOTE if restore.key else NOTE
    if (
        len(text) > limits.offload_result_chars
    ):  # what T0 keeps in view of a result this long (context/offload.py)
        note += (
            f"; only its head and tail ({len(text):,} chars in all): recall ref {restore.ref} for the rest"
        )
        text = preview(text, limits.preview_chars)
    return element(FILE_TAG, text, path=restore.path, ref=restore.ref, note=note)


def split_restored(block: Block) -> tuple[str, str]:
    """(the tool's own text, what the program appended to it: a hook's feedback, the reads);
    (text, "") when nothing was. The tool's text was escaped before anything was appended, so the
    first unescaped opening of either element is where the program's part starts."""
    if block.meta.tag != RESTORED_TAG:
        return block.text, ""
    found = [block.text.find(f"\n\n<{tag}") for tag in (f"{FILE_TAG} ", *(f"{t}>\n" for t in HOOK_TAGS))]
    cut = min((i for i in found if i >= 0), default=-1)
    if cut < 0:
        return block.text, ""
    return block.text[:cut], block.text[cut:]
