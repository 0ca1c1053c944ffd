"""Prompt templates are files: `prompts/<name>.md`, shipped in the wheel as `agent_cli/prompts/`.

In an editable checkout they live in `<repo>/prompts/`, next to the package directory.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from agent_cli.core.errors import ConfigError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(/[A-Za-z0-9][A-Za-z0-9_-]*)?$")  # `agents/explore`


def prompt_dirs() -> tuple[Path, ...]:
    """Where prompts are looked for, in order: inside the package (wheel), then the repository."""
    here = Path(__file__).resolve()
    return (here.parents[1] / "prompts", here.parents[2] / "prompts")


def load_prompt(name: str) -> str:
    """The text of `prompts/<name>.md` (read once, then cached). Raises ConfigError naming the paths."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"invalid prompt name {name!r}: letters, digits, '_' and '-' (one folder level)")
    return _load(name, prompt_dirs())


@lru_cache(maxsize=64)
def _load(name: str, directories: tuple[Path, ...]) -> str:
    tried = []
    for directory in directories:
        path = directory / f"{name}.md"
        tried.append(str(path))
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ConfigError(f"cannot read the prompt {path}: {exc.strerror or exc}") from exc
    error = ConfigError(f"prompt {name!r} not found; looked for " + " and ".join(tried))
    error.hint = (
        "reinstall the package (the wheel ships agent_cli/prompts/) or restore the prompts/ directory"
    )
    raise error
