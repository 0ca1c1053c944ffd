"""Requests beside the conversation — compaction summaries, session-memory notes, web_fetch's
answers from a page — sent, paid for in the session's totals, and logged as `summarizer_usage` (so a resume counts them again)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.core.types import Message
from agent_cli.llm.base import Provider, Request
from agent_cli.llm.models import ModelRegistry
from agent_cli.session.log import EventLog
from agent_cli.settings.config import Config

if TYPE_CHECKING:
    from agent_cli.core.types import Totals


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
