"""A 10 MB bracketed paste: Textual's input parser against ours, and the time until the chip shows.

    .venv/bin/python bench/paste.py [--lines 120000] [--runs 3] [--no-tmux]

1. In one process: the paste (120,000 lines of 85 bytes, CR line ends as terminals send them),
   framed by ESC[200~ ... ESC[201~ and cut into 4,096-character reads as the driver reads it, is fed
   to Textual's `XTermParser` and to `FastPasteParser`; both must emit one identical Paste.
2. In tmux (skipped without it): `agent --script` in a private tmux server; `tmux load-buffer FILE;
   tmux paste-buffer -p` sends the file bracketed, and the pane is polled until the chip appears.
   Run once with our driver and once with Textual's (`TEXTUAL_DRIVER=...LinuxDriver`).
Prints a table; asserts nothing but that both parsers agree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual._xterm_parser import XTermParser

from agent_cli.tui.paste_parser import FastPasteParser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench._args import count  # noqa: E402

LINE = "0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefghij 0123456789 abcdefg\n"  # 85 B
READ = 4_096  # what LinuxDriver reads at a time
STOCK_DRIVER = "textual.drivers.linux_driver:LinuxDriver"
ROOT = Path(__file__).resolve().parent.parent


def parse_seconds(make: Callable[[], XTermParser], data: str) -> tuple[float, list[str]]:
    parser = make()
    chunks = [data[at : at + READ] for at in range(0, len(data), READ)]
    start = time.perf_counter()
    pasted = [e.text for chunk in chunks for e in parser.feed(chunk) if isinstance(e, events.Paste)]
    return time.perf_counter() - start, pasted


def in_process(text: str, runs: int) -> None:
    data = "\x1b[200~" + text.replace("\n", "\r") + "\x1b[201~"
    fast = [parse_seconds(FastPasteParser, data) for _ in range(runs)]
    stock_seconds, stock_pasted = parse_seconds(XTermParser, data)  # seconds each: once is enough
    assert fast[0][1] == stock_pasted and len(stock_pasted) == 1, "the parsers disagree"
    best = min(seconds for seconds, _ in fast)
    print("| parser (10 MB in 4 kB reads) | seconds |\n|---|---:|")
    print(f"| Textual's XTermParser | {stock_seconds:.2f} |")
    print(f"| FastPasteParser, best of {runs} | {best:.4f} |")
    print(f"| ratio | {stock_seconds / best:,.0f}x |\n")


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True).stdout


def _wait(socket: str, name: str, needle: str, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if needle in _tmux(socket, "capture-pane", "-t", name, "-p"):
            return time.monotonic()
        time.sleep(0.02)
    raise SystemExit(f"{needle!r} never appeared in {timeout:.0f} s")


def chip_seconds(paste_file: Path, workspace: Path, script: Path, stock: bool) -> float:
    socket, name = f"paste-bench-{uuid.uuid4().hex[:8]}", "bench"
    driver = f"TEXTUAL_DRIVER={STOCK_DRIVER} " if stock else ""
    command = (
        f"cd {workspace} && {driver}XDG_CONFIG_HOME={workspace}/.cfg PYTHONPATH={ROOT} "
        f"{sys.executable} -m agent_cli.cli --script {script}"
    )
    _tmux(socket, "new-session", "-d", "-s", name, "-x", "110", "-y", "34", command)
    try:
        _wait(socket, name, "Ask anything", 60)
        _wait(socket, name, "/ 180k (", 60)  # the backend loaded: nothing else competes for the CPU
        _tmux(socket, "load-buffer", "-b", "paste", str(paste_file))
        start = time.monotonic()
        _tmux(socket, "paste-buffer", "-p", "-b", "paste", "-t", name)
        return _wait(socket, name, "[Pasted text: ", 300) - start
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def in_tmux(text: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
        paste_file = Path(tmp) / "paste.txt"
        paste_file.write_text(text)
        script = Path(tmp) / "script.yaml"
        script.write_text('responses:\n  - text: "ok"\n')
        fast = [chip_seconds(paste_file, workspace, script, stock=False) for _ in range(runs)]
        stock = chip_seconds(paste_file, workspace, script, stock=True)
    print("| paste → chip on screen, in tmux | seconds |\n|---|---:|")
    print(f"| Textual's LinuxDriver | {stock:.2f} |")
    print(
        f"| FastPasteDriver, median of {runs} ({', '.join(f'{s:.2f}' for s in fast)}) | {statistics.median(fast):.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=count, default=120_000)
    parser.add_argument("--runs", type=count, default=3)
    parser.add_argument("--no-tmux", action="store_true")
    args = parser.parse_args()
    text = LINE * args.lines
    print(f"paste: {len(text.encode()):,} bytes, {args.lines:,} lines; load {os.getloadavg()[0]:.1f}\n")
    in_process(text, args.runs)
    if not args.no_tmux and shutil.which("tmux"):
        in_tmux(text, args.runs)


if __name__ == "__main__":
    main()
