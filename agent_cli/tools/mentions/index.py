"""The workspace's files for `@` completion: listed once (`rg --files`, gitignore-aware, else our own
walk that reads .gitignore the same way), then matched per keystroke without touching the disk.

Matching is fuzzy: the query's characters in order anywhere in the path (`tuiapp` finds
`agent_cli/tui/app.py`), ranked by where they are found — the file name starting with the query,
then holding it, then the path holding it, then only in order — and shorter names and paths first.
One literal search over all paths joined (C speed) finds the exact matches; a fuzzy one runs only when
they are too few. When every match was seen, the next keystroke searches only those.
Directories are offered too (`src/`), for an `ls`.
"""

from __future__ import annotations

import bisect
import functools
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
        if narrow is not None and query.startswith(narrow[0]):  # every match is among the last ones
            tiers = {i: _tier("/" + paths[i].lower(), query) for i in narrow[1]}
            found = {i: t for i, t in tiers.items() if t is not None}
            complete = True
        else:
            found, complete = _scan(query, joined, starts, limit)
        ranked = sorted(found, key=lambda i: (found[i], *_shortness(paths[i])))
        with self._lock:
            if self._paths is paths:  # all matches known: the next keystroke only narrows these down
                self._complete = (query, sorted(found)) if complete else None
        return [paths[i] for i in ranked[:limit]]


LITERAL_CAP = 2_000  # occurrences of the query looked at, at most (a loose query has enough by then)
BEST_ENOUGH = 4  # x limit: that many file names starting with the query end the search
FUZZY_CAP = 200  # lines matched only in order, at most


def _shortness(path: str) -> tuple[int, int, str]:
    """Within a tier: the shorter file name first (`app.py` before `app_notes.md`), then path."""
    return len(path.rstrip("/").rsplit("/", 1)[-1]), len(path), path


@functools.lru_cache(maxsize=64)
def _fuzzy(query: str) -> re.Pattern[str]:
    """The query's characters in order on one line (possessive: a line that fails fails once)."""
    return re.compile(
        re.escape(query[0]) + "".join(f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in query[1:])
    )


def _tier(line: str, query: str) -> int | None:
    """How a line `/path` matches: 0 the query starts a file name (or a path segment it ends in), 1
    the file name holds it, 2 the path holds it, 3 its characters only in order; None when none."""
    best: int | None = None
    end = len(line) - 1 if line.endswith("/") else len(line)  # a directory's own trailing slash
    at = line.find(query)
    while at >= 0:
        tier = _where(line, at, at + len(query), end)
        best = tier if best is None else min(best, tier)
        at = line.find(query, at + 1)
    if best is not None:
        return best
    return 3 if _fuzzy(query).search(line) else None


def _where(text: str, at: int, after: int, end: int) -> int:
    """The tier of an occurrence text[at:after] in a line ending at `end` (see `_tier`)."""
    if text.find("/", after, end) >= 0:
        return 2
    return 0 if at == 0 or text[at - 1] in "/\n" else 1


def _scan(query: str, joined: str, starts: list[int], limit: int) -> tuple[dict[int, int], bool]:
    """{line: tier} over all paths, and whether every match was seen. One literal search finds the
    exact matches (each classified by where it falls); the fuzzy search runs only when they are
    fewer than `limit`."""
    found: dict[int, int] = {}
    complete = True
    size = len(query)
    names = 0  # lines whose file name starts with the query: the best there are
    for count, match in enumerate(re.finditer(re.escape(query), joined)):
        if count >= LITERAL_CAP or names >= limit * BEST_ENOUGH:
            complete = False
            break
        at = match.start()
        line = bisect.bisect_right(starts, at) - 1
        end = (starts[line + 1] if line + 1 < len(starts) else len(joined)) - 1  # the line's "\n"
        if joined[end - 1] == "/":
            end -= 1  # a directory's own trailing slash
        tier = _where(joined, at, at + size, end)
        names += tier == 0 and found.get(line) != 0
        found[line] = min(tier, found.get(line, 3))
    if len(found) >= limit:
        return found, complete
    fuzzy = 0
    for match in _fuzzy(query).finditer(joined):
        line = bisect.bisect_right(starts, match.start()) - 1
        if line not in found:
            found[line] = 3
            fuzzy += 1
            if fuzzy >= FUZZY_CAP:
                return found, False
    return found, complete
