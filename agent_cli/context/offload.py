"""Ingest: what happens to a message on its way into the view, before any request sees it.

T0 offload: a tool result over `offload_result_chars` or, whatever its characters, one that alone
would take half the usable budget (dense text: 29k characters of CJK are ~80k tokens), or the largest
results while a message's
results together exceed `offload_turn_chars`, and a person's paste over `offload_paste_chars`, go to
the store; the context keeps a `<persisted-output>` element with a head+tail preview and the ref.
The result is a `Compaction` (data the session log keeps, so a resume replays it exactly).

Also the shaping rules: empty text blocks are dropped, pending injections and the user context are
merged into a user message in rule-2 order, two messages of one role in a row become one.
(The `digest` tool-trace mode is a tier: `tiers/digest.py`, run by the policy.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

from agent_cli.context.invariants import is_summary, user_rank
from agent_cli.context.model import Compaction, ContextConfig, SpanReplacement
from agent_cli.context.restore import RESTORED_TAG, split_restored
from agent_cli.context.store import OffloadStore, safe_ref, validate_ref
from agent_cli.core.persisted import (  # noqa: F401 - re-exported: the T0 vocabulary
    PERSISTED_TAG,
    count_lines,
    is_persisted,
    persisted_element,
    persisted_text,
    preview,
)
from agent_cli.core.tags import (
    FOLDER_CONTEXT_TAG,
    HOOK_FEEDBACK_TAG,
    PRE_HOOK_TAG,
    element,
    escape_tags,
    has_program_tag,
    split_result_parts,
)
from agent_cli.core.types import Block, BlockMeta, Message, Trust

USER_CONTEXT_TAG = FOLDER_CONTEXT_TAG  # the memory files, the workspace's and a folder's
ENV_TAG = "env"


def offload_results(
    message: Message,
    config: ContextConfig,
    store: OffloadStore,
    *,
    index: int = 0,
    paste_ref: Callable[[], str] | None = None,
    raw: Mapping[str, str] | None = None,
    fits: Callable[[Block], bool] | None = None,
) -> tuple[Message, Compaction | None]:
    """T0 for one user message at view `index`: (the message as it stays in the view, the compaction).
    `fits` says whether a result may stay whole by its tokens (the engine's: not half the budget),
    whatever its characters.

    `raw` holds the original text of results `neutral_results` escaped (by tool_use id): the store
    keeps those bytes, the preview is escaped again. A block whose original cannot be written (disk
    full, say) stays whole: nothing is ever lost."""
    if message.role != "user":
        return message, None
    blocks = list(message.blocks)
    originals: dict[str, str] = {}
    refs: list[str] = []
    pastes = _paste_refs(paste_ref)
    kept_whole: set[int] = set()

    def offload(j: int, ref: str) -> None:
        block = blocks[j]
        original = (
            (raw or {}).get(block.tool_use_id, block.text) if block.type == "tool_result" else block.text
        )
        try:
            path = store.put(validate_ref(ref), original)
        except OSError:
            kept_whole.add(j)
            return
        originals[ref] = original
        refs.append(ref)
        text = _persisted(ref, original, parts(block), str(path) if path else None, config.preview_chars)
        blocks[j] = replace(block, text=text, meta=replace(block.meta, ref=ref))

    candidates = [
        j
        for j, b in enumerate(blocks)
        if b.type == "tool_result" and b.text and not is_persisted(b.text) and b.meta.tag != RESTORED_TAG
    ]  # a read brought back (restore.py) was cut to T0's limit there already
    for j in candidates:
        own = len(blocks[j].text) - len(parts(blocks[j]))
        if own > config.offload_result_chars or (fits is not None and not fits(blocks[j])):
            offload(j, safe_ref(blocks[j].tool_use_id))
    while _results_chars(blocks) > config.offload_turn_chars:
        left = [
            j
            for j in candidates
            if j not in kept_whole
            and not is_persisted(blocks[j].text)
            and len(blocks[j].text) > config.preview_chars * 2
        ]
        if not left:
            break
        largest = max(left, key=lambda j: (len(blocks[j].text), -j))
        offload(largest, safe_ref(blocks[largest].tool_use_id))
    for j, block in enumerate(blocks):
        if (
            block.type == "text"
            and block.meta.source == "user"
            and not block.meta.tag
            and not is_persisted(block.text)
            and len(block.text) > config.offload_paste_chars
        ):
            offload(j, next(pastes))
    if not refs:
        return message, None
    new = replace(message, blocks=tuple(blocks))
    compaction = Compaction(
        tier="T0",
        trigger="ingest",
        replacements=(SpanReplacement(index, index + 1, (new,)),),
        refs=tuple(refs),
        originals=originals,
    )
    return new, compaction


def parts(block: Block) -> str:
    """The program's parts a tool result ends with (a folder's memory files, hooks' words), "" when none."""
    return split_result_parts(block.text, block.meta.tag)[1] if block.type == "tool_result" else ""


def _persisted(ref: str, original: str, ours: str, path: str | None, preview_chars: int) -> str:
    """What stays in view of a result kept whole under `ref`: a preview of the tool's own text, then
    the program's parts (`ours`) as they are — what a folder's memory files or a hook said is read
    now, not found in a preview's gap. The store keeps it all: `recall` gives the parts back too."""
    if not (ours and original.endswith(ours)):
        return persisted_text(ref, original, path, preview_chars)
    own = preview(original[: -len(ours)], preview_chars)
    return persisted_element(ref, own, chars=len(original), lines=count_lines(original), path=path) + ours


def fits_in(room: int, count: Callable[[str], int]) -> Callable[[Block], bool]:
    """`offload_results`' `fits`: a result may enter whole unless it alone is over `room` tokens (the
    engine's: half the usable budget). A recall page always may: it is a page of what is stored
    (offloading it again would send the model round in a circle), and `recall` bounds its pages."""

    def fits(block: Block) -> bool:
        if block.meta.tool_name == "recall" or len(block.text.encode()) <= room:  # a token is >= 1 byte
            return True
        return count(block.text) <= room

    return fits


def _results_chars(blocks: Sequence[Block]) -> int:
    return sum(len(b.text) for b in blocks if b.type == "tool_result")


def _paste_refs(make: Callable[[], str] | None) -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield make() if make else f"paste-{n}"


# -- shaping -----------------------------------------------------------------------------------------


def clean_message(message: Message) -> Message:
    """Empty text blocks are dropped (the API refuses them); a message left with nothing is an error."""
    if message.role not in ("user", "assistant"):
        raise ValueError(f"a message's role is 'user' or 'assistant', not {message.role!r}")
    blocks = tuple(b for b in message.blocks if not (b.type == "text" and not b.text.strip()))
    if not blocks:
        raise ValueError(f"an empty {message.role} message cannot be added to the conversation")
    return message if len(blocks) == len(message.blocks) else replace(message, blocks=blocks)


def merge_injections(message: Message, context: Sequence[Block], pending: Sequence[Block]) -> Message:
    """A user message in rule-2 order: tool results, the user context, its own tagged blocks, the
    pending injections, then the person's words."""
    results = [b for b in message.blocks if b.type == "tool_result"]
    tagged = [b for b in message.blocks if b.type != "tool_result" and b.meta.tag]
    words = [b for b in message.blocks if b.type != "tool_result" and not b.meta.tag]
    return replace(message, blocks=tuple(results + list(context) + tagged + list(pending) + words))


def merge_same_role(previous: Message, message: Message) -> Message:
    """Two messages of one role in a row become one (roles must alternate); user blocks keep rule 2."""
    blocks = previous.blocks + message.blocks
    if message.role == "user":
        blocks = tuple(sorted(blocks, key=user_rank))
    return replace(previous, blocks=blocks)


def wrap(tag: str, text: str) -> str:
    """`text` inside `<tag>` ... `</tag>`, escaped (core/tags.py) so it can neither close that element
    nor open another of ours. Text that is already exactly one such element, with nothing of ours
    inside, is kept as it is."""
    if _one_element(tag, text.strip()):
        return text
    return element(tag, text.strip())


def _one_element(tag: str, text: str) -> bool:
    if not (text.startswith((f"<{tag}>", f"<{tag} ")) and text.endswith(f"</{tag}>")):
        return False
    inner = text[text.index(">") + 1 : -len(f"</{tag}>")]
    return not has_program_tag(inner)


def neutral_results(message: Message) -> Message:
    """`message` with what its tool results carry from outside (files, commands, MCP servers)
    escaped so that it cannot forge one of our tags (core/tags.py). What the program itself put in a
    result stays as it is: the frame of a `<persisted-output>` element whose ref the block carries
    (its preview was escaped when it was made) and the hooks' `<pre-tool-use-hook>` and
    `<post-tool-use-hook>` parts (escaped when they were wrapped). Idempotent: a message escaped once
    is returned unchanged."""
    if message.role != "user":
        return message
    blocks = list(message.blocks)
    changed = False
    for i, block in enumerate(blocks):
        if block.type == "tool_result" and has_program_tag(block.text):
            text = _neutral_result_text(block)
            if text != block.text:
                blocks[i] = replace(block, text=text)
                changed = True
    return replace(message, blocks=tuple(blocks)) if changed else message


def _neutral_result_text(block: Block) -> str:
    text, ours = split_restored(block)
    if not ours:  # the tag names the first of the program's parts (a folder's memory, hooks'), which end it
        text, ours = split_result_parts(text, block.meta.tag)
    opening = f'<{PERSISTED_TAG} ref="{block.meta.ref}"'
    end = text.find(f"</{PERSISTED_TAG}>") if block.meta.ref and text.startswith(opening) else -1
    if end >= 0:
        end += len(f"</{PERSISTED_TAG}>")
        return text[:end] + escape_tags(text[end:]) + ours
    return escape_tags(text) + ours


def hook_feedback(output: str, feedback: str) -> str:
    """A tool's output with a PostToolUse hook's feedback after it, as the model reads it (the
    result block is then tagged HOOK_FEEDBACK_TAG, so `neutral_results` knows that part is ours)."""
    return f"{output}\n\n{element(HOOK_FEEDBACK_TAG, feedback.strip())}"


def with_hook_parts(
    output: str, before: str, after: str, added: Sequence[tuple[str, str]] = ()
) -> tuple[str, str]:
    """(a tool's output with the program's parts after it — `added` (tag, element) first, such as a
    folder's memory files, then what PreToolUse hooks said `before` it ran and PostToolUse hooks said
    `after`, each in its element; the result block's tag: the first part's, or "" when none)."""
    hooks = [(tag, text.strip()) for tag, text in ((PRE_HOOK_TAG, before), (HOOK_FEEDBACK_TAG, after))]
    parts = [*added, *((tag, element(tag, text)) for tag, text in hooks if text)]
    if not parts:
        return output, ""
    return "\n\n".join([output, *(part for _, part in parts)]), parts[0][0]


def context_blocks(user_context: str, environment: str, now: float) -> list[Block]:
    """The user context (AGENTS.md, CLAUDE.md) and the environment, tagged, for the first user message."""
    out = []
    if user_context.strip():
        meta = BlockMeta(Trust.USER, "system", now, tag=USER_CONTEXT_TAG)
        out.append(Block.text_block(wrap(USER_CONTEXT_TAG, user_context), meta))
    if environment.strip():
        meta = BlockMeta(Trust.SYSTEM, "system", now, tag=ENV_TAG)
        out.append(Block.text_block(wrap(ENV_TAG, environment), meta))
    return out


def category(block: Block) -> str:
    """The /context breakdown's name for what a block of the view is (a read's result with a
    folder's memory files after it is a tool result)."""
    if block.meta.tag in (USER_CONTEXT_TAG, ENV_TAG) and block.type != "tool_result":
        return "user_context"
    if is_summary(block) or block.meta.source == "memory":
        return "summaries"
    if block.type == "tool_result":
        return "tool_results"
    if block.meta.tag:
        return "attachments"
    return "messages"


def neutral_compaction(compaction: Compaction) -> Compaction:
    """`compaction` with its messages' tool results escaped (a log written before results were)."""
    spans = tuple(
        replace(span, messages=tuple(neutral_results(m) for m in span.messages))
        for span in compaction.replacements
    )
    if all(a.messages == b.messages for a, b in zip(spans, compaction.replacements, strict=True)):
        return compaction
    return replace(compaction, replacements=spans)
