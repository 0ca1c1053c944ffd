"""The workspace's files for `@` completion: listed once (`rg --files`, gitignore-aware, else our own
walk that reads .gitignore the same way), then matched per keystroke without touching the disk.

Matching is fuzzy: the query's characters in order anywhere in the path (`tuiapp` finds
`agent_cli/tui/app.py`), ranked by where they are found — the file name starting with the query,
then holding it, then the path holding it, then only in order — and shorter paths first. Each tier
is one regular expression over all paths joined (C speed), and stops once it has enough.
Directories are offered too (`src/`), for an `ls`.
"""

from __future__ import annotations

import bisect
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agent_cli.tools.fs import walk
from agent_cli.tools.grep import find_rg

LIST_TIMEOUT = 60.0  # seconds for `rg --files` on a huge tree
MAX_AGE = 15.0  # seconds before a query starts a fresh listing in the background


class FileIndex:
    def __init__(
        self,
        workspace: Path,
        *,
        finder: Callable[[], str | None] = find_rg,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workspace = Path(workspace)
        self._finder = finder
        self._clock = clock
        self._lock = threading.Lock()
        self._paths: list[str] = []
        self._joined = ""
        self._starts: list[int] = []  # where each path begins in `_joined`
        self._complete: tuple[str, list[int]] | None = None  # a query whose every match is known
        self.built_at: float | None = None
        self._building: threading.Thread | None = None

    # -- listing ---------------------------------------------------------------------------------
    def build(self) -> int:
        """List the workspace's files and directories now (blocking); how many entries."""
        files = self._list_rg()
        if files is None:  # no ripgrep here, or it failed: our own walk reads .gitignore the same way
            files = self._list_walk()
        directories = {f[: i + 1] for f in files for i, c in enumerate(f) if c == "/"}
        paths = sorted(set(files) | directories, key=lambda p: (p.count("/") - p.endswith("/"), p))
        lines = ["/" + p.lower() for p in paths]  # a leading "/": a file name always follows one
        starts, at = [], 0
        for line in lines:
            starts.append(at)
            at += len(line) + 1
        with self._lock:
            self._paths, self._starts, self._complete = paths, starts, None
            self._joined = "\n".join(lines) + "\n"
            self.built_at = self._clock()
        return len(paths)

    def _list_rg(self) -> list[str] | None:
        rg = self._finder()
        if rg is None:
            return None
        command = [rg, "--files", "--hidden", "--no-require-git", "--glob", "!.git", "--glob", "!.agent"]
        try:
            done = subprocess.run(
                command, cwd=self.workspace, capture_output=True, timeout=LIST_TIMEOUT, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode not in (0, 1):  # 1: no files at all
            return None
        lines = (line.removeprefix("./") for line in done.stdout.decode("utf-8", "replace").splitlines())
        return [line for line in lines if line and not line.startswith((".git/", ".agent/"))]

    def _list_walk(self) -> list[str]:
        root = self.workspace.absolute()
        return [entry.path.relative_to(root).as_posix() for entry in walk(root, root)]

    def refresh(self) -> None:
        """Start a fresh listing in the background unless one is running (or it is fresh)."""
        if self.built_at is not None and self._clock() - self.built_at < MAX_AGE:
            return
        if self._building is not None and self._building.is_alive():
            return
        self._building = threading.Thread(target=self.build, name="file-index", daemon=True)
        self._building.start()

    @property
    def ready(self) -> bool:
        return self.built_at is not None

    # -- matching --------------------------------------------------------------------------------
    def query(self, text: str, limit: int = 50) -> list[str]:
        """The best `limit` paths for `text` (see the module's doc); built first if never built."""
        if self.built_at is None:
            building = self._building
            if building is not None and building.is_alive():
                building.join()
            else:
                self.build()
        with self._lock:
            paths, joined, starts, narrow = self._paths, self._joined, self._starts, self._complete
        query = text.lower()
        if not query:
            return paths[:limit]
        tiers = _tiers(query)
        if narrow is not None and query.startswith(narrow[0]):  # every match is among the last ones
            lines = {i: "/" + paths[i].lower() for i in narrow[1]}
            ranked = [[i for i, line in lines.items() if tier.search(line)] for tier in tiers]
            complete = True
        else:
            ranked, complete = _scan(tiers, joined, starts, limit * TIER_SCAN)
        chosen: list[int] = []
        seen: set[int] = set()
        for found in ranked:
            fresh = [i for i in found if i not in seen]
            seen.update(fresh)
            chosen += sorted(fresh, key=lambda i: (len(paths[i]), paths[i]))
        with self._lock:
            if self._paths is paths:  # a full scan: the next keystroke only narrows these down
                self._complete = (query, sorted(seen)) if complete else None
        return [paths[i] for i in chosen[:limit]]


TIER_SCAN = 4  # matches gathered per tier before ranking them by length (paths are listed shallow first)


def _tiers(query: str) -> list[re.Pattern[str]]:
    """Over lines `/path`: the file name starts with the query; holds it; the path holds it; its
    characters in order (possessive, so a line that fails is not tried again every other way)."""
    q = re.escape(query)
    fuzzy = re.escape(query[0]) + "".join(f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in query[1:])
    return [
        re.compile(f"/{q}[^/\\n]*/?$", re.MULTILINE),
        re.compile(f"{q}[^/\\n]*/?$", re.MULTILINE),
        re.compile(q),
        re.compile(fuzzy),
    ]


def _scan(
    tiers: list[re.Pattern[str]], joined: str, starts: list[int], cap: int
) -> tuple[list[list[int]], bool]:
    """The lines each tier matches, best tier first, and whether every match was seen. A tier stops
    at `cap` matches (enough to rank) and the looser ones are not run; when even the fuzzy one
    reached the end, every match is known, and the next keystroke searches only those."""
    out: list[list[int]] = []
    total = 0
    for tier in tiers:
        found: list[int] = []
        last = -1
        for match in tier.finditer(joined):
            index = bisect.bisect_right(starts, match.start()) - 1
            if index != last:
                found.append(index)
                last = index
                if len(found) >= cap:
                    out.append(found)
                    return out, False
        out.append(found)
        total += len(found)
        if total >= cap:
            return out, False
    return out, True
