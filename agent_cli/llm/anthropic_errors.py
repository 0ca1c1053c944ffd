"""How Anthropic API failures become classified `ProviderError`s (which are retried: provider_errors.py).

`classify_status` is the pure core (HTTP status — 200 for an SSE `error` event — plus the API's error
type and message); `classify_error` maps any SDK or HTTP-library exception onto it. The SDK is
imported inside `classify_error` only.
"""

from __future__ import annotations

import re

from agent_cli.core.errors import ProviderError
from agent_cli.llm.provider_errors import hints, is_transport_error, overflow_error, parse_retry_after, to_int

AUTH_HINT = "set ANTHROPIC_API_KEY (export ANTHROPIC_API_KEY=sk-ant-...) or run `agent --demo`"
_HINTS = hints(
    rate_limit="the API is rate-limiting this key; wait a minute, then send the message again",
    overloaded="Anthropic's API is overloaded right now; send the message again in a moment",
    server="the API had an internal error; send the message again (status: https://status.anthropic.com)",
    network="check the network connection and ANTHROPIC_BASE_URL, then send the message again",
    bad_request="the API rejected the request; check the model name (/model) or report this as a bug",
)
_OVERFLOW = re.compile(r"prompt is too long:\s*([\d,]+)\s*tokens?\s*>\s*([\d,]+)", re.IGNORECASE)
_OVERFLOW_SUM = re.compile(
    r"input length and `?max_tokens`? exceed context limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*([\d,]+)",
    re.IGNORECASE,
)


def classify_error(err: BaseException) -> ProviderError:
    """Any exception from the SDK (or its HTTP library) as a classified ProviderError."""
    if isinstance(err, ProviderError):
        return err
    import anthropic

    if isinstance(err, anthropic.APIStatusError):
        body = err.body if isinstance(err.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        error_type = err.type or error.get("type") or ""
        message = err.api_message or error.get("message") or str(err)
        retry_after = parse_retry_after(err.response.headers) if err.status_code != 200 else None
        return classify_status(err.status_code, str(error_type), str(message), retry_after)
    if isinstance(err, anthropic.APIConnectionError) or is_transport_error(err):
        detail = str(err) or type(err).__name__
        return ProviderError("network", f"cannot reach the Anthropic API: {detail}", hint=_HINTS["network"])
    return ProviderError("other", f"{type(err).__name__}: {err}", hint=_HINTS["other"])


def classify_status(
    status: int, error_type: str, message: str, retry_after: float | None = None
) -> ProviderError:
    """Classify an API error by HTTP status (200 for an SSE `error` event) and error type."""
    overflow = parse_overflow(message)
    if overflow is not None and (status in (400, 413, 200) or error_type == "invalid_request_error"):
        return overflow_error(message, status, *overflow)
    if status in (401, 403) or error_type in ("authentication_error", "permission_error"):
        return ProviderError("auth", f"the API refused the key: {message}", status, None, AUTH_HINT)
    if status == 429 or error_type == "rate_limit_error":
        return ProviderError("rate_limit", message, status, retry_after, _HINTS["rate_limit"])
    if status == 529 or error_type == "overloaded_error":
        return ProviderError("overloaded", message, status, retry_after, _HINTS["overloaded"])
    if status in (408,) or error_type == "timeout_error":
        return ProviderError("network", message, status, retry_after, _HINTS["network"])
    if 400 <= status < 500 or error_type in ("invalid_request_error", "not_found_error", "request_too_large"):
        return ProviderError("bad_request", message, status, None, _HINTS["bad_request"])
    if status >= 500 or error_type == "api_error":
        return ProviderError("server", message, status, retry_after, _HINTS["server"])
    return ProviderError("other", message, status, retry_after, _HINTS["other"])


def parse_overflow(message: str) -> tuple[int, int] | None:
    """(N, M) from "prompt is too long: N tokens > M maximum", or from "input length and `max_tokens`
    exceed context limit: N + K > M" as (N, M - K): the prompt against the room left for it."""
    match = _OVERFLOW.search(message)
    if match:
        return to_int(match.group(1)), to_int(match.group(2))
    match = _OVERFLOW_SUM.search(message)
    if match:
        tokens, output, limit = (to_int(g) for g in match.groups())
        return tokens, max(0, limit - output)
    return None
