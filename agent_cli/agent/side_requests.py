"""Requests beside the conversation — compaction summaries, session-memory notes, web_fetch's
answers from a page — sent, paid for in the session's totals, and logged as `summarizer_usage` (so a
resume counts them again); and the provider's count of the prefix before the first prompt (free, not
a request that is billed)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from agent_cli.core.types import Message
from agent_cli.llm.base import Provider, Request
from agent_cli.llm.models import ModelRegistry
from agent_cli.session.log import EventLog
from agent_cli.settings.config import Config

if TYPE_CHECKING:
    from agent_cli.context.engine import ContextEngine
    from agent_cli.core.types import Totals

COUNT_TIMEOUT = 3.0  # seconds the TUI's start waits for the provider's count of the prefix


async def complete_metered(
    provider: Provider,
    request: Request,
    totals: Totals,
    models: ModelRegistry,
    log: EventLog,
    **fields: Any,  # more to say in the log event (purpose=...)
) -> Message:
    """Send `request`; its usage and cost join `totals` and the log."""
    done = await provider.complete(request)
    totals.usage = totals.usage + done.usage
    totals.cost_usd += models.info(request.model).cost(done.usage)
    totals.side_requests += 1
    log.append("summarizer_usage", usage=done.usage.to_json(), model=request.model, **fields)
    return done.message


async def summarize(
    provider: Provider,
    config: Config,
    models: ModelRegistry,
    main_model: str,
    totals: Totals,
    log: EventLog,
    system: str,
    content: str,
    purpose: str = "summary",
) -> str:
    """A summary by the summarizer model (`summarizer_model`, or the main model's cheap sibling);
    `purpose` names other side requests of that model in the log (web_fetch's answer from a page)."""
    model = config.summarizer_model or models.summarizer_for(main_model, config.provider)
    request = Request(
        model=model,
        system=[{"type": "text", "text": system}],
        messages=[{"role": "user", "content": [{"type": "text", "text": content}]}],
        max_tokens=min(8_000, config.max_tokens),
        metadata={"purpose": purpose},
    )
    said = {"purpose": purpose} if purpose != "summary" else {}
    message = await complete_metered(provider, request, totals, models, log, **said)
    text = message.text.strip()
    if not text:
        raise RuntimeError("the summarizer returned no text")
    return text


async def measure_prefix(provider: Provider, engine: ContextEngine, timeout: float = COUNT_TIMEOUT) -> None:
    """Before the first prompt, the provider counts the system prompt and tools (Anthropic's count is
    free), so the gauge shows from the start the number the first request's billing goes on from,
    not our estimate that billing then corrects. Without a count (no key, a provider that cannot
    count, network trouble, `timeout`), the estimate stays."""
    if engine.messages:
        return  # a resumed session: its log's billed usage calibrates the estimate
    counted = None
    with contextlib.suppress(Exception):
        counted = await asyncio.wait_for(provider.count_tokens(engine.prefix_probe()), timeout)
    if counted:
        engine.prefix_counted(counted)
