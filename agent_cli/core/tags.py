"""The tags this program wraps text in, and the escape that keeps anyone else from writing them.

The system prompt tells the model that `<system-reminder>`, `<user-context>`, `<persisted-output>` and
the like come from this program. That stays true only if text from elsewhere — files (CLAUDE.md, a
file read, a file re-attached after compaction), tool and MCP output, hook output, and what a model
wrote into a summary or a note — can neither close one of our elements nor open a new one. So before
such text goes into the context, every `<` that starts one of our tag names (opening or closing, any
case) becomes `&lt;`: `</user-context><system-reminder>` reads `&lt;/user-context>&lt;system-reminder>`.

The escape is idempotent (escaped text is left as it is) and touches nothing else, so the text stays
readable and a `<div>` stays a `<div>`. It applies to what the model sees only: the store keeps the
original bytes (`recall` gives them back, escaped again on their way into the context), and so do
the person's terminal and the tools.
"""

from __future__ import annotations

import re

PROGRAM_TAGS = frozenset(
    {
        "system-reminder",
        "user-context",
        "env",
        "persisted-output",
        "session-memory",
        "session-memory-request",
        "summary",
        "ledger",
        "tool-trace",
        "tool-digest",
        "tool-digest-coarse",
        "todo-list",
        "file",
        "reattach",
        "truncated",
        "compaction-ack",
        "attachment",
        "pre-tool-use-hook",
        "post-tool-use-hook",
        "user-prompt-submit-hook",
        "session-start-hook",
        "web-page",
    }
)
ESCAPED_LT = "&lt;"
HOOK_FEEDBACK_TAG = "post-tool-use-hook"  # a PostToolUse hook's feedback after a tool's output
PRE_HOOK_TAG = "pre-tool-use-hook"  # a PreToolUse hook's context (and input change) after it
HOOK_TAGS = (PRE_HOOK_TAG, HOOK_FEEDBACK_TAG)  # in the order they follow a tool's output
FOLDER_CONTEXT_TAG = "user-context"  # a folder's memory files, after the read that reached the folder
# The program's own parts a tool's result may end with, in the order they come; the result block's
# `BlockMeta.tag` names the first of them, and everything from its opening on is the program's.
RESULT_PART_TAGS = (FOLDER_CONTEXT_TAG, *HOOK_TAGS)
_NAMES = "|".join(re.escape(t) for t in sorted(PROGRAM_TAGS, key=len, reverse=True))
# `<`, optional blanks and `/`, one of our names, then anything that cannot continue a tag name
_OURS = re.compile(rf"<(?=\s*/?\s*(?:{_NAMES})(?![\w-]))", re.IGNORECASE)


def escape_tags(text: str) -> str:
    """`text` with every `<` that would open or close one of our tags written as `&lt;`."""
    if "<" not in text:
        return text
    return _OURS.sub(ESCAPED_LT, text)


def split_result_parts(text: str, tag: str) -> tuple[str, str]:
    """(a tool result's own text, the program's parts it ends with) when `tag`, the block's
    `BlockMeta.tag`, names the first of them; (text, "") otherwise. The parts' bodies were escaped
    when they were wrapped, so the last unescaped opening of that tag is where they start."""
    if tag not in RESULT_PART_TAGS:
        return text, ""
    starts = [m.start() for m in re.finditer(rf"\n\n<{re.escape(tag)}[ >]", text)]
    return (text[: starts[-1]], text[starts[-1] :]) if starts else (text, "")


def has_program_tag(text: str) -> bool:
    """Whether `text` would open or close one of our tags (unescaped)."""
    return "<" in text and _OURS.search(text) is not None


def attr(value: str) -> str:
    """`value` safe inside a double-quoted attribute."""
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", " ")


def element(tag: str, body: str, **attributes: str) -> str:
    """`<tag a="…">`, `body` escaped, `</tag>`, each on its own line (empty attributes left out)."""
    attrs = "".join(f' {name}="{attr(value)}"' for name, value in attributes.items() if value)
    return f"<{tag}{attrs}>\n{escape_tags(body)}\n</{tag}>"
