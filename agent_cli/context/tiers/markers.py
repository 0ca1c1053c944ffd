"""How the blocks compaction leaves behind are told apart: the tags engine-written blocks carry, the
text prefixes of compacted tool results, and the short stable refs the placeholders point to."""

from __future__ import annotations

import base64
import hashlib

# The person's words are user text blocks with `meta.source == "user"` and no `meta.tag`. Blocks the
# engine itself writes carry a `meta.tag`: the summary (`summary`), the ledger (`ledger`), the
# session-memory note (`session-memory`), the truncation marker (`truncated`) and the short assistant
# acknowledgement that keeps roles alternating (`compaction-ack`). Those with `meta.source ==
# "compactor"` or `"memory"` are never fed to a summarizer as raw material. All of it is visible in the
# log, so a replayed view behaves the same.
TAG_SUMMARY = "summary"
TAG_LEDGER = "ledger"
TAG_MEMORY = "session-memory"
TAG_MARKER = "truncated"
TAG_ACK = "compaction-ack"
NOT_MATERIAL_TAGS = frozenset({TAG_SUMMARY, TAG_LEDGER, TAG_MEMORY, TAG_MARKER, TAG_ACK})

ACK_TEXT = "(Earlier turns were compacted; the reference material that follows stands in for them.)"
CLEARED_PREFIX = "[cleared: "
REGION_PREFIX = "[region summary"
POINTER_PREFIX = "[summarized in the region summary"
COMPACTED_PREFIXES = (CLEARED_PREFIX, REGION_PREFIX, POINTER_PREFIX)
TAG_REATTACH = "reattach"


# -- refs --------------------------------------------------------------------------------------------


def make_ref(prefix: str, content: str) -> str:
    """A stable short id: the same content always gets the same ref (safe as a file name)."""
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{prefix}-{digest}"


def short_ref(tool_use_id: str) -> str:
    """A short, stable ref for a tool call's output: it is repeated in every later request, and a
    provider's id (`toolu_01LX8KZFM6Z7TecXCsyGYKow`) costs ~15 tokens where this costs ~4."""
    digest = base64.b32encode(hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).digest())
    return "r" + digest[:9].decode("ascii").lower()
