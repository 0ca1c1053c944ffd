"""What checkpoints cost on a tree of a few thousand files: the snapshot before a prompt's first change,
the end-of-turn snapshot (a code rewind tells the agent's changes from the person's by it), and a code
rewind over several prompts, with the end snapshots (only the agent's paths) and without (every path,
as a log written before end snapshots rewinds).

    .venv/bin/python bench/checkpoints.py [--files 5000] [--runs 5] [--turns 10]

Prints medians in ms: wall time, and CPU time (this process and its git children: steadier when
other work shares the machine). Each turn changes 5 files and makes 1; the person edits 1 file
between turns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.session.checkpoints import Checkpoints  # noqa: E402
from agent_cli.session.ownership import NOW, Span  # noqa: E402
from bench._args import count  # noqa: E402

LINE = "def function_{n}(argument):  # a line of a source file, about as long as one\n"
T = TypeVar("T")
Took = dict[str, list[tuple[float, float]]]  # what -> (wall ms, cpu ms) per time


def _tree(ws: Path, files: int) -> list[Path]:
    paths = []
    for n in range(files):
        path = ws / f"pkg{n % 50:02d}" / f"sub{n % 7}" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(LINE.format(n=i) for i in range(40)))  # ~3 kB
        paths.append(path)
    return paths


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(took: Took, what: str, work: Callable[[], T]) -> T:
    wall, cpu = time.perf_counter(), _cpu()
    out = work()
    took.setdefault(what, []).append(((time.perf_counter() - wall) * 1000, (_cpu() - cpu) * 1000))
    return out


def _session(files: int, turns: int, took: Took) -> None:
    """One session: `turns` prompts, each a start snapshot, the agent's writes, an end snapshot (and a
    second one, nothing changed since), then the person's edit; then a code rewind to prompt 1."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        paths = _tree(ws, files)
        cp = Checkpoints(ws, Path(tmp) / "session")
        spans: list[Span] = []
        for turn in range(turns):
            start = _timed(took, "first" if turn == 0 else "start", lambda: cp.snapshot("before")).commit
            if spans:  # the person's time between the last turn and this one
                spans.append(Span(spans[-1].end, start, False))
            for k in range(5):  # the agent's turn: 5 files changed, 1 made
                paths[(turn * 5 + k) * 37 % files].write_text(f"# turn {turn}\n")
            (ws / f"agent_{turn}.txt").write_text("made by the agent\n")
            end = _timed(took, "end_changed", lambda: cp.snapshot("after")).commit
            _timed(took, "end_same", lambda: cp.snapshot("after"))  # had the turn changed nothing
            spans.append(Span(start, end, True))
            paths[(turn * 11 + 3) % files].write_text("the person's edit\n")
        spans.append(Span(spans[-1].end, NOW, False))
        undo = _timed(took, "rewind_owned", lambda: cp.restore(spans[0].start, spans)).undo
        cp.restore(undo)  # back as it was, for the same rewind as a log without end snapshots
        _timed(took, "rewind_whole", lambda: cp.restore(spans[0].start))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=count, default=5000)
    parser.add_argument("--runs", type=count, default=5)
    parser.add_argument("--turns", type=count, default=10)
    args = parser.parse_args()
    took: Took = {}
    for _ in range(args.runs):
        _session(args.files, args.turns, took)
    rows = [
        ("first snapshot of the session (shadow repository made, every file hashed)", "first"),
        ("snapshot before a prompt's first change", "start"),
        ("end-of-turn snapshot, 5 files changed and 1 made in the turn", "end_changed"),
        ("end-of-turn snapshot, nothing changed since the start", "end_same"),
        (f"code rewind over {args.turns} prompts, end snapshots logged (the agent's paths)", "rewind_owned"),
        (f"code rewind over {args.turns} prompts, no end snapshots (every path)", "rewind_whole"),
    ]
    print(f"{args.files} files, {args.runs} sessions of {args.turns} prompts; medians (n):")
    print(f"  {'wall':>8}  {'cpu':>8}")
    for label, key in rows:
        samples = took[key]
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        print(f"  {wall:8.1f}  {cpu:8.1f}  {label} ({len(samples)})")


if __name__ == "__main__":
    main()
