"""What we know about models: windows, output limits, prices. Unknown models get a 200k window."""

from __future__ import annotations

from agent_cli.core.types import ModelInfo

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_SUMMARIZER = "claude-haiku-5-5"

_KNOWN: dict[str, ModelInfo] = {
    "claude-sonnet-5-5": ModelInfo("claude-sonnet-5-5", 1_000_000, 128_000, 2.0, 10.0),
    "claude-opus-5-5": ModelInfo("claude-opus-5-5", 1_000_000, 128_000, 5.0, 25.0),
    "claude-haiku-5-5": ModelInfo("claude-haiku-5-5", 1_000_000, 64_000, 1.0, 5.0),
    "claude-opus-4-6": ModelInfo("claude-opus-4-6", 200_000, 64_000, 5.0, 25.0),
    "claude-sonnet-4-5": ModelInfo("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0),
    "claude-haiku-4-5": ModelInfo("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0),
    "scripted": ModelInfo("scripted", 200_000, 32_000, 2.0, 10.0),
}


def known_models() -> tuple[str, ...]:
    return tuple(_KNOWN)


def model_info(name: str, window: int | None = None) -> ModelInfo:
    """Known facts for `name` (prefix match for dated ids); `window` overrides the window."""
    info = _KNOWN.get(name)
    if info is None:
        for known, candidate in _KNOWN.items():
            if name.startswith(known):
                info = ModelInfo(name, *_fields(candidate))
                break
    if info is None:
        info = ModelInfo(name)
    if window:
        info = ModelInfo(info.name, window, *_fields(info)[1:])
    return info


def _fields(info: ModelInfo) -> tuple:
    return (
        info.context_window,
        info.max_output_tokens,
        info.input_price,
        info.output_price,
        info.cache_write_multiplier,
        info.cache_read_multiplier,
        info.cache_min_tokens,
    )


def summarizer_for(model: str) -> str:
    """The cheap model of the same provider."""
    if model.startswith("claude"):
        return DEFAULT_SUMMARIZER
    return model
