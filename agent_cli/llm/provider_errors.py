"""What the providers' error classifiers (anthropic_errors.py, openai_errors.py) share: the hints every
provider words alike, the context-overflow error T5 acts on, `retry-after` parsing, transport errors
recognised without importing httpx, and which errors are retried and how a final one is worded."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from agent_cli.core.errors import ContextOverflowError, ProviderError

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
COMMON_HINTS = {
    "context_overflow": "the request is larger than the model's window; /compact frees room",
    "other": "send the message again; if it keeps failing, report it as a bug",
}


def hints(**by_kind: str) -> dict[str, str]:
    """A provider's hints: its own wording by error kind over the common ones."""
    return {**COMMON_HINTS, **by_kind}


def overflow_error(message: str, status: int, tokens: int, maximum: int) -> ContextOverflowError:
    """The prompt is over the window: N tokens against M (0, 0 when the server did not say)."""
    return ContextOverflowError(
        "context_overflow",
        message,
        status,
        None,
        COMMON_HINTS["context_overflow"],
        tokens=tokens,
        maximum=maximum,
    )


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_transport_error(err: BaseException) -> bool:
    """httpx-style transport errors (dropped connection mid-stream) without importing httpx here."""
    return any(
        cls.__name__ in ("TransportError", "RequestError") and cls.__module__.startswith("httpx")
        for cls in type(err).__mro__
    )


def to_int(value: Any) -> int:
    """A token count as a server wrote it ("128,000" or 128000)."""
    return int(str(value).replace(",", ""))


def should_retry(err: ProviderError) -> bool:
    if err.kind in ("rate_limit", "overloaded", "network"):
        return True
    return err.kind == "server" and (err.status in RETRY_STATUSES or err.status in (None, 200))


def retry_reason(err: ProviderError) -> str:
    label = {"rate_limit": "rate limited", "overloaded": "API overloaded", "network": "network error"}
    text = label.get(err.kind, "server error")
    return f"{text} (HTTP {err.status})" if err.status and err.status != 200 else text


def final_error(err: ProviderError, attempt: int, content_started: bool) -> ProviderError:
    """The error to raise: the classified one, its message telling what happened."""
    if content_started:  # the loop keeps the text it showed, and says so (agent/response_reader.py)
        message = f"the response was cut off: {err.message}" + (
            f" (on attempt {attempt + 1})" if attempt else ""
        )
        hint = "the partial response was discarded; send the message again"
    elif attempt:
        message = f"{err.message} (gave up after {attempt + 1} attempts)"
        hint = err.hint
    else:
        return err
    if isinstance(err, ContextOverflowError):
        return ContextOverflowError(
            err.kind, message, err.status, err.retry_after, hint, tokens=err.tokens, maximum=err.maximum
        )
    return ProviderError(err.kind, message, err.status, err.retry_after, hint)
