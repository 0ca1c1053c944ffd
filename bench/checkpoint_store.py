"""How large the checkpoint store grows, and what keeping it small costs (session/checkpoint_store.py).

    .venv/bin/python bench/checkpoint_store.py [--snapshots 40] [--file-mb 4] [--files 5000] [--json]

Two workspaces, each snapshotted `--snapshots` times through `Checkpoints.snapshot`, as a session does:
- file: one binary file of `--file-mb` MiB of random bytes (zlib cannot shrink it), eight 4 KiB
  blocks of it rewritten before each snapshot;
- tree: `--files` source-like text files in nested folders, 20 of them edited before each snapshot.
Each into two stores in the same run, in turn after each change: `loose` (the packing turned off:
the store as it was before) and `packed` (as shipped: `git repack -a -d -k` in the background
past PACK_AT_LOOSE_BYTES of loose objects).
Prints the store's disk use after the last snapshot, the snapshot call's time (what the person waits
for), the background repacks (how many, the longest), then a fork of the session: the fork's store
(before: a copy of the whole folder, as large as the store), its time (the copy's in brackets), and
a restore of the first and the last snapshot from the fork after the parent was deleted (checked
byte for byte). The snapshots follow each other at once, so a repack runs during the next ones;
`--settle` waits for it before each snapshot instead, as when a prompt outlasts the repack.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.session.checkpoints import SHADOW, Checkpoints  # noqa: E402
from agent_cli.session.recovery import fork  # noqa: E402
from bench._args import count  # noqa: E402

WORDS = "alpha beta gamma delta parse render value index store token result handler".split()


def disk_bytes(folder: Path) -> int:
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


class FileWorkspace:
    def __init__(self, ws: Path, mib: int, rng: random.Random) -> None:
        self.path, self.rng = ws / "data.bin", rng
        self.data = bytearray(rng.randbytes(mib * 2**20))

    def change(self) -> None:
        for _ in range(8):
            at = self.rng.randrange(len(self.data) - 4096)
            self.data[at : at + 4096] = self.rng.randbytes(4096)
        self.path.write_bytes(self.data)

    def digest(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


class TreeWorkspace:
    def __init__(self, ws: Path, files: int, rng: random.Random) -> None:
        self.rng = rng
        self.paths = [ws / f"pkg{i % 50}" / f"mod{i // 50 % 10}" / f"file{i}.py" for i in range(files)]
        for path in self.paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(self._text())

    def _text(self) -> str:
        lines = (f"def {self.rng.choice(WORDS)}_{n}(x):\n    return x + {n}\n" for n in range(40))
        return "".join(lines)

    def change(self) -> None:
        for path in self.rng.sample(self.paths, 20):
            path.write_text(self._text())

    def digest(self) -> str:
        return hashlib.sha256(b"".join(p.read_bytes() for p in self.paths)).hexdigest()


@dataclass
class Arm:
    """One store of the workspace: `loose` (packing off, as before) or `packed` (as shipped)."""

    name: str
    points: Checkpoints
    waits: list[float] = field(default_factory=list)
    taken: list[tuple[str, str]] = field(default_factory=list)  # (commit, the workspace's digest)
    repacks: list[float] = field(default_factory=list)

    def watch_repacks(self) -> None:
        check = self.points.upkeep.pack_if_due

        def timed_check() -> bool:
            start = time.perf_counter()
            did = check()
            if did:
                self.repacks.append(time.perf_counter() - start)
            return did

        self.points.upkeep.pack_if_due = timed_check  # type: ignore[method-assign]


def run(kind: str, args: argparse.Namespace, tmp: Path) -> list[dict[str, object]]:
    """Both stores snapshot the same workspace, one after the other (in turn first), so the
    machine's load falls on both alike."""
    base = tmp / kind
    ws = base / "ws"
    ws.mkdir(parents=True)
    rng = random.Random(7)
    work = FileWorkspace(ws, args.file_mb, rng) if kind == "file" else TreeWorkspace(ws, args.files, rng)
    arms = [Arm(name, Checkpoints(ws, base / name)) for name in ("loose", "packed")]
    arms[0].points.upkeep.pack_at = sys.maxsize
    for arm in arms:
        (base / arm.name).mkdir()
        arm.watch_repacks()
    for number in range(args.snapshots):
        work.change()
        digest = work.digest()
        for arm in arms if number % 2 else arms[::-1]:
            if args.settle:
                arm.points.upkeep.settle()
            start = time.perf_counter()
            snap = arm.points.snapshot("bench")
            arm.waits.append(time.perf_counter() - start)
            arm.taken.append((snap.commit, digest))
    rows = []
    for arm in arms:
        arm.points.upkeep.settle()
        parent, child = base / arm.name, base / f"{arm.name}-fork"
        store = disk_bytes(parent / SHADOW)
        start = time.perf_counter()
        shutil.copytree(parent / SHADOW, base / f"{arm.name}-copied")  # a fork before: the folder copied
        copy_s = time.perf_counter() - start
        start = time.perf_counter()
        fork([{"type": "session_start"}], parent, child, "parent", "child", workspace=ws)
        fork_s = time.perf_counter() - start
        shutil.rmtree(parent)
        copy = Checkpoints(ws, child)
        restores = []
        for commit, digest in (arm.taken[0], arm.taken[-1]):
            start = time.perf_counter()
            copy.restore(commit)
            restores.append(time.perf_counter() - start)
            assert work.digest() == digest, "a restored snapshot differs"
        copy.upkeep.settle()
        rows.append(
            {
                "kind": kind,
                "arm": arm.name,
                "store_mb": store / 1e6,
                "snapshot_median_s": statistics.median(arm.waits),
                "snapshot_max_s": max(arm.waits),
                "snapshots_total_s": sum(arm.waits),
                "repacks": len(arm.repacks),
                "repack_max_s": max(arm.repacks, default=0.0),
                "fork_mb": disk_bytes(child / SHADOW) / 1e6,
                "fork_s": fork_s,
                "copy_s": copy_s,
                "restore_first_s": restores[0],
                "restore_last_s": restores[1],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=count, default=40)
    parser.add_argument("--file-mb", type=count, default=4)
    parser.add_argument("--files", type=count, default=5000)
    parser.add_argument("--settle", action="store_true", help="wait for the repack before each snapshot")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ckpt-bench-") as tmp:
        for kind in ("file", "tree"):
            rows += run(kind, args, Path(tmp))
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    settled = ", each after the repack" if args.settle else ""
    print(f"{args.snapshots} snapshots{settled}; file: {args.file_mb} MiB, tree: {args.files} files\n")
    print(
        "| workspace | store | store MB | snapshot median | max | all | repacks (longest) "
        "| fork MB | fork time (copy) | restore first / last |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['arm']} | {r['store_mb']:.1f} | {r['snapshot_median_s']:.2f} s "
            f"| {r['snapshot_max_s']:.2f} s | {r['snapshots_total_s']:.1f} s "
            f"| {r['repacks']} ({r['repack_max_s']:.2f} s) | {r['fork_mb']:.1f} "
            f"| {r['fork_s']:.2f} s ({r['copy_s']:.2f} s) "
            f"| {r['restore_first_s']:.2f} / {r['restore_last_s']:.2f} s |"
        )


if __name__ == "__main__":
    main()
