"""How failures of an OpenAI-compatible endpoint become classified `ProviderError`s.

`classify_openai_status` is the pure core (HTTP status, the error body's type/code, its message and
extra fields); `classify_openai_error` maps any `openai` SDK or HTTP-library exception onto it, the SDK
imported inside only. Context-length errors become `ContextOverflowError` (so T5 runs) in each
server's wording:

- OpenAI: "This model's maximum context length is 128000 tokens. However, your messages resulted in
  130000 tokens." (or "... you requested 140000 tokens (130000 in the messages, 10000 in the completion)");
- vLLM: "... maximum context length is 32768 tokens. However, your request has 40000 input tokens.";
- llama.cpp server: type `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`;
- LiteLLM in front of Anthropic: the Messages API's "prompt is too long: N tokens > M maximum";
- anything else with code `context_length_exceeded` (numbers unknown: the engine estimates them).
"""

from __future__ import annotations

import re
from typing import Any

from agent_cli.core.errors import ProviderError
from agent_cli.llm.anthropic_errors import parse_overflow
from agent_cli.llm.provider_errors import hints, is_transport_error, overflow_error, parse_retry_after, to_int

KEY_HINT = "set OPENAI_API_KEY (or [openai] api_key_env in config) to a key this server accepts"
_HINTS = hints(
    rate_limit="the server is rate-limiting this key; wait a minute, then send the message again",
    overloaded="the server is overloaded; send the message again in a moment",
    server="the server had an internal error; send the message again",
    network="check OPENAI_BASE_URL (or [openai] base_url) and that the server runs",
    bad_request="the server rejected the request; check the model name (--model) and the server's log",
)
_MAX = r"maximum context length is\s*([\d,]+)\s*tokens"
_SPLIT = re.compile(_MAX + r".*?requested\s*[\d,]+\s*tokens\s*\(([\d,]+) in the messages,\s*([\d,]+) in the completion",
                    re.IGNORECASE | re.DOTALL)  # fmt: skip
_PROMPT = re.compile(
    _MAX + r".*?(?:resulted in|requested|request has|you have)\s*([\d,]+)\s*(?:input\s+)?tokens",
    re.IGNORECASE | re.DOTALL,
)
_OUTPUT_TOO_LARGE = re.compile(r"max_(?:completion_)?tokens'? (?:or .*?)?is too large", re.IGNORECASE)
_CONTEXT_WORDS = ("context_length_exceeded", "exceed_context_size", "context length", "context window")


def classify_openai_status(
    status: int, error: dict[str, Any], message: str, retry_after: float | None = None
) -> ProviderError:
    """Classify an error answer (status 200 for an error sent inside the stream)."""
    kind_of = " ".join(str(error.get(k) or "") for k in ("type", "code")).lower()
    overflow = parse_context_overflow(message, error)
    if overflow is not None:
        return overflow_error(message, status, *overflow)
    if status in (401, 403) or "auth" in kind_of or "invalid_api_key" in kind_of:
        return ProviderError("auth", f"the server refused the key: {message}", status, None, KEY_HINT)
    if status == 429 or "rate_limit" in kind_of:
        return ProviderError("rate_limit", message, status, retry_after, _HINTS["rate_limit"])
    if status == 529 or "overloaded" in kind_of:
        return ProviderError("overloaded", message, status, retry_after, _HINTS["overloaded"])
    if status == 408 or "timeout" in kind_of:
        return ProviderError("network", message, status, retry_after, _HINTS["network"])
    if status == 404 or "model_not_found" in kind_of:
        hint = "the server does not serve this model: pass one it lists (GET /v1/models) with --model"
        return ProviderError("bad_request", message, status, None, hint)
    if 400 <= status < 500:
        hint = _HINTS["bad_request"]
        if _OUTPUT_TOO_LARGE.search(message):
            hint = (
                "the model's window is smaller than the agent thinks: set [models.NAME] window and max_output"
            )
        return ProviderError("bad_request", message, status, None, hint)
    if status >= 500 or status == 200:
        return ProviderError("server", message, status, retry_after, _HINTS["server"])
    return ProviderError("other", message, status, retry_after, _HINTS["other"])


def parse_context_overflow(message: str, error: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt tokens, the room for them) from a context-length error; (0, 0) when the numbers are
    not given; None when this is no context-length error."""
    if _OUTPUT_TOO_LARGE.search(message):
        return None  # the prompt fits; max_tokens does not (a bad_request with its own hint)
    if error.get("n_prompt_tokens") is not None and error.get("n_ctx") is not None:
        return to_int(error["n_prompt_tokens"]), to_int(error["n_ctx"])
    match = _SPLIT.search(message)
    if match:
        maximum, prompt, completion = (to_int(g) for g in match.groups())
        return prompt, max(0, maximum - completion)
    match = _PROMPT.search(message)
    if match:
        maximum, tokens = (to_int(g) for g in match.groups())
        return tokens, maximum
    anthropic = parse_overflow(message)
    if anthropic is not None:
        return anthropic
    words = f"{error.get('type') or ''} {error.get('code') or ''} {message}".lower()
    if any(w in words for w in _CONTEXT_WORDS) or "exceeds the available context size" in words:
        return 0, 0
    return None


def classify_openai_error(err: BaseException) -> ProviderError:
    """Any exception from the `openai` SDK (or its HTTP library) as a classified ProviderError."""
    if isinstance(err, ProviderError):
        return err
    import openai

    if isinstance(err, openai.APIStatusError | openai.APIError) and not isinstance(
        err, openai.APIConnectionError
    ):
        body = err.body if isinstance(err.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        message = str(error.get("message") or err.message)
        status = getattr(err, "status_code", 200)
        response = getattr(err, "response", None)
        retry_after = parse_retry_after(response.headers) if response is not None else None
        return classify_openai_status(status, error, message, retry_after)
    if isinstance(err, openai.APIConnectionError) or is_transport_error(err):
        where = getattr(getattr(err, "request", None), "url", None)
        detail = str(err) or type(err).__name__
        place = f" {where}" if where else ""
        return ProviderError("network", f"cannot reach{place}: {detail}", hint=_HINTS["network"])
    return ProviderError("other", f"{type(err).__name__}: {err}", hint=_HINTS["other"])
