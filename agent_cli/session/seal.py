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
from pathlib import Path

from agent_cli.core.files import open_private, private_dir

KEY_BYTES = 32


class SessionSeal:
    def __init__(self, key_path: Path) -> None:
        self.key_path = key_path
        self._key: bytes | None = None

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
        except OSError:
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
        except OSError:
            pass  # no place to keep it: this session's seal holds for this process only
        return key
