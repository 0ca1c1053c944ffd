"""How large the checkpoint store grows, and what keeping it small costs (session/checkpoint_store.py).

    .venv/bin/python bench/checkpoint_store.py [--snapshots 40] [--file-mb 4] [--files 5000] [--json]

Two workspaces, each snapshotted `--snapshots` times through `Checkpoints.snapshot`, as a session does:
- file: one binary file of `--file-mb` MiB of random bytes (zlib cannot shrink it), eight 4 KiB
  blocks of it rewritten before each snapshot;
- tree: `--files` source-like text files in nested folders, 20 of them edited before each snapshot.
Each twice in the same run: `loose` (the packing turned off: the store as it was before) and `packed`
(as shipped: `git repack -a -d -k` in the background past PACK_AT_LOOSE_BYTES of loose objects).
Prints the store's disk use after the last snapshot, the snapshot call's time (what the person waits
for), the background repacks (how many, the longest), then a fork of the session: the fork's store
(before: a copy of the whole folder), its time, and a restore of the first and the last snapshot
from the fork after the parent was deleted (checked byte for byte).
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


def run(kind: str, packed: bool, args: argparse.Namespace, tmp: Path) -> dict[str, object]:
    base = tmp / f"{kind}-{'packed' if packed else 'loose'}"
    ws, parent, child = base / "ws", base / "s1", base / "s2"
    ws.mkdir(parents=True)
    parent.mkdir()
    rng = random.Random(7)
    work = FileWorkspace(ws, args.file_mb, rng) if kind == "file" else TreeWorkspace(ws, args.files, rng)
    points = Checkpoints(ws, parent)
    if not packed:
        points.upkeep.pack_at = sys.maxsize
    repacks: list[float] = []
    check = points.upkeep.pack_if_due

    def timed_check() -> bool:
        start = time.perf_counter()
        did = check()
        if did:
            repacks.append(time.perf_counter() - start)
        return did

    points.upkeep.pack_if_due = timed_check  # type: ignore[method-assign]
    waits, taken = [], []
    for _ in range(args.snapshots):
        work.change()
        start = time.perf_counter()
        snap = points.snapshot("bench")
        waits.append(time.perf_counter() - start)
        taken.append((snap.commit, work.digest()))
    points.upkeep.settle()
    store = disk_bytes(parent / SHADOW)
    start = time.perf_counter()
    fork([{"type": "session_start"}], parent, child, "parent", "child", workspace=ws)
    fork_s = time.perf_counter() - start
    shutil.rmtree(parent)
    copy = Checkpoints(ws, child)
    restores = []
    for commit, digest in (taken[0], taken[-1]):
        start = time.perf_counter()
        copy.restore(commit)
        restores.append(time.perf_counter() - start)
        assert work.digest() == digest, "a restored snapshot differs"
    copy.upkeep.settle()
    return {
        "kind": kind,
        "arm": "packed" if packed else "loose",
        "store_mb": store / 1e6,
        "snapshot_median_s": statistics.median(waits),
        "snapshot_max_s": max(waits),
        "snapshots_total_s": sum(waits),
        "repacks": len(repacks),
        "repack_max_s": max(repacks, default=0.0),
        "fork_mb": disk_bytes(child / SHADOW) / 1e6,
        "fork_s": fork_s,
        "restore_first_s": restores[0],
        "restore_last_s": restores[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=count, default=40)
    parser.add_argument("--file-mb", type=count, default=4)
    parser.add_argument("--files", type=count, default=5000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ckpt-bench-") as tmp:
        for kind in ("file", "tree"):
            for packed in (False, True):
                rows.append(run(kind, packed, args, Path(tmp)))
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{args.snapshots} snapshots; file: {args.file_mb} MiB, tree: {args.files} files\n")
    print(
        "| workspace | store | store MB | snapshot median | max | all | repacks (longest) "
        "| fork MB | fork time | restore first / last |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['arm']} | {r['store_mb']:.1f} | {r['snapshot_median_s']:.2f} s "
            f"| {r['snapshot_max_s']:.2f} s | {r['snapshots_total_s']:.1f} s "
            f"| {r['repacks']} ({r['repack_max_s']:.2f} s) | {r['fork_mb']:.1f} | {r['fork_s']:.2f} s "
            f"| {r['restore_first_s']:.2f} / {r['restore_last_s']:.2f} s |"
        )


if __name__ == "__main__":
    main()
