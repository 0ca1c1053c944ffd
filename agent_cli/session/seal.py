"""Which sessions this person recorded on this machine: a seal in each log's `session_start`.

A repository can ship `.agent/sessions/<id>/events.jsonl`; `--continue` (the session used last) and the
resume picker must not load such a log as the person's own history. Each session we start gets a seal:
an HMAC-SHA256 of its id and the workspace's real path under a key kept in the person's own config
folder (created 0600 on first use, outside any workspace). A session without a valid seal is passed by
when one is chosen for the person, and named in a warning when they ask for it by id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

from agent_cli.core.files import open_private, private_dir

KEY_BYTES = 32


class SessionSeal:
    def __init__(self, key_path: Path) -> None:
        self.key_path = key_path
        self._key: bytes | None = None
        self.problem = ""  # why the key could not be read or kept (the seals then hold for this process only)

    def has_key(self) -> bool:
        return self._load(create=False) is not None

    def seal(self, session_id: str, workspace: Path) -> str:
        """The seal of a session we start now (the key is made on first use)."""
        return self._mac(self._load(create=True) or b"", session_id, workspace)

    def verify(self, session_id: str, workspace: Path, seal: object) -> bool:
        """Whether `seal` is the one we would have written for this session here."""
        key = self._load(create=False)
        if key is None or not isinstance(seal, str):
            return False
        return hmac.compare_digest(seal, self._mac(key, session_id, workspace))

    @staticmethod
    def _mac(key: bytes, session_id: str, workspace: Path) -> str:
        message = f"{session_id}\0{os.path.realpath(workspace)}".encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    def _load(self, *, create: bool) -> bytes | None:
        if self._key is not None:
            return self._key
        try:
            key = self.key_path.read_bytes()
        except FileNotFoundError:
            key = b""
        except OSError as exc:
            self.problem = f"cannot read the session key {self.key_path}: {exc.strerror or exc}"
            return None
        if len(key) != KEY_BYTES and create:
            key = self._create(replace=bool(key))
        self._key = key if len(key) == KEY_BYTES else None
        return self._key

    def _create(self, *, replace: bool) -> bytes:
        """A new key on disk. Several agents may start at once on a fresh machine (a batch's
        workers): the key is written whole to a file of its own, then linked into place, so the
        first one made is the one every process uses. `replace`: the file there is broken."""
        key = secrets.token_bytes(KEY_BYTES)
        try:
            private_dir(self.key_path.parent)
            if replace:
                with open(open_private(self.key_path, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                    fh.write(key)
                return key
            draft = self.key_path.with_name(f".{self.key_path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            with open(open_private(draft, os.O_WRONLY | os.O_EXCL), "wb") as fh:
                fh.write(key)
            try:
                os.link(draft, self.key_path)
            except FileExistsError:
                key = self.key_path.read_bytes()  # another process was first: its key, whole
            finally:
                draft.unlink()
        except OSError as exc:  # no place to keep it: this session's seal holds for this process only
            self.problem = f"cannot keep the session key in {self.key_path}: {exc.strerror or exc}"
        return key


FIRST_LINE_BYTES = 1 << 20  # a session_start is far shorter; a log's first line longer is unreadable
UNREADABLE = "unreadable"  # the first line (the session_start that holds the seal) cannot be read
NOT_YOURS = "not yours"  # no valid seal under this person's key


def first_line(path: Path) -> bytes:
    """A log's first line, for its seal: OSError unless `path` is a regular file (not a link to one:
    a planted `events.jsonl` naming `/dev/zero` or a FIFO would hang `--continue` and `agent
    sessions`), ValueError when it is over FIRST_LINE_BYTES."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        line = fh.readline(FIRST_LINE_BYTES + 1)
    if len(line) > FIRST_LINE_BYTES:
        raise ValueError("the first line is too long")
    return line


def passed_over(passed: list[tuple[str, str]], seal: SessionSeal | None) -> str:
    """One line on the sessions `--continue` or `agent sessions` passed by, (id, reason) newest first,
    and why ('' for none)."""
    if not passed:
        return ""
    reasons = [reason for _, reason in passed]
    kinds = {UNREADABLE: "with an unreadable first line", NOT_YOURS: "not recorded by you on this machine"}
    if seal is not None and not seal.has_key():
        kinds[NOT_YOURS] += f": no session key at {seal.key_path}"
    counted = {kind: reasons.count(kind) for kind in kinds if kind in reasons}
    single = len(counted) == 1  # one reason: no need to count it again
    why = ", ".join(kinds[kind] if single else f"{n} {kinds[kind]}" for kind, n in counted.items())
    if len(passed) == 1:
        return f"1 session passed over ({why}); agent --resume {passed[0][0]} opens it anyway"
    return f"{len(passed)} sessions passed over ({why}); agent --resume ID opens one anyway"
