"""The unmanaged pass a bench script counts blind edits against (replay/fidelity.py `Baseline`),
made once per session and budget in each process: every setting and every policy a script replays
on one session shares it (replay would otherwise run it again for each)."""

from __future__ import annotations

import functools
from pathlib import Path

from agent_cli.replay.driver import baseline
from agent_cli.replay.fidelity import Baseline


@functools.cache
def baseline_of(path: Path, budget_tokens: int | None = None) -> Baseline:
    return baseline(path, budget_tokens=budget_tokens)
