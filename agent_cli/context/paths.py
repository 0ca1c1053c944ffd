"""One name per file, however a call spells its path.

The predictor (context/reuse.py), the pictures (context/working_set.py), the ghosts of cleared reads
(context/ghosts.py) and the replay's edit probe (replay/fidelity.py) tie a read to the edit of the
same file by its path. A model on Windows writes `C:\\repo\\src\\x.go` in one call and `C:/repo/src/x.go`
or `c:\\repo\\src\\x.go` in the next; anyone may write `./src/x.go` or `src//x.go`. Left as written,
those are different files: the read of a file being edited looks unedited and is priced as such, and
an edit finds no cleared read to bring back. `file_key` gives them one spelling: `/` separators, `.`,
`..` and doubled separators resolved, a drive letter in upper case. The rest of the case is kept (a
POSIX file system tells `A.go` from `a.go`). A relative path stays relative: what it is relative to
is the tool's business, not the view's.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

_DRIVE = re.compile(r"[A-Za-z]:")


def file_key(path: str) -> str:
    """The one spelling of `path` ("" for none)."""
    if not path:
        return ""
    slashed = path.replace("\\", "/")
    if _DRIVE.match(slashed):
        slashed = slashed[0].upper() + slashed[1:]
    normal = posixpath.normpath(slashed)
    return "" if normal == "." else normal


def path_of(tool_input: Mapping[str, object]) -> str:
    """The file a call names (`file_path`, or `path`), as `file_key` spells it; "" for none."""
    value = tool_input.get("file_path") or tool_input.get("path") or ""
    return file_key(value) if isinstance(value, str) else ""
