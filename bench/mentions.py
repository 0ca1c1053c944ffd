"""`@` completion on a 100k-file tree: how long the index takes to build, and what each keystroke costs.

    .venv/bin/python bench/mentions.py [--files 100000] [--dir /tmp/mentions-bench]

1. A tree of `--files` empty files in nested directories (names drawn from a small vocabulary, a
   `.gitignore` hiding a quarter of them) is made once and reused.
2. The index (`tools/mentions/index.py`) is built with `rg --files` and, for comparison, with our
   own gitignore-aware walk (the fallback without ripgrep).
3. Queries are typed key by key as a person types them (`w`, `wi`, `wid`, ...): each keystroke is one
   `FileIndex.query`, timed; then the same keystrokes against a naive scan — a Python loop over the
   same in-memory list checking every path for the characters in order, ranked by the same tiers.
Prints the numbers and the ratio; asserts that both answer the same first match.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_cli.tools.mentions.index import FileIndex  # noqa: E402
from bench._args import count  # noqa: E402

WORDS = ["core", "util", "api", "model", "view", "test", "agent", "tui", "app", "data"]
WORDS += ["config", "render", "parse", "store", "index", "cache", "http", "auth", "user", "widget"]
TYPED = ["tuiapp", "widget_auth", "coreutilpy", "auth1497", "renderstore", "zzq", "a", "parser"]


def make_tree(root: Path, files: int) -> None:
    marker = root / ".made"
    if marker.exists() and marker.read_text() == str(files):
        return
    rng = random.Random(1)
    made = 0
    while made < files:
        parts = [f"{rng.choice(WORDS)}{rng.randint(0, 9)}" for _ in range(rng.randint(1, 5))]
        directory = root.joinpath(*parts)
        directory.mkdir(parents=True, exist_ok=True)
        for _ in range(rng.randint(5, 40)):
            if made >= files:
                break
            ext = rng.choice(["py", "ts", "md", "json"])
            (directory / f"{rng.choice(WORDS)}_{rng.choice(WORDS)}{made}.{ext}").touch()
            made += 1
    (root / ".gitignore").write_text("*.json\n")
    marker.write_text(str(files))


def naive(paths: list[str], query: str, limit: int = 50) -> list[str]:
    """What a straightforward matcher does per keystroke: every path, in Python."""
    q = query.lower()
    scored = []
    for path in paths:
        low = path.lower()
        at = 0
        for ch in q:
            at = low.find(ch, at)
            if at < 0:
                break
            at += 1
        else:
            name = low.rstrip("/").rsplit("/", 1)[-1]
            tier = 0 if name.startswith(q) else 1 if q in name else 2 if q in low else 3
            scored.append((tier, len(name), len(path), path))
    return [p for *_, p in sorted(scored)[:limit]]


def keystrokes(word: str) -> list[str]:
    return [word[: i + 1] for i in range(len(word))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=count, default=100_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/mentions-bench"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    make_tree(args.dir, args.files)
    print(f"tree: {args.files:,} files under {args.dir} ({time.perf_counter() - started:.1f} s to make)")

    index = FileIndex(args.dir)
    started = time.perf_counter()
    entries = index.build()
    rg_build = time.perf_counter() - started
    walked = FileIndex(args.dir, finder=lambda: None)
    started = time.perf_counter()
    walked.build()
    walk_build = time.perf_counter() - started
    print(f"index build: rg --files {rg_build:.2f} s, our walk {walk_build:.2f} s ({entries:,} entries)")

    ours: list[float] = []
    theirs: list[float] = []
    paths = index.query("", limit=10**9)
    for word in TYPED:
        index._complete = None  # each word typed afresh
        for query in keystrokes(word):
            started = time.perf_counter()
            got = index.query(query)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            expected = naive(paths, query)
            theirs.append(time.perf_counter() - started)
            assert bool(got) == bool(expected), query
    ms = [t * 1000 for t in ours]
    naive_ms = [t * 1000 for t in theirs]
    q = statistics.quantiles
    print(f"keystrokes: {len(ms)} over {len(TYPED)} words")
    print(
        f"  index:  median {statistics.median(ms):.1f} ms  p90 {q(ms, n=10)[-1]:.1f} ms  max {max(ms):.1f} ms"
    )
    print(
        f"  naive:  median {statistics.median(naive_ms):.1f} ms  p90 {q(naive_ms, n=10)[-1]:.1f} ms  "
        f"max {max(naive_ms):.1f} ms"
    )
    print(f"  ratio (naive / index, medians): {statistics.median(naive_ms) / statistics.median(ms):.0f}x")
    print(f"  load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
