"""A compaction in the transcript: tier, tokens before → after, and why, in the person's words; the summary
expandable. It is the program's notice, muted like the others, not the bar of a prompt the person typed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static

from agent_cli.core.printable import printable
from agent_cli.tui.formatting import format_tokens

TIER_NAMES: dict[str, str] = {
    "T0": "offload",
    "T1": "micro-compact",
    "T2": "session-memory compact",
    "T3": "region compact",
    "T4": "full compact",
    "T5": "emergency truncation",
    "digest": "tool-trace digest",
    "clear": "clear",
}


# Why a compaction ran, by its trigger (context/policy.py, context/tiers/): the internal names say
# nothing to a person ("pressure" is T1's every-request bet, at 6% of the budget as at 90%).
TRIGGER_WORDS: dict[str, str] = {
    "pressure": "cleared old tool results",
    "cache_cold": "cache expired: cleared old tool results",
    "manual": "/compact",
    "auto": "context near full",
    "overflow": "the model refused a prompt too long",
    "no_summarizer": "no summarizer: kept a plain summary",
    "summarizer_failed": "the summary failed: kept a plain summary",
    "subtask": "a finished todo item folded",
    "digest": "old tool calls digested",
    "ingest": "a large output stored aside",
    "masking": "old tool results masked",
    "api_clear": "the API's context editing",
    "api_compact": "the API's compaction",
}


def trigger_words(tier: str, trigger: str) -> str:
    if tier == "clear":
        return "/clear"
    return TRIGGER_WORDS.get(trigger or "auto", trigger)


def compaction_title(tier: str, trigger: str, before: int, after: int) -> str:
    name = TIER_NAMES.get(tier, tier)
    label = f"{tier} {name}" if name != tier else tier
    saved = f" · {format_tokens(before)} → {format_tokens(after)} tokens"
    return f"⟳ compacted: {label}{saved} · {trigger_words(tier, trigger)}"


class CompactionNotice(Collapsible):
    DEFAULT_CSS = """
    CompactionNotice {
        margin: 1 0 0 0;
        padding: 0;
        border: none;
        background: transparent;
    }
    CompactionNotice CollapsibleTitle { color: $text-muted; padding: 0 1; }
    CompactionNotice > Contents { padding: 0 1 0 3; height: auto; }
    CompactionNotice Markdown { margin: 0; padding: 0; background: transparent; }
    CompactionNotice .compaction-refs { color: $text-muted; }
    """

    def __init__(
        self,
        *,
        tier: str,
        trigger: str,
        before: int,
        after: int,
        summary: str = "",
        refs: Sequence[str] = (),
        collapsed: bool = True,
    ) -> None:
        self.tier = tier
        self.trigger = trigger
        self.tokens_before = before
        self.tokens_after = after
        self.summary = summary
        self.refs = tuple(refs)
        children: list[Widget] = []
        if summary:
            children.append(Markdown(printable(summary), classes="compaction-summary"))
        else:
            children.append(Static(Text("(no summary: this tier only cleared or moved content)")))
        if self.refs:
            shown = ", ".join(self.refs[:8]) + (f" … (+{len(self.refs) - 8})" if len(self.refs) > 8 else "")
            children.append(Static(Text(f"recallable refs: {shown}"), classes="compaction-refs"))
        super().__init__(*children, title=self.title_text, collapsed=collapsed)

    @property
    def title_text(self) -> str:
        return compaction_title(self.tier, self.trigger, self.tokens_before, self.tokens_after)
