"""The model registry: models.toml, lookups by dated or routed ids, user overrides, the unknown default."""

from __future__ import annotations

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.core.types import Usage
from agent_cli.llm.models import NO_CACHE_MIN_TOKENS, builtin_registry, known_models, registry


def test_the_shipped_registry_knows_the_current_models():
    reg = builtin_registry()
    sonnet = reg.info("claude-sonnet-5-5")
    assert (sonnet.context_window, sonnet.max_output_tokens, sonnet.input_price) == (1_000_000, 128_000, 2.0)
    assert reg.lookup("claude-sonnet-5-5").provider == "anthropic"
    assert reg.summarizer_for("claude-opus-5-5") == "claude-haiku-5-5"
    assert reg.summarizer_for("claude-opus-5-5", "anthropic") == "claude-haiku-5-5"
    assert reg.summarizer_for("claude-opus-5-5", "openai") == "claude-opus-5-5"  # a gateway's model
    assert reg.summarizer_for("gpt-5", "openai") == "gpt-5-mini"
    assert reg.lookup("gpt-5").provider == "openai" and reg.info("gpt-5").cache_write_multiplier == 1.0
    assert "claude-sonnet-5-5" in known_models() and "gpt-4.1" in known_models()


def test_dated_and_routed_ids_get_their_models_facts_but_other_suffixes_do_not():
    reg = builtin_registry()
    assert reg.info("claude-sonnet-4-5-20250929").input_price == 3.0
    assert reg.info("gpt-4o-2024-08-06").context_window == 128_000
    assert reg.info("anthropic/claude-sonnet-5-5").context_window == 1_000_000
    assert reg.info("anthropic/claude-sonnet-5-5").name == "anthropic/claude-sonnet-5-5"
    assert not reg.lookup("gpt-4o-mini").known  # a different model, not gpt-4o with a date


def test_an_unknown_model_gets_the_stated_default_and_a_warning_saying_how_to_configure_it():
    reg = builtin_registry()
    info = reg.info("qwen3-coder")
    assert (info.context_window, info.max_output_tokens) == (200_000, 32_000)
    warning = reg.warning("qwen3-coder")
    assert warning and "200,000-token window" in warning and '[models."qwen3-coder"]' in warning
    assert reg.warning("claude-sonnet-5-5") is None
    assert reg.summarizer_for("qwen3-coder") == "qwen3-coder"


def test_user_tables_add_models_and_override_single_keys():
    reg = registry(
        {
            "qwen3-coder": {"window": 262_144, "max_output": 32_768, "input_price": 0, "output_price": 0},
            "claude-sonnet-5-5": {"input_price": 1.5},
            "local": {"prompt_cache": False},
        }
    )
    qwen = reg.info("qwen3-coder")
    assert (qwen.context_window, qwen.max_output_tokens) == (262_144, 32_768)
    assert qwen.cost(Usage(1000, 1000, 0, 0)) == 0 and reg.warning("qwen3-coder") is None
    sonnet = reg.info("claude-sonnet-5-5")
    assert sonnet.input_price == 1.5 and sonnet.context_window == 1_000_000  # the rest kept
    assert reg.info("local").cache_min_tokens == NO_CACHE_MIN_TOKENS
    assert builtin_registry().info("claude-sonnet-5-5").input_price == 2.0  # the shipped one unchanged


def test_a_configured_window_is_used_and_said_in_the_warning():
    reg = builtin_registry()
    assert reg.info("qwen3", window=32_768).context_window == 32_768
    assert "32,768-token window" in (reg.warning("qwen3", 32_768) or "")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"windw": 1000}, "unknown setting models.m.windw"),
        ({"window": "big"}, "models.m.window: 'big'"),
        ({"window": 0}, "models.m.window: 0"),
        ({"input_price": -1}, "models.m.input_price"),
        ({"prompt_cache": "yes"}, "models.m.prompt_cache"),
        ("fast", "models.m must be a table"),
    ],
)
def test_a_bad_user_table_is_a_config_error_naming_it(table, message):
    with pytest.raises(ConfigError, match=message):
        registry({"m": table})


def test_a_cache_write_kept_an_hour_costs_twice_the_input_price():
    from agent_cli.core.types import ModelInfo

    info = ModelInfo("m", input_price=1.0, output_price=0.0)  # USD per million
    api = {"input_tokens": 0, "cache_creation_input_tokens": 1_000_000, "cache_read_input_tokens": 0,
           "cache_creation": {"ephemeral_5m_input_tokens": 400_000, "ephemeral_1h_input_tokens": 600_000}}  # fmt: skip
    usage = Usage.from_json(api)
    assert usage.cache_creation_1h_input_tokens == 600_000
    assert info.cost(usage) == pytest.approx(0.4 * 1.25 + 0.6 * 2.0)
    assert Usage.from_json(usage.to_json()) == usage  # our log keeps the split
    assert (usage + usage).cache_creation_1h_input_tokens == 1_200_000
    assert "cache_creation_1h_input_tokens" not in Usage(1, 2, 3, 4).to_json()  # old logs unchanged


@pytest.mark.parametrize("junk", ["str", [None], {"x": 1}, True, -3, float("nan"), float("inf"), 1e300])
def test_usage_that_is_not_a_count_counts_nothing_instead_of_raising(junk):
    usage = Usage.from_json({"input_tokens": junk, "output_tokens": 7, "cache_creation_input_tokens": junk})
    assert usage == Usage(0, 7, 0, 0)
    assert Usage.from_json(junk) == Usage()  # not a mapping at all
