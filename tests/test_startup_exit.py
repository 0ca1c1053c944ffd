"""`agent -p` start-up and exit: the SDK is warmed only when the run may use it, and a headless run
ends right after its answer with everything it printed and its exit code intact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_cli.cli.main import _headless_run, _may_use_sdk

PROBE = """
import sys
from agent_cli.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print("SDK-LOADED" if "anthropic" in sys.modules else "SDK-NOT-LOADED")
"""


def _env(workspace: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_CONFIG_HOME"] = str(workspace / ".no-config")
    return env


def test_which_runs_warm_the_sdk() -> None:
    assert _headless_run(["-p", "hi"]) and _headless_run(["--print=hi"]) and not _headless_run(["--demo"])
    assert _may_use_sdk(["-p", "hi"]) and _may_use_sdk(["-p", "hi", "--provider", "anthropic"])
    for flags in (["--demo"], ["--script", "s.yaml"], ["--provider", "openai"], ["--provider=scripted"]):
        assert not _may_use_sdk(["-p", "hi", *flags]), flags


def test_the_demo_never_loads_the_anthropic_sdk(workspace: Path) -> None:
    code = PROBE.format(argv=["--demo", "-p", "hi", "--permission-mode", "yolo"])
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=workspace, env=_env(workspace), capture_output=True, text=True
    )
    assert out.stdout.strip().endswith("SDK-NOT-LOADED"), out.stdout[-500:] + out.stderr[-500:]


def test_a_headless_run_exits_with_its_output_and_code_intact(workspace: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "--demo", "-p", "hi", "--output-format", "json"],
        cwd=workspace,
        env=_env(workspace),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-500:]
    data = json.loads(out.stdout)  # the whole JSON object made it out before the process ended
    assert data["is_error"] is False and data["result"]
    log = next((workspace / ".agent" / "sessions").glob("*/events.jsonl"))
    assert json.loads(log.read_text().splitlines()[-1])["type"] == "turn_end"  # the log is complete
    failed = subprocess.run(
        [sys.executable, "-m", "agent_cli.cli", "-p", "hi", "--continue"],
        cwd=workspace / ".agent",  # no earlier session here
        env=_env(workspace),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert failed.returncode == 2 and "--continue" in failed.stderr


def test_the_collector_is_paused_only_while_the_sdk_is_imported() -> None:
    """The warm-up pauses the cyclic collector (its passes over the SDK's new classes are ~20% of
    the import) and turns it back on, with what was built frozen, once the import is done."""
    code = (
        "import gc\nfrom agent_cli.cli.main import _warm_sdk\n"
        "assert gc.isenabled()\nthread = _warm_sdk()\npaused = not gc.isenabled()\nthread.join(120)\n"
        "import sys\nprint(paused, gc.isenabled(), 'anthropic' in sys.modules, gc.get_freeze_count() > 10_000)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True"]
