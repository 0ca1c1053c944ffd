"""Config: the [openai] endpoint table and [models."NAME"] registry overrides, per layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.core.errors import ConfigError
from agent_cli.llm.models import registry
from agent_cli.settings.config import load_config


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_openai_table_and_model_tables_merge_across_layers(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    _write(
        home / "agent" / "config.toml",
        'provider = "openai"\n[openai]\nbase_url = "http://gpu-box:8000/v1"\napi_key_env = "VLLM_KEY"\n'
        '[models."qwen3-coder"]\nwindow = 131_072\ninput_price = 0.0\n',
    )
    _write(
        ws / ".agent" / "config.toml",
        '[openai]\nbase_url = "http://127.0.0.1:8000/v1"\n[models."qwen3-coder"]\nmax_output = 8192\n',
    )
    config = load_config(ws, env={"XDG_CONFIG_HOME": str(home)})
    assert config.provider == "openai"
    # the endpoint is the person's: a workspace's [openai] is ignored (settings/layers.py)
    assert (config.openai.base_url, config.openai.api_key_env) == ("http://gpu-box:8000/v1", "VLLM_KEY")
    assert config.warnings and "openai.base_url" in config.warnings[0]
    assert config.models == {"qwen3-coder": {"window": 131_072, "input_price": 0.0, "max_output": 8192}}
    info = registry(config.models).info("qwen3-coder")
    assert (info.context_window, info.max_output_tokens, info.input_price) == (131_072, 8192, 0.0)


def test_the_environment_base_url_wins_over_the_files(tmp_path):
    _write(tmp_path / "home" / "agent" / "config.toml", '[openai]\nbase_url = "http://from-file/v1"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "home"), "OPENAI_BASE_URL": "http://from-env/v1"}
    assert load_config(tmp_path, env=env).openai.base_url == "http://from-env/v1"
    assert load_config(tmp_path, env={"XDG_CONFIG_HOME": "/x"}).openai.api_key_env == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[openai]\napi_key = "sk-secret"\n', "unknown setting openai.api_key"),
        ('[models."m"]\nwindow = "huge"\n', "models.m.window"),
        ('[models."m"]\nspeed = 3\n', "unknown setting .*models.m.speed"),
        ('openai = "x"\n', r"\[openai\]"),
        ("[context]\nhits_prior_weight = 0\n", "context.hits_prior_weight must be above 0"),
        (
            "[context]\nmicro_cap_tokens = 500\n",
            "micro_cap_tokens must be 0 .off. or at least 20000, got 500",
        ),
        ("[context]\nmicro_cap_tokens = -1\n", "micro_cap_tokens must be 0"),
        (
            "[context]\nmiss_penalty_fraction = -0.5\n",
            "context.miss_penalty_fraction must be a finite number",
        ),
        ("[context]\nmiss_penalty_fraction = inf\n", "context.miss_penalty_fraction must be a finite number"),
        ("[context]\nmiss_penalty_fraction = nan\n", "context.miss_penalty_fraction must be a finite number"),
        ('[context]\npolicy = "bogus"\n', "context.policy 'bogus': use one of default, "),
        ('[context]\npolicy = "oracle"\n', "context.policy 'oracle'"),  # a replay-only policy
        ('[context]\ncache_ttl = "7d"\n', "context.cache_ttl '7d': use one of 5m, 1h"),
        ('[context]\ntool_trace = "zzz"\n', "context.tool_trace 'zzz': use one of keep, digest"),
        # the old absolute price is gone: a clear error, not a silent default
        ("[context]\nmiss_penalty_tokens = 60000\n", "unknown setting context.miss_penalty_tokens"),
    ],
)
def test_bad_tables_are_config_errors_naming_the_setting(tmp_path, text, message):
    _write(tmp_path / "home" / "agent" / "config.toml", text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "home")})


def test_a_workspace_describes_only_the_window_and_output_of_a_model_we_do_not_know(tmp_path):
    """A repository may say how big an unknown model's window and answers are (it would not work
    otherwise); nothing of a model models.toml knows, whatever the spelling of its name, and never
    which model summarizes, whose it is, its prices or its caching. Each refused key is named."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    _write(
        ws / ".agent" / "config.toml",
        '[models."qwen3-coder"]\nwindow = 65_536\nmax_output = 8192\ninput_price = 9.0\nsummarizer = "x"\n'
        '[models."claude-sonnet-5-5"]\nwindow = 100_000\n'
        '[models."anthropic/claude-opus-5-5-20260101"]\ninput-price = 0.0\n'
        '[models."my-model"]\nprovider = "openai"\nprompt_cache = false\n',
    )
    config = load_config(ws, env={"XDG_CONFIG_HOME": str(home)})
    assert config.models == {"qwen3-coder": {"window": 65_536, "max_output": 8192}}
    assert config.warnings == (
        ".agent/config.toml: ignored keys models.qwen3-coder.input_price, models.qwen3-coder.summarizer, "
        "models.claude-sonnet-5-5.window, models.anthropic/claude-opus-5-5-20260101.input-price, "
        "models.my-model.provider, models.my-model.prompt_cache (only your own ~/.config/agent/config.toml, "
        "the environment or flags can set them)",
    )
    models = registry(config.models)
    assert models.info("claude-sonnet-5-5").context_window == 1_000_000
    assert models.info("claude-opus-5-5").input_price == 5.0
    assert models.warning("my-model") is not None  # a table left empty does not describe it
    # the person's own file sets any of them
    _write(home / "agent" / "config.toml", (ws / ".agent" / "config.toml").read_text())
    (ws / ".agent" / "config.toml").unlink()
    config = load_config(ws, env={"XDG_CONFIG_HOME": str(home)})
    assert config.warnings == ()
    assert registry(config.models).info("claude-sonnet-5-5").context_window == 100_000
    assert registry(config.models).summarizer_for("qwen3-coder") == "x"
