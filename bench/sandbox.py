"""What the sandbox costs each bash call (issue 18): bash `true` through the bash tool, unconfined and in
the sandbox, interleaved so the machine's load hits both alike.

    .venv/bin/python bench/sandbox.py [--calls 200] [--json]

Three ways, each a full `BashTool.run` (launch decision, protected-path layout, seccomp fd, spawn,
wait, set-aside check):
- unconfined: `/bin/bash -c true` (sandbox mode "off");
- bwrap as before issue 18: the same bubblewrap mounts without the user namespace, the capability
  drop, the protected-path binds and the seccomp filter;
- sandbox: what bash gets now, in a git repository (so `.git` and its protected paths are bound).
Prints the median and 90th percentile per call, and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.store import MemoryStore  # noqa: E402
from agent_cli.tools import bash as bash_tool  # noqa: E402
from agent_cli.tools.base import ToolContext  # noqa: E402
from agent_cli.tools.bash import BashTool  # noqa: E402
from agent_cli.tools.sandbox.bwrap import Launch, Sandbox, SandboxPolicy  # noqa: E402
from bench._args import count  # noqa: E402


def context(ws: Path, mode: str) -> ToolContext:
    sandbox = Sandbox(SandboxPolicy(mode=mode), ws)
    return ToolContext(ws, store=MemoryStore(), sandbox=sandbox, permission_mode=lambda: "yolo")


def before_issue_18(ws: Path) -> tuple[str, ...]:
    """The argv bash got before this issue (agent_cli/tools/sandbox.py at af2c0c6): the same mounts,
    none of the new hardening."""
    bwrap = Sandbox(SandboxPolicy(), ws).probe().path
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/"]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(ws), str(ws)]
    for name in (".agent", ".git/hooks"):
        if (ws / name).exists():
            argv += ["--ro-bind", str(ws / name), str(ws / name)]
    return (*argv, "--chdir", str(ws))


async def one(ctx: ToolContext) -> float:
    start = time.perf_counter()
    result = await BashTool().run({"command": "true"}, ctx)
    elapsed = time.perf_counter() - start
    assert not result.is_error, result.output
    return elapsed


async def bench(calls: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="agent-bench-") as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
        ways = {"unconfined": context(ws, "off"), "sandbox": context(ws, "auto")}
        if not ways["sandbox"].sandbox.status().available:  # type: ignore[union-attr]
            raise SystemExit(f"no sandbox here: {ways['sandbox'].sandbox.status().problem}")  # type: ignore[union-attr]
        old = before_issue_18(ws)
        old_ctx = context(ws, "auto")
        original = bash_tool.launch_for

        async def old_way() -> float:
            bash_tool.launch_for = lambda ctx, input: Launch(old, confined=True)
            try:
                return await one(old_ctx)
            finally:
                bash_tool.launch_for = original

        times: dict[str, list[float]] = {"unconfined": [], "before issue 18": [], "sandbox": []}
        for _ in range(5):  # warm-up: the probe, the seccomp program, the page cache
            await one(ways["sandbox"])
            await one(ways["unconfined"])
            await old_way()
        for _ in range(calls):
            times["unconfined"].append(await one(ways["unconfined"]))
            times["before issue 18"].append(await old_way())
            times["sandbox"].append(await one(ways["sandbox"]))
    med = {k: statistics.median(v) for k, v in times.items()}
    p90 = {k: statistics.quantiles(v, n=10)[-1] for k, v in times.items()}
    return {
        "calls": calls,
        "median_ms": {k: round(v * 1000, 2) for k, v in med.items()},
        "p90_ms": {k: round(v * 1000, 2) for k, v in p90.items()},
        "ratio_sandbox_vs_unconfined": round(med["sandbox"] / med["unconfined"], 2),
        "ratio_sandbox_vs_before": round(med["sandbox"] / med["before issue 18"], 2),
        "overhead_ms": round((med["sandbox"] - med["unconfined"]) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=count, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(bench(args.calls))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"bash `true`, {result['calls']} calls each, interleaved")
    print("| way | median ms | p90 ms |\n|---|---:|---:|")
    for way, median in result["median_ms"].items():  # type: ignore[union-attr]
        print(f"| {way} | {median:.2f} | {result['p90_ms'][way]:.2f} |")  # type: ignore[index]
    print(
        f"sandbox / unconfined: {result['ratio_sandbox_vs_unconfined']}x "
        f"(+{result['overhead_ms']} ms a call); sandbox / before issue 18: {result['ratio_sandbox_vs_before']}x"
    )


if __name__ == "__main__":
    main()
