"""What looking for planted git directories costs each sandboxed bash call (audit H, finding 1): after
every command the sandbox finds the git directories in the workspace whose config a command planted
(tools/sandbox/gitdirs.py). The first command walks every folder; each one after stats every folder
and reads again only those whose ctime changed.

    .venv/bin/python bench/git_dirs.py [--calls 20] [--json]

Two scratch trees, files in three levels of folders (10 files a folder), each a git repository:
~20,000 files in ~2,000 folders and ~100,000 files in ~10,000 folders. For each: the first walk, then
the look after a command that changed nothing, in CPU time (this process's) and wall time, median of
`--calls`.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.tools.sandbox.gitdirs import GitDirWatch, now  # noqa: E402
from bench._args import count  # noqa: E402

SIZES = (20_000, 100_000)
PER_FOLDER = 10


def tree(root: Path, files: int) -> int:
    """`files` empty files, PER_FOLDER a folder, in a/b/c levels, in a git repository; its folders."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for n in range(files // PER_FOLDER):
        folder = root / f"a{n % 20}" / f"b{(n // 20) % 20}" / f"c{n}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(PER_FOLDER):
            (folder / f"f{f}.py").touch()
    return sum(1 for p in root.rglob("*") if p.is_dir())


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(root: Path, calls: int) -> dict[str, float]:
    watch = GitDirWatch(root)
    start_cpu, start = cpu(), time.perf_counter()
    watch.seed()
    first = {
        "first_cpu_ms": (cpu() - start_cpu) * 1000,
        "first_wall_ms": (time.perf_counter() - start) * 1000,
    }
    cpus, walls = [], []
    for _ in range(calls):
        since = now()
        start_cpu, start = cpu(), time.perf_counter()
        assert watch.planted(since) == []
        cpus.append((cpu() - start_cpu) * 1000)
        walls.append((time.perf_counter() - start) * 1000)
    return {**first, "call_cpu_ms": statistics.median(cpus), "call_wall_ms": statistics.median(walls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=count, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for files in SIZES:
            root = Path(tmp) / f"t{files}"
            folders = tree(root, files)
            rows.append({"files": files, "folders": folders, **measure(root, args.calls)})
    if args.json:
        print(json.dumps(rows))
        return
    print("| files | folders | first walk CPU / wall ms | each call CPU / wall ms |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['files']:,} | {r['folders']:,} | {r['first_cpu_ms']:.0f} / {r['first_wall_ms']:.0f} "
            f"| {r['call_cpu_ms']:.1f} / {r['call_wall_ms']:.1f} |"
        )


if __name__ == "__main__":
    main()
