"""Does the policy see one file however a session spells its path? A Windows copy of each session.

    .venv/bin/python bench/spellings.py [--dir ../shared/transcripts] [--every 7] [--seed 5] [--keep DIR]

None of the shared sessions ran on Windows; some sessions that judge the policy did. For each long
session this writes two copies with every path under the session's own directory moved to
`C:\\Users\\dev\\Work\\...`: **back**, every call writing backslashes (tool outputs too), and
**mixed**, the calls spelling the same paths three ways (60% `C:\\...`, 25% `C:/...`, 15% `c:\\...`;
`--seed`). The two copies are the same session, so the predictor (context/reuse.py) must give every
call the same class and chance in both: **differ** counts the calls where it does not, at every
`--every`th request. Then both replay under the default policy: cost against Claude Code's bill,
blind edits, and the edits the probe finds (replay/fidelity.py). The copies' token counts differ a
little (a `\\` and a `/` are not the same token), so a small cost difference is not a failure; a
class that changes is.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.context.reuse import predict  # noqa: E402
from agent_cli.replay.driver import load_transcript, replay  # noqa: E402
from bench._args import count  # noqa: E402

PATH_KEYS = ("file_path", "path", "notebook_path")
NEW_ROOT = "Users/dev/Work"
LONG_SESSION_REQUESTS = 50


def session_root(lines: list[str]) -> str:
    """The directory the session ran in, one level up (its `cwd` field)."""
    for line in lines:
        try:
            cwd = json.loads(line).get("cwd")
        except (ValueError, AttributeError):
            continue
        if isinstance(cwd, str) and cwd.startswith("/"):
            return cwd.rstrip("/").rsplit("/", 1)[0] or "/"
    return ""


def windows(path: str, root: str, style: str) -> str:
    if not root or not path.startswith(root + "/"):
        return path
    rest = NEW_ROOT + path[len(root) :]
    if style == "forward":
        return "C:/" + rest
    return ("c:\\" if style == "lower" else "C:\\") + rest.replace("/", "\\")


def rewrite(value: Any, root: str, style: Callable[[], str]) -> Any:
    """`value` (a transcript line's JSON) with its paths spelled the Windows way."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in PATH_KEYS and isinstance(item, str):
                out[key] = windows(item, root, style())
            elif key == "cwd" and isinstance(item, str):
                out[key] = windows(item, root, "back")
            else:
                out[key] = rewrite(item, root, style)
        return out
    if isinstance(value, list):
        return [rewrite(item, root, style) for item in value]
    if isinstance(value, str) and root and root in value:
        return re.sub(re.escape(root) + r"/[^\s\"'`:,)]*", lambda m: windows(m.group(0), root, "back"), value)
    return value


def copy(source: Path, target: Path, mixed: bool, seed: int) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()
    root = session_root(lines)
    rng = random.Random(seed)

    def style() -> str:
        if not mixed:
            return "back"
        x = rng.random()
        return "back" if x < 0.60 else "forward" if x < 0.85 else "lower"

    with target.open("w", encoding="utf-8") as out:
        for line in lines:
            try:
                data = json.loads(line)
            except ValueError:
                out.write(line + "\n")
                continue
            out.write(json.dumps(rewrite(data, root, style)) + "\n")


def differ(a: Path, b: Path, every: int) -> tuple[int, int]:
    """(calls whose predicted class or chance differs between the copies, calls compared)."""
    one, two = load_transcript(a), load_transcript(b)
    changed = total = 0
    for request in one.requests[::every]:
        left = predict(one.messages[: request.position])
        right = predict(two.messages[: request.position])
        for call, guess in left.items():
            total += 1
            other = right.get(call)
            if other is None or (other.cls, round(other.p, 9)) != (guess.cls, round(guess.p, 9)):
                changed += 1
    return changed, total


def row(path: Path) -> str:
    result = replay(path, policy="default")
    ref = result.reference
    ratio = result.fidelity.adjusted_weighted_input / ref.weighted_input if ref else 0.0
    f = result.fidelity
    return f"{ratio:.3f}x, blind {f.blind}/{f.visible_unmanaged}, {f.edits} edits"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT.parent / "shared" / "transcripts")
    parser.add_argument("--every", type=count, default=7)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the copies to DIR/back and DIR/mixed and keep them")
    args = parser.parse_args()
    files = sorted(args.dir.glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no transcripts in {args.dir}")
    print("| session | differ | back (adjusted, blind, edits) | mixed |")
    print("|---|---:|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp)  # --keep: the copies stay (bench/loo.py --dir DIR/back)
        for kind in ("back", "mixed"):
            (base / kind).mkdir(parents=True, exist_ok=True)
        for source in files:
            if len(load_transcript(source).requests) < LONG_SESSION_REQUESTS:
                continue
            back, mixed = base / "back" / source.name, base / "mixed" / source.name
            copy(source, back, False, args.seed)
            copy(source, mixed, True, args.seed)
            changed, total = differ(back, mixed, max(1, args.every))
            print(f"| {source.name[:8]} | {changed}/{total} | {row(back)} | {row(mixed)} |", flush=True)


if __name__ == "__main__":
    main()
