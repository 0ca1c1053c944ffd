"""The README's Quick start one-liner, run as a person pastes it (with `python3` and pip stood in by
a shim, so nothing is installed): the agent starts in the person's project, not in its own checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE_PYTHON = """#!/bin/sh
# `python3 -m venv .venv`: a venv whose pip does nothing and whose agent says where it runs
mkdir -p "$3/bin"
printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/pip"
printf '#!/bin/sh\\npwd > "%s"\\n' "$STARTED_IN" > "$3/bin/agent"
chmod +x "$3/bin/pip" "$3/bin/agent"
"""


def quick_start_line() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    return re.search(r"```bash\n(.+?)\n```", section, re.DOTALL).group(1).strip()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_quick_start_one_liner_runs_the_agent_in_the_persons_project(tmp_path):
    line = quick_start_line()
    checkout, project, shims = tmp_path / "agent-checkout", tmp_path / "my project", tmp_path / "bin"
    for folder in (checkout, project, shims):
        folder.mkdir()
    (shims / "python3").write_text(FAKE_PYTHON)
    (shims / "python3").chmod(0o755)
    started_in = tmp_path / "started-in"
    run = line.replace("~/src/your-project", f"'{project}'")
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}", "STARTED_IN": str(started_in)}
    subprocess.run(["bash", "-c", run], cwd=checkout, env=env, check=True, timeout=60)
    assert started_in.read_text().strip() == str(project), f"the agent started in {started_in.read_text()}"
