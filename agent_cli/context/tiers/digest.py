"""Tool-trace "digest" mode: finished runs of tool calls become one line per call.

When a new person's message arrives, each finished run before it — the assistant's work between two
of the person's messages, ending in an assistant message without tool calls — becomes ONE assistant
message: its text blocks verbatim, and in place of each tool_use a line
`- <tool> <target> → ok|error (N chars, ref R)`. The tool_use blocks go together with their results
(so no pair is broken) and with the unpinned reminders riding in the result messages; every output
stays recallable by its ref, the whole run by the compaction's run ref. A run holding a call of the
working set (context/working_set.py) stays whole until the model is done with that file.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.context.model import Compaction, SpanReplacement, TierContext, TierName
from agent_cli.context.tiers.markers import make_ref
from agent_cli.context.tiers.pricing import valued
from agent_cli.context.tiers.rendering import render_transcript
from agent_cli.context.tiers.selection import is_person_message, last_person_index, tool_target
from agent_cli.context.tiers.splice import tokens_of
from agent_cli.core.types import Block, BlockMeta, Message, Trust


def digest_line(use: Block, result: Block | None) -> str:
    target = tool_target(use.input)
    what = f"{use.name} {target}".strip()
    if result is None:
        return f"- {what} → no result"
    outcome = "error" if result.is_error else "ok"
    ref = result.meta.ref or result.tool_use_id
    return f"- {what} → {outcome} ({len(result.text)} chars, ref {ref})"


def _pure_results(message: Message) -> bool:
    if message.role != "user" or not message.tool_results() or is_person_message(message):
        return False
    return all(b.type == "tool_result" or (b.meta.tag and not b.meta.pinned) for b in message.blocks)


def finished_runs(view: Sequence[Message], upto: int) -> list[tuple[int, int]]:
    """(start, end) of runs view[start:end] closed by a person's message at index `end` <= `upto`:
    assistant with tool calls, its pure result message, ..., a last assistant message without tool
    calls. A result message that also holds something that must stay (the person's words, a pinned
    block) is not digested; the run's part after it still may be."""
    runs: list[tuple[int, int]] = []
    i = 1
    while i < upto:
        if view[i].role != "assistant" or not view[i].tool_uses():
            i += 1
            continue
        j = i
        while (
            j + 1 < upto
            and view[j].role == "assistant"
            and view[j].tool_uses()
            and _pure_results(view[j + 1])
        ):
            j += 2
        final, person = view[j], j + 1
        if (
            j > i
            and person <= upto
            and final.role == "assistant"
            and not final.tool_uses()
            and is_person_message(view[person])
            and not view[person].tool_results()
        ):
            runs.append((i, person))
            i = person
        else:
            i = max(j, i + 1)
    return runs


def digest_run(run: Sequence[Message], now: float = 0.0) -> Message:
    results = {b.tool_use_id: b for m in run if m.role == "user" for b in m.tool_results()}
    blocks: list[Block] = []
    for message in run:
        if message.role != "assistant":
            continue
        blocks += [b for b in message.blocks if b.type == "text" and b.text]
        lines = [digest_line(u, results.get(u.id)) for u in message.tool_uses()]
        if lines:
            meta = BlockMeta(Trust.ASSISTANT, "assistant", now, tag="tool-digest")
            blocks.append(Block.text_block("\n".join(lines), meta))
    return Message("assistant", tuple(blocks), run[0].turn)


class Digest:
    name: TierName = "digest"

    async def propose(self, view: Sequence[Message], ctx: TierContext, trigger: str) -> Compaction | None:
        last = last_person_index(view)
        if last is None or last < 2:
            return None
        replacements: list[SpanReplacement] = []
        originals: dict[str, str] = {}
        refs: list[str] = []
        saved = 0
        ws = valued(view, ctx)
        for start, end in finished_runs(view, last):
            run = view[start:end]
            if any(ws.keeps(u.id) for m in run for u in m.tool_uses()):
                continue  # the model is still working with a file of this run: digested later
            new = digest_run(run, ctx.now)
            for message in run:
                for result in message.tool_results():
                    ref = result.meta.ref or result.tool_use_id
                    if not result.meta.ref:
                        originals[ref] = result.text
                    refs.append(ref)
            transcript = render_transcript(run)
            run_ref = make_ref("run", transcript)
            originals[run_ref] = transcript
            refs.append(run_ref)
            replacements.append(SpanReplacement(start, end, (new,)))
            saved += tokens_of(run, ctx.counter) - ctx.counter.message(new)
        if not replacements:
            return None
        return Compaction(
            tier="digest",
            trigger=trigger,
            replacements=tuple(replacements),
            before=ctx.used,
            after=ctx.used - saved,
            refs=tuple(refs),
            originals=originals,
        )
