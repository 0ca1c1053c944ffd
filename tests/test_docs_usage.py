"""The README's Usage examples, run as a person pastes them (in a git project, against the local fake
Messages API): every headless one that names no file of the reader's own must work as written."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import anthropic_env

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDERS = ("~/", "FILE", "tasks.jsonl", "20261122-0130")  # the reader's own files and ids


def usage_lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Usage\n\n```bash\n(.+?)\n```", text, re.DOTALL).group(1)
    return [line.strip() for line in block.splitlines()]


def runnable(line: str) -> bool:
    """Headless (or a subcommand that ends by itself), and naming nothing of the reader's own."""
    words = shlex.split(line, comments=True)
    if not words or "agent" not in words or any(p in line for p in PLACEHOLDERS):
        return False
    after = words[words.index("agent") + 1 :]
    return "-p" in after or after[:1] in (["sessions"], ["mcp"])


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("bash") is None, reason="needs git and bash")
def test_every_headless_usage_example_runs_as_written(tmp_path, fake_anthropic):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("".join(f"line_{n} = {n}\n" for n in range(1, 60)))
    (project / "build.log").write_text("error: the build failed\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "agent").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_cli.cli "$@"\n')
    (shims / "agent").chmod(0o755)
    env = anthropic_env(project, fake_anthropic)
    env.update(PATH=f"{shims}:{env['PATH']}", PYTHONPATH=str(ROOT))
    examples = [line for line in usage_lines() if runnable(line)]
    assert len(examples) >= 15, examples
    for line in examples:
        command = shlex.join(shlex.split(line, comments=True))
        if line.startswith("cat "):  # the one with a pipe: as the shell reads it
            command = line.split("#", 1)[0]
        out = subprocess.run(
            ["bash", "-c", command],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert out.returncode == 0, f"{line}\n{out.stdout}\n{out.stderr}"
